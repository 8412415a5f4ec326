"""``referee ladder``: tables chosen one at a time, the config re-read between tables, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from referee.cli import main
from referee.league.ladder import open_ladder, play_ladder
from referee.league.ledger import Ledger
from referee.view.night import write_outputs

from .conftest import REFEREE, REPO, cli, processes_with

INSTANT = REPO / "tests" / "bots" / "instant_bot.py"


def _config(path: Path, names: list[str], tag: str = "") -> Path:
    extra = f', "{tag}"' if tag else ""
    bots = "".join(
        f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{INSTANT}"{extra}]\nenv = {{ BOT_SEED = "{ord(n)}" }}\n'
        for n in names
    )
    # reuse = "table": 3 bot processes a table instead of 9 (one deal in 3 rotations, which session
    # mode plays with fresh processes); the tables, the lineups and the standings are checked here
    path.write_text(
        f'seed = 9\nout = "out"\nreuse = "table"\n[clock]\nmove_ms = 5000\n{bots}'
        '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'
    )
    return path


def _ids(out: Path) -> list[str]:
    with Ledger.in_dir(out, create=False) as ledger:
        return [r.game_id for r in ledger.rows()]


def test_ladder_plays_tables_and_takes_in_a_bot_added_between_them(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from referee.league import preflight

    checked: list[list[str]] = []
    real_check = preflight.start_check

    async def start_check(entrants, **kw):  # the real start check, its bots noted
        checked.append([e.bot.name for e in entrants])
        return await real_check(entrants, **kw)

    monkeypatch.setattr(preflight, "start_check", start_check)
    cfg = _config(tmp_path / "ladder.toml", ["a", "b", "c"])
    assert main(["run", str(cfg), "--quiet"]) == 0  # a planned night first: the ladder goes on from it
    out = tmp_path / "out"
    planned = _ids(out)
    tables = []

    def after(lt, st) -> None:
        tables.append((lt.table.key, [ladder.league.bots[i].name for i in lt.table.lineup], st["games"]))
        if len(tables) == 1:
            _config(cfg, ["a", "b", "c", "d"])  # an entry arrives while the ladder runs

    ladder = open_ladder(str(cfg), outputs=write_outputs)
    with ladder.ledger:
        play_ladder(ladder, tables=2, after=after)
    err = capsys.readouterr().err
    assert "1 bot added: 9 new games (d)" in err
    # the run and the ladder's start check every bot; the new config's, only the new one
    assert checked == [["a", "b", "c"], ["a", "b", "c"], ["d"]]
    assert tables[0] == ("kwartet-3p-L000000", ["a", "b", "c"], 6)
    assert tables[1][0] == "kwartet-3p-L000001" and "d" in tables[1][1] and tables[1][2] == 9
    ids = _ids(out)
    assert set(planned) < set(ids) and len(ids) == 9
    assert sorted(i for i in ids if i not in planned) == sorted(
        f"kwartet-3p-L00000{t}-d000-r{r}" for t in (0, 1) for r in range(3)
    )
    st = json.loads((out / "standings.json").read_text())
    assert st["games"] == 9 and "d" in {r["bot"] for r in st["scopes"]["overall"]["bots"]}
    assert "d" in (out / "report.html").read_text()

    # the planned night sees the new bot's planned games, not the ladder's, as its own
    capsys.readouterr()
    assert main(["run", str(cfg)]) == 0
    assert "9 games played now, 12/12 in the ledger" in capsys.readouterr().out
    assert len(_ids(out)) == 12 + 6


def test_a_broken_config_keeps_the_ladder_going(tmp_path: Path, capsys) -> None:
    cfg = _config(tmp_path / "ladder.toml", ["a", "b", "c"])
    seen = []

    def after(lt, st) -> None:
        seen.append(lt.table.key)
        if len(seen) == 1:
            cfg.write_text(cfg.read_text().replace("seed = 9", "seed = 10"))

    ladder = open_ladder(str(cfg), outputs=write_outputs)
    with ladder.ledger:
        play_ladder(ladder, tables=2, after=after)
    err = capsys.readouterr().err
    assert err.count("warning: the config was changed") == 1 and "seed: was 9, now 10" in err
    assert seen == ["kwartet-3p-L000000", "kwartet-3p-L000001"]


def test_ctrl_c_stops_the_ladder_cleanly_and_it_resumes(tmp_path: Path) -> None:
    tag = f"ladder-{uuid.uuid4().hex}"
    cfg = _config(tmp_path / "ladder.toml", ["a", "b", "c"], tag=tag)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [*REFEREE, "ladder", str(cfg)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if "games in the ledger" in line:  # the first table is over
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted:" in err and "Traceback" not in err
    assert processes_with(tag) == []
    done = _ids(tmp_path / "out")
    assert len(done) >= 3
    res = cli("ladder", str(cfg), "--tables", "1", "--quiet")
    assert res.returncode == 0, res.stderr
    assert set(done) < set(_ids(tmp_path / "out"))


def test_bad_ladder_arguments_are_one_error_line(tmp_path: Path, capsys) -> None:
    cfg = _config(tmp_path / "ladder.toml", ["a", "b", "c"])
    assert main(["ladder", str(cfg), "--tables", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: --tables must be at least 1")
