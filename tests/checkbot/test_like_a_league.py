"""A bot cannot tell check-bot from a league night by what it is sent (issue 19): a bot that records
every line it gets plays under check-bot and in a small league night; game ids, seat names, the
hello, the clocks, the rules and every message's fields are alike (beyond the deal itself). The
one deliberate difference: the probe that checks a bot ignores unknown fields sends one."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from referee.cli import main
from referee.league.night import _PLANNED_RE

ROOT = Path(__file__).resolve().parents[2]
RECORDER = ROOT / "tests" / "bots" / "recorder_bot.py"
INSTANT = ROOT / "tests" / "bots" / "instant_bot.py"
PY = sys.executable
#: what the probe "quiet until its turn" adds on purpose (a bot must ignore fields it does not know)
PROBE_FIELD = "x_future_field"
#: words that would say "check-bot" (or a test harness) to a bot reading its messages
TELLS = re.compile(r"check|probe|instant|candidate|pretend|^you$", re.IGNORECASE)


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _shape(value: Any) -> Any:
    """The field names of a message, nested (values left out)."""
    if isinstance(value, dict):
        return tuple(sorted((k, _shape(v)) for k, v in value.items() if k != PROBE_FIELD))
    return type(value).__name__


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def test_check_bot_looks_like_a_league_night(tmp_path: Path) -> None:
    # the records go where the bot's own uid may write (a root referee runs "none" bots under a uid
    # of their own; pytest's folders are root's alone and the bot sees them read-only)
    rec_dir = Path(tempfile.mkdtemp(prefix="referee-recorder-"))
    os.chmod(rec_dir, 0o1777)
    for name in ("league.jsonl", "check.jsonl"):  # each process may run under a uid of its own
        (rec_dir / name).touch()
        os.chmod(rec_dir / name, 0o666)
    try:
        _compare(tmp_path, rec_dir / "league.jsonl", rec_dir / "check.jsonl")
    finally:
        shutil.rmtree(rec_dir, ignore_errors=True)


def _compare(tmp_path: Path, league_rec: Path, check_rec: Path) -> None:
    cfg = tmp_path / "night.toml"
    cfg.write_text(
        'seed = 7\nout = "out"\nconcurrency = 1\n[limits]\nsandbox = "none"\n[clock]\nmove_ms = 1000\n'
        f'[[bots]]\nname = "recorder_bot"\ncommand = ["{PY}", "{RECORDER}"]\nenv = {{ BOT_RECORD = "{league_rec}" }}\n'
        f'[[bots]]\nname = "random-01"\ncommand = ["{PY}", "{INSTANT}"]\n'
        f'[[bots]]\nname = "random-02"\ncommand = ["{PY}", "{INSTANT}"]\n'
        '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 2\n'
    )
    run = subprocess.run([PY, "-m", "referee", "run", str(cfg), "--quiet"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    command = f"env BOT_RECORD={check_rec} {PY} {RECORDER}"
    assert main(["check-bot", "--variant", "kwartet", "--sandbox", "none", "--grace-ms", "200", "--", command]) == 0
    league, check = _records(league_rec), _records(check_rec)
    assert sum("process" in r for r in check) >= 3  # the probes', the session games', per-game mode's...

    def by_type(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for r in records:
            if "type" in r:
                out.setdefault(r["type"], []).append(r)
        return out

    # (check-bot's per-game mode also plays authors and chickens: their messages are compared by id and words)
    lg = by_type(league)
    ck = by_type([r for r in check if not r.get("game") or r["game"].startswith("kwartet-")])
    # the hello: the same fields, the same referee version; the name is the bot's (its script's)
    assert {_shape(m) for m in ck["hello"]} == {_shape(m) for m in lg["hello"]}
    assert {m["referee"] for m in ck["hello"]} == {m["referee"] for m in lg["hello"]}
    # (self-play's copies are numbered as one author's league entries: recorder_bot-02)
    assert {m["name"] for m in ck["hello"]} == {"recorder_bot", "recorder_bot-02", "recorder_bot-03"}
    # every message type a league sent has the same fields under check-bot (start, event, turn, end, bye)
    for kind in ("start", "turn", "end", "bye"):
        assert {_shape(m) for m in ck[kind]} <= {_shape(m) for m in lg[kind]} | {
            _shape(m)
            for m in ck[kind]
            if kind == "end" and m.get("reason") == "aborted"  # the probes' hand
        }, kind
    for kind in by_type(check):
        assert kind in ("hello", "start", "event", "turn", "end", "bye", "error"), kind
    # errors (the probes', and a league's to a faulty bot) are the protocol's one shape
    assert {tuple(m) for m in ck.get("error", [])} <= {("type", "fault", "detail", "game", "id")}
    # game ids are a league's ids; the start's clock and rules are a league's for the same settings
    for m in check:
        if "game" in m:
            assert _PLANNED_RE.match(m["game"]), m["game"]
    assert {json.dumps(m["clock"]) for m in ck["start"]} == {json.dumps(m["clock"]) for m in lg["start"]}
    three = [m for m in ck["start"] if len(m["seats"]) == 3]
    assert {json.dumps(m["rules"]) for m in three} == {json.dumps(m["rules"]) for m in lg["start"]}
    assert {json.dumps(m["clock"]) for m in ck["turn"]} == {json.dumps(m["clock"]) for m in lg["turn"]}
    # no word anywhere (seat names, details, keys) that says check-bot
    for m in check:
        tells = [s for s in _strings({k: v for k, v in m.items() if k != PROBE_FIELD}) if TELLS.search(s)]
        assert not tells, (tells, m)
    # the one deliberate difference, in the probes' process only
    marked = [m for m in check if PROBE_FIELD in m]
    assert marked and all(m["game"] == marked[0]["game"] for m in marked)


def test_the_bot_is_named_after_its_program() -> None:
    from referee.checkbot import default_name

    assert default_name([PY, "bots/tracker_bot.py"]) == "tracker_bot"
    assert default_name(["./c_bot"]) == "c_bot"
    assert default_name("cd mybot && ./run.sh") == "run"
    assert default_name(["java", "-cp", "classes", "JBot"]) == "JBot"
    assert default_name(["node", "--stack-size", "999", "x/js_bot.js"]) == "js_bot"
