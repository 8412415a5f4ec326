"""`referee replay` proves a log: real logs from real bot processes verify; forged,
corrupt and randomly mutated ones are refused with one clear sentence, never a traceback."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.cli import main
from referee.runtime.replay import replay

from .helpers import BOTS, RANDOM_BOT

# the tests read the logs one module fixture makes: made once, on one worker
pytestmark = pytest.mark.xdist_group("replay-proof")

PY = sys.executable
RANDOM = f"{PY} {RANDOM_BOT}"
CRASH = f"{PY} {BOTS / 'crash_bot.py'}"
# the bot's environment is clean: BOT_THEN_LEGAL reaches it through env(1)
RETRYING = f"env BOT_THEN_LEGAL=1 {PY} {BOTS / 'illegal_bot.py'}"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Four real games: faults, retries, fallbacks, a chickens table, a match, a stock variant."""
    d = tmp_path_factory.mktemp("proof")
    stock = d / "stocky.json"
    stock.write_text(
        json.dumps(
            {
                "name": "stocky",
                "families": ["A", "B", "C", "D", "E", "F"],
                "members": ["1", "2", "3", "4"],
                "ask": "card",
                "miss": "asked",
                "stock": 6,
                "players": [2, 4],
            }
        )
    )
    games = {
        "ask4": [
            "kwartet",
            "--seed",
            "11",
            "--retries",
            "1",
            "--bot",
            f"a={RANDOM}",
            "--bot",
            f"b={CRASH}",
            "--bot",
            f"c={RANDOM}",
            "--bot",
            f"d={RETRYING}",
        ],
        "chickens": ["chickens", "--seed", "12", "--bot", f"a={RANDOM}", "--bot", f"b={CRASH}", "--bot", f"c={RANDOM}"],
        "match": [
            "authors",
            "--seed",
            "13",
            "--match",
            "fixed:2",
            "--bot",
            f"a={CRASH}",
            "--bot",
            f"b={RANDOM}",
            "--bot",
            f"c={RANDOM}",
        ],
        "stock": [str(stock), "--seed", "14", "--bot", f"a={RANDOM}", "--bot", f"b={RANDOM}", "--bot", f"c={RANDOM}"],
    }
    out = {}
    for name, args in games.items():
        assert main(["play", *args, "--game-id", name, "--log", str(d), "--grace-ms", "100"]) == 0
        out[name] = d / f"{name}.jsonl"
    return out


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def _write(tmp_path: Path, lines: list[str], name: str = "forged.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(line + "\n" for line in lines))
    return p


def _replay(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(["replay", "-q", str(path)])
    cap = capsys.readouterr()
    return rc, cap.out + cap.err


def test_real_logs_with_faults_retries_fallbacks_and_draws_verify(logs, capsys):
    recs = {k: [json.loads(x) for x in _lines(p)] for k, p in logs.items()}
    # the logs hold what the test is about
    assert any("retry" in r for r in recs["ask4"]) and any(r.get("act", {}).get("fallback") for r in recs["ask4"])
    assert sum(1 for r in recs["chickens"] if r.get("act", {}).get("fallback")) > 8
    # two fixed hands, then tie-break hands if the unseeded random bots tie
    hands = [r["hand"]["game"] for r in recs["match"] if "hand" in r]
    assert hands[:2] == ["match.h1", "match.h2"] and all(re.fullmatch(r"match\.h\d+", h) for h in hands), hands
    draws = [m for r in recs["stock"] if "out" in r for m in r["out"] if m.get("kind") == "draw"]
    assert any("card" in m for m in draws) and any("card" not in m for m in draws)
    for name, path in logs.items():
        rc, out = _replay(path, capsys)
        assert rc == 0 and "verified" in out, (name, out)
    report = replay(logs["ask4"])
    assert report.ok and report.actions > 20 and {f["fault"] for f in report.faults} == {"crash", "illegal"}


def test_a_forged_action_is_caught_and_a_log_without_out_records_is_refused(logs, tmp_path, capsys):
    lines = _lines(logs["ask4"])
    i = next(k for k, x in enumerate(lines) if '"act"' in x and '"fallback":false' in x and '"card"' in x)
    act = json.loads(lines[i])
    act["act"]["action"]["card"] = "AH" if act["act"]["action"]["card"] != "AH" else "AS"
    forged = lines[:i] + [json.dumps(act)] + lines[i + 1 :]
    rc, out = _replay(_write(tmp_path, forged), capsys)
    assert rc == 1 and re.search(r"mismatch: line \d+: ", out), out
    # ... and without the `out` lines (what the referee sent) the log proves nothing: refused
    rc, out = _replay(_write(tmp_path, [x for x in forged if '"out":[' not in x]), capsys)
    assert rc == 2 and "error:" in out and "no `out` records" in out, out


def test_fallback_actions_are_rederived_from_the_seeded_generator(logs, tmp_path, capsys):
    for name in ("ask4", "chickens", "match"):
        lines = _lines(logs[name])
        i = next(k for k, x in enumerate(lines) if '"fallback":true' in x)
        rec = json.loads(lines[i])
        action = rec["act"]["action"]
        if "target" in action:
            action["target"] = (action["target"] + 1) % 3
        else:
            action["card"] = "ace" if action["card"] != "ace" else "queen"
        rc, out = _replay(_write(tmp_path, lines[:i] + [json.dumps(rec)] + lines[i + 1 :]), capsys)
        assert rc == 1 and f"line {i + 1}: the fallback" in out and "seeded fallback generator" in out, (name, out)
    # a bot's own reply turned into a "fallback" for a seat that never faulted
    lines = _lines(logs["ask4"])
    i = next(k for k, x in enumerate(lines) if '"act":{"seat":0' in x)
    rc, out = _replay(
        _write(tmp_path, lines[:i] + [lines[i].replace('"fallback":false', '"fallback":true')] + lines[i + 1 :]), capsys
    )
    assert rc == 1 and "has no fault" in out, out


def _edit_out(lines: list[str], pred: Any, edit: Any) -> tuple[list[str], int]:
    for k, x in enumerate(lines):
        if '"out":[' not in x:
            continue
        rec = json.loads(x)
        for m in rec["out"]:
            if pred(m):
                edit(m)
                return lines[:k] + [json.dumps(rec)] + lines[k + 1 :], k + 1
    raise AssertionError("no such message")


@pytest.mark.parametrize(
    "log,pred,edit,words",
    [
        ("ask4", lambda m: m["type"] == "turn", lambda m: m["hand"].pop(), "turn to seat"),
        ("ask4", lambda m: m["type"] == "turn", lambda m: m["options"].reverse(), "options"),
        ("ask4", lambda m: m["type"] == "turn", lambda m: m.update(targets=m["targets"][:1]), "targets"),
        ("ask4", lambda m: m["type"] == "start", lambda m: m.update(dealer=(m["dealer"] + 1) % 4), "dealer"),
        ("ask4", lambda m: m["type"] == "event" and m["seq"] > 3, lambda m: m.update(seq=m["seq"] + 1), "seq"),
        (
            "ask4",
            lambda m: m["type"] == "event" and m["kind"] == "fault",
            lambda m: m.update(detail="nothing"),
            "fault event",
        ),
        (
            "ask4",
            lambda m: m["type"] == "error" and "corrected reply" not in m["detail"],
            lambda m: m.update(detail="x"),
            "error to seat",
        ),
        (
            "ask4",
            lambda m: m["type"] == "error" and "corrected reply" in m["detail"],
            lambda m: m.update(detail="x"),
            "error sent to seat",
        ),
        ("ask4", lambda m: m["type"] == "end", lambda m: m.update(forfeits=[]), "forfeits"),
        ("chickens", lambda m: m["type"] == "turn" and m["decide"] == "take", lambda m: m["centre"].pop(), "centre"),
        ("stock", lambda m: m.get("kind") == "draw" and "card" not in m, lambda m: m.update(card="A1"), "draw event"),
        ("stock", lambda m: m.get("kind") == "draw" and "card" in m, lambda m: m.pop("card"), "draw event"),
        ("match", lambda m: m["type"] == "start" and m["game"] == "match.h2", lambda m: m["hand"].pop(), "start"),
    ],
)
def test_every_message_sent_is_resimulated(logs, tmp_path, capsys, log, pred, edit, words):
    forged, line = _edit_out(_lines(logs[log]), pred, edit)
    rc, out = _replay(_write(tmp_path, forged), capsys)
    assert rc == 1 and f"line {line}: " in out and words in out and "differs from" in out, out


@pytest.mark.parametrize(
    "old,new,words",
    [
        ('"variant":"kwartet"', '"variant":"authors"', "header names variant 'authors'"),
        ('"protocol":1', '"protocol":2', "protocol version 2"),
        ('"players":4', '"players":3', "3 players but lists 4 seats"),
    ],
)
def test_header_fields_are_checked(logs, tmp_path, capsys, old, new, words):
    lines = _lines(logs["ask4"])
    rc, out = _replay(_write(tmp_path, [lines[0].replace(old, new, 1)] + lines[1:]), capsys)
    assert rc == 1 and "line 1: " in out and words in out, out


def test_an_illegal_recorded_move_is_one_sentence(logs, tmp_path, capsys):
    lines = _lines(logs["ask4"])
    i = next(k for k, x in enumerate(lines) if '"act":{"seat":0' in x and '"fallback":false' in x)
    forged = lines[i].replace('"target":', '"target":0,"x":', 1)  # asks itself
    rc, out = _replay(_write(tmp_path, lines[:i] + [forged] + lines[i + 1 :]), capsys)
    assert rc == 1 and re.search(rf"line {i + 1}: the recorded ask of seat 0 \(a\) is not legal: [a-z]", out), out


@pytest.mark.parametrize(
    "where,new,words",
    [
        (4, '{"act":5}', "malformed act record"),
        (4, '{"hand":5}', "malformed hand record"),
        (1, '{"hand":{"index":1}}', "missing required field `game`"),
        (-1, '{"footer":5}', "malformed footer record"),
        (0, None, "line 1: malformed header"),  # "seats":5
        (0, "", "line 1: malformed header"),  # "seats":[0,1,7]
        (2, "OUT5", "at `$.out[0]`"),
        (3, '{"what":1}', "not a known log record"),
    ],
)
def test_corrupt_logs_are_clear_errors(logs, tmp_path, capsys, where, new, words):
    lines = _lines(logs["ask4"])
    if where == 0:
        head = json.loads(lines[0])
        head["seats"] = 5 if new is None else [0, 1, 7]
        lines[0] = json.dumps(head)
    elif new == "OUT5":
        lines[where] = lines[where].replace('"out":[', '"out":[5,', 1)
    else:
        lines[where] = new
    rc, out = _replay(_write(tmp_path, lines), capsys)
    line = len(lines) if where == -1 else where + 1
    assert rc == 2 and out.startswith("error: ") and f"line {line}" in out and words in out, out
    assert "Traceback" not in out


# ----------------------------------------------------------------------------- random mutations

#: fields replay cannot prove: stderr tails, the referee version, commands, hello texts, each
#: seat's sandbox description, and the header's wall-clock date `started` (metadata; record
#: times `t` are relative to it)
_FREE = {"tail", "referee", "command", "hello", "sandbox", "started"}
#: measured times: replay checks their consistency (limits, bank, order, footer stats), within tolerances
_TIMES = {"t", "ms", "wall_ms", "think_ms"}


def _normal(lines: list[bytes], known: set[str], times: bool = False) -> list[Any] | None:
    """The log without its free fields (stderr tails, commands, fields the format
    does not have) and, unless ``times``, without its measured times and refused
    replies: what replay proves exactly. None if a line is not JSON."""
    out = []
    free = _FREE if times else _FREE | _TIMES
    for x in lines:
        try:
            rec = json.loads(x)
        except (ValueError, UnicodeDecodeError):
            return None
        if not times and isinstance(rec, dict) and ("in" in rec or "bad" in rec):
            continue
        out.append(_strip(rec, known, free))
    return out


def _strip(x: Any, known: set[str], free: set[str]) -> Any:
    if isinstance(x, dict):
        return {k: _strip(v, known, free) for k, v in x.items() if k not in free and k in known}
    if isinstance(x, list):
        return [_strip(v, known, free) for v in x]
    return x


def _keys(x: Any, into: set[str]) -> set[str]:
    if isinstance(x, dict):
        into.update(x)
        for v in x.values():
            _keys(v, into)
    elif isinstance(x, list):
        for v in x:
            _keys(v, into)
    return into


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_randomly_mutated_logs_never_crash_replay(logs, tmp_path_factory, data):
    name = data.draw(st.sampled_from(sorted(logs)))
    lines = logs[name].read_bytes().split(b"\n")[:-1]
    op = data.draw(st.sampled_from(["delete", "duplicate", "swap", "byte", "bytes"]))
    new = list(lines)
    i = j = data.draw(st.integers(0, len(lines) - 1))
    if op == "delete":
        del new[i]
    elif op == "duplicate":
        new.insert(i, lines[i])
    elif op == "swap":
        j = data.draw(st.integers(0, len(lines) - 1))
        new[i], new[j] = new[j], new[i]
    else:
        for _ in range(1 if op == "byte" else data.draw(st.integers(2, 5))):
            k = data.draw(st.integers(0, len(new) - 1))
            line = bytearray(new[k])
            pos = data.draw(st.integers(0, max(0, len(line) - 1)))
            line[pos : pos + 1] = bytes([data.draw(st.sampled_from(b'0123456789"{}[],:tfn -.x\\\x00\xff'))])
            new[k] = bytes(line)
    path = tmp_path_factory.mktemp("mut") / "m.jsonl"
    path.write_bytes(b"".join(x + b"\n" for x in new))
    import contextlib
    import io

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = main(["replay", "-q", str(path)])
    text = err.getvalue() + out.getvalue()
    assert "Traceback" not in text
    known = _keys([json.loads(x) for x in lines], set())
    same = _normal(new, known) == _normal(lines, known)
    # only times or refused replies changed: caught if inconsistent, else within tolerance
    timing_only = same and _normal(new, known, times=True) != _normal(lines, known, times=True)
    lenient = timing_only
    if op == "delete" and lines[i].startswith(b'{"t":') and b'"to":' in lines[i][:30]:
        # the log does not say when a faulted bot's pipe closed: the tail of its messages may be missing
        seat = json.loads(lines[i])["to"]
        lenient = lenient or any(b'"fault":{"seat":%d,' % seat in x for x in lines)
    if op == "swap" and all(b'"to":' in x[:30] and b'"out":[' in x for x in (new[i], new[j])):
        lenient = True  # what one seat was sent is ordered, writes to different seats need not be
    if same and not timing_only:
        assert rc in (0, 2), (op, i, text)
    elif not lenient:
        assert rc in (1, 2), (op, i, text)
    assert rc in (0, 1, 2)
    if rc == 2:
        assert err.getvalue().startswith("error: ") and "line" in err.getvalue() or "truncated" in err.getvalue(), text
    elif rc == 1:
        assert re.search(r"mismatch: line \d+: ", out.getvalue()), text
