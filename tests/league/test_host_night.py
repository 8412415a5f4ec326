"""A competition host's night: a C bot built with cc, a build that fails and a program that is
missing, under ``broken_bot = "forfeit"``; builds cached across resume, growth and ladder; the
settings a played night may change; a viewer page for every game."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from referee.league.ledger import Ledger

from .conftest import REPO, bots_toml, cli, referee

C_BOT = REPO / "sample_bots" / "c_bot.c"
BUILD = "echo built >> builds.log; cc -O2 -o c_bot c_bot.c"


def _config(path: Path, hands: list[str], cbot_extra: str = "", build: str = BUILD) -> Path:
    path.write_text(
        'seed = 11\nout = "out"\nconcurrency = 2\n[faults]\nbroken_bot = "forfeit"\n'
        + bots_toml(hands)
        + f'[[bots]]\nname = "cbot"\ncommand = "./c_bot"\ncwd = "cbot"\nbuild = "{build}"\n{cbot_extra}'
        + '[[bots]]\nname = "broken"\ncommand = "./broken.bin"\ncwd = "broken"\n'
        + 'build = "echo compiling broken.c; echo broken.c:3: syntax error >&2; exit 4"\n'
        + '[[bots]]\nname = "ghost"\ncommand = ["./no-such-bot"]\n'
        + '[[variants]]\nname = "kwartet"\nsizes = 3\n'
    )
    return path


def _builds(tmp_path: Path) -> int:
    return (tmp_path / "cbot" / "builds.log").read_text().count("built")


def _rows(out: Path) -> dict[str, list[str]]:
    with Ledger.in_dir(out, create=False) as ledger:
        return {r.game_id: r.bots for r in ledger.rows()}


def test_a_host_night_with_broken_entries_cached_builds_and_a_page_for_every_game(tmp_path: Path) -> None:
    (tmp_path / "cbot").mkdir()
    shutil.copy(C_BOT, tmp_path / "cbot" / "c_bot.c")
    (tmp_path / "broken").mkdir()
    cfg = _config(tmp_path / "night.toml", ["a"])
    out = tmp_path / "out"

    # 1. the night: the broken build and the missing program forfeit, the others play
    res = cli("run", str(cfg), "--quiet")
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    warnings = [ln for ln in res.stderr.splitlines() if ln.startswith("warning:")]
    assert any("bot 'broken': build command" in w and "exit status 4" in w and "forfeits" in w for w in warnings)
    assert "broken.c:3: syntax error" in res.stderr
    assert any("bot 'ghost'" in w and "not found" in w and "forfeits" in w for w in warnings)
    assert _builds(tmp_path) == 1
    rows = _rows(out)
    assert len(rows) == 4 * 3  # C(4, 3) tables, 3 rotations each
    st = json.loads((out / "standings.json").read_text())
    overall = {r["bot"]: r for r in st["scopes"]["overall"]["bots"]}
    assert overall["broken"]["forfeits"] == overall["broken"]["games"] == 9
    assert overall["ghost"]["forfeits"] == 9 and overall["cbot"]["forfeits"] == 0
    # every game has its viewer page, those at tables of the never-started bots too
    assert {p.name.removesuffix(".frames.js") for p in (out / "games").glob("*.frames.js")} == set(rows)
    ghost_game = next(g for g, bots in rows.items() if "ghost" in bots and "broken" in bots)
    log = next((out / "games").glob(f"{ghost_game}.jsonl*"))
    view = cli("view", str(log), "-o", str(tmp_path / "page.html"))
    assert view.returncode == 0, view.stderr
    page = (tmp_path / "page.html").read_text()
    # (a version 2 page: its fault records; the page's script says "ghost faults (crash): ...")
    assert re.search(r'\["F",\d,"ghost","crash",', page) and re.search(r'\["F",\d,"broken","crash",', page)
    check = cli("verify", str(out))
    assert check.returncode == 0 and "verified: all 12 games" in check.stdout, check.stdout

    # 2. the night grows, and the C bot's limits change: no result changes, nothing is rebuilt
    _config(cfg, ["a", "b"], cbot_extra="limits = { build_seconds = 120 }\n")
    res = cli("run", str(cfg), "--quiet")
    assert res.returncode == 0, res.stderr
    assert "changed, which changes no result: bots.cbot.limits" in res.stderr
    assert _builds(tmp_path) == 1
    assert len(_rows(out)) == 10 * 3 and {g: b for g, b in _rows(out).items() if g in rows} == rows

    # 3. --rebuild builds again (here a ladder table's start)
    assert cli("ladder", str(cfg), "--tables", "1", "--quiet", "--rebuild").returncode == 0
    assert _builds(tmp_path) == 2

    # 4. a changed build command is accepted on the played night and runs before the next game
    _config(cfg, ["a", "b"], cbot_extra="limits = { build_seconds = 120 }\n", build=BUILD + " -Wall")
    res = cli("ladder", str(cfg), "--tables", "1", "--quiet")
    assert res.returncode == 0, res.stderr
    assert "changed, which changes no result: bots.cbot.build" in res.stderr and _builds(tmp_path) == 3

    # 5. a change that can change results is refused, saying what would have been accepted
    text = cfg.read_text().replace('command = "./c_bot"', 'command = "./c_bot --fast"')
    cfg.write_text(text.replace("build_seconds = 120", "build_seconds = 300"))
    res = cli("run", str(cfg), "--quiet")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    refused, accepted = res.stderr.split("(changed too, and accepted: ")
    assert "bots.cbot.command: was" in refused and "limits" not in refused
    assert accepted.startswith("bots.cbot.limits.build_seconds: was 120, now 300)")
    assert "so is changing a bot's `build` and `limits`" in res.stderr


def test_broken_entries_forfeit_on_a_cluster_too(tmp_path: Path) -> None:
    # the builds and the start check run on the workers: a failed build and a missing program forfeit
    # there as they do here, and a worker seats the given-up bots of its units' lineups only
    (tmp_path / "broken").mkdir()
    cfg = tmp_path / "night.toml"
    cfg.write_text(
        'seed = 11\nout = "out"\n[faults]\nbroken_bot = "forfeit"\n'
        + bots_toml(["a", "b"])
        + '[[bots]]\nname = "broken"\ncommand = "./broken.bin"\ncwd = "broken"\nbuild = "echo oops >&2; exit 3"\n'
        + '[[bots]]\nname = "ghost"\ncommand = ["./no-such-bot"]\n'
        + '[[variants]]\nname = "kwartet"\nsizes = 3\n'
    )
    res = referee("run", str(cfg), "--quiet", "--workers", "1", timeout=120)
    assert res.returncode == 0, res.stderr
    assert "bot 'broken': build command" in res.stderr and "oops" in res.stderr
    assert "bot 'ghost'" in res.stderr and "Traceback" not in res.stderr
    rows = _rows(tmp_path / "out")
    assert len(rows) == 12
    check = cli("verify", str(tmp_path / "out"))
    assert check.returncode == 0 and "verified: all 12 games" in check.stdout, check.stdout


def test_a_cluster_night_builds_once_too(tmp_path: Path) -> None:
    # workers keep the build cache as one machine does: a grown night, played on the workers again,
    # does not rebuild the C bot; --rebuild does; the records are OUT's where the workers see OUT
    (tmp_path / "cbot").mkdir()
    shutil.copy(C_BOT, tmp_path / "cbot" / "c_bot.c")
    (tmp_path / "broken").mkdir()
    cfg = _config(tmp_path / "night.toml", ["a"])
    first = referee("run", str(cfg), "--quiet", "--workers", "1", timeout=180)
    assert first.returncode == 0, first.stderr
    assert _builds(tmp_path) == 1 and (tmp_path / "out" / "builds.json").is_file()
    _config(tmp_path / "night.toml", ["a", "b"])  # a late entry: the night grows
    grown = referee("run", str(cfg), "--quiet", "--workers", "1", timeout=180)
    assert grown.returncode == 0, grown.stderr
    assert _builds(tmp_path) == 1  # cached: the C bot's folder and build command did not change
    _config(tmp_path / "night.toml", ["a", "b", "c"])  # grows again, this time with --rebuild
    again = referee("run", str(cfg), "--quiet", "--workers", "1", "--rebuild", timeout=180)
    assert again.returncode == 0, again.stderr
    assert _builds(tmp_path) == 2
    check = cli("verify", str(tmp_path / "out"))
    assert check.returncode == 0, check.stdout
