"""A small competition host's night through every feature at once (issue 20's combination test).

Seven entries, each in its own folder: two random bots, a tracker, a C bot with a ``build`` step, a
bot that crashes now and then, a slow one and one whose ``hello`` is garbage; ``seed = "secret"``, a
balanced schedule, ``require_sandbox = true``, ``network = false``, ``broken_bot = "forfeit"``; the
night is played on a local Dask cluster, then verified; two late entries join and the night grows,
verified again; a ladder of two tables, verified again; the report says played = planned.
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path

from .conftest import REPO, cli, referee

# (its own local cluster, --workers 2: not the module cluster of test_cluster.py, so no xdist group)

BOTS = REPO / "tests" / "bots"


def _entry(root: Path, name: str, files: list[Path], text: str | None = None) -> Path:
    d = root / "entries" / name
    d.mkdir(parents=True)
    for f in files:
        shutil.copy(f, d / f.name)
    if text is not None:
        (d / "bot.py").write_text(text)
    return d


def _bot(name: str, folder: Path, command: str, extra: str = "") -> str:
    return f'[[bots]]\nname = "{name}"\ncommand = {command}\ncwd = "{folder}"\n{extra}'


def _config(root: Path, entries: list[str]) -> Path:
    cfg = root / "night.toml"
    body = textwrap.dedent(
        """
        name = "host-night"
        seed = "secret"
        out = "out"
        reuse = "session"

        [clock]
        move_ms = 2000

        [faults]
        broken_bot = "forfeit"

        [limits]
        require_sandbox = true
        network = false

        [schedule]
        kind = "balanced"
        seats_per_bot = 2

        [[variants]]
        name = "kwartet"
        sizes = 4
        deals = 1

        [[variants]]
        name = "chickens"
        sizes = 4
        deals = 1
        """
    )
    cfg.write_text(body + "\n" + "\n".join(entries))
    return cfg


def _sdk_env() -> str:
    return f'env = {{ PYTHONPATH = "{REPO}" }}\n'


def _verify(out: Path) -> dict:
    res = cli("verify", str(out), "--json")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return json.loads(res.stdout)


def test_a_small_hosts_night_through_every_feature(tmp_path: Path) -> None:
    py = sys.executable
    sample = REPO / "sample_bots"
    r1 = _entry(tmp_path, "r1", [sample / "random_bot.py"])
    r2 = _entry(tmp_path, "r2", [sample / "random_bot.py"])
    tr = _entry(tmp_path, "tracker", [sample / "tracker_bot.py"])
    cb = _entry(tmp_path, "cbot", [sample / "c_bot.c"])
    crashy = _entry(tmp_path, "crashy", [BOTS / "crash_bot.py", BOTS / "botlib.py"])
    slow = _entry(tmp_path, "slow", [BOTS / "slow_bot.py", BOTS / "botlib.py"])
    broken = _entry(
        tmp_path,
        "broken",
        [],
        text="import sys\nsys.stdin.readline()\nprint('hello?? not json', flush=True)\nsys.stdin.read()\n",
    )
    entries = [
        _bot("r1", r1, f'["{py}", "random_bot.py"]', _sdk_env()),
        _bot("r2", r2, f'["{py}", "random_bot.py"]', _sdk_env()),
        _bot("tracker", tr, f'["{py}", "tracker_bot.py"]', _sdk_env()),
        _bot("cbot", cb, '["./c_bot"]', 'build = "cc -O2 -o c_bot c_bot.c"\n'),
        _bot("crashy", crashy, f'["{py}", "crash_bot.py"]', 'env = { BOT_FAULT_AT = "3" }\n'),
        _bot("slow", slow, f'["{py}", "slow_bot.py"]', 'env = { BOT_DELAY_MS = "300", BOT_SLOW_TURNS = "1" }\n'),
        _bot("broken", broken, f'["{py}", "bot.py"]'),
    ]
    cfg = _config(tmp_path, entries)
    out = tmp_path / "out"

    plan = cli("plan", str(cfg))
    assert plan.returncode == 0 and "Traceback" not in plan.stderr, plan.stderr
    run = referee("run", str(cfg), "--workers", "2", timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    first = _verify(out)
    assert first["ok"] and first["verified"] == first["rows"] == first["planned"] > 0, first

    # two late entries: the night grows, and verify, the report and the plan agree on what it holds
    r3 = _entry(tmp_path, "r3", [sample / "random_bot.py"])
    t2 = _entry(tmp_path, "tracker2", [sample / "tracker_bot.py"])
    entries += [
        _bot("r3", r3, f'["{py}", "random_bot.py"]', _sdk_env()),
        _bot("tracker2", t2, f'["{py}", "tracker_bot.py"]', _sdk_env()),
    ]
    cfg = _config(tmp_path, entries)
    grown = referee("run", str(cfg), "--workers", "2", timeout=600)
    assert grown.returncode == 0, grown.stdout[-3000:] + grown.stderr[-3000:]
    assert "2 bots added" in grown.stdout + grown.stderr
    second = _verify(out)
    assert second["ok"] and second["verified"] == second["rows"] == second["planned"] > first["planned"], second
    plan = cli("plan", str(cfg))
    assert plan.returncode == 0 and "Traceback" not in plan.stderr, plan.stderr

    # a ladder of two tables in the same folder
    ladder = cli("ladder", str(cfg), "--tables", "2")
    assert ladder.returncode == 0, ladder.stdout[-3000:] + ladder.stderr[-3000:]
    third = _verify(out)
    assert third["ok"] and third["verified"] == third["rows"], third
    # the ladder's games are checked against its own records; the night's plan is unchanged
    assert third["planned"] == second["planned"] and third["ladder"] > 0, third
    assert third["rows"] == third["planned"] + third["ladder"], third

    # the report: played = planned, the seed revealed, the broken entry's games have viewer pages
    rep = cli("report", str(out))
    assert rep.returncode == 0, rep.stderr
    html = (out / "report.html").read_text()
    planned = third["planned"]
    assert f"{planned} played of {planned} planned" in html and "Complete" in html, html[:3000]
    standings = json.loads((out / "standings.json").read_text())
    assert isinstance(standings["seed"], int)  # every planned game played: the secret is revealed
    # a viewer page for every game, the broken entry's tables included
    games = {p.name.split(".")[0] for p in (out / "games").glob("*.jsonl*")}
    pages = {p.name.removesuffix(".frames.js") for p in (out / "games").glob("*.frames.js")}
    assert games and games == pages
    # the broken entry forfeited every game it was seated at; the slow and crashing ones played
    overall = {r["bot"]: r for r in standings["scopes"]["overall"]["bots"]}
    assert overall["broken"]["forfeits"] == overall["broken"]["games"] > 0
    assert overall["cbot"]["forfeits"] == 0 and overall["slow"]["games"] > 0 and overall["crashy"]["games"] > 0
