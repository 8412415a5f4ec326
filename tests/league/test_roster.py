"""A night that grows: bots added to a played night, bots withdrawn, other changes refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.cli import main
from referee.league import schedule as sched
from referee.league.config import load_config
from referee.league.ledger import Ledger

from .conftest import REPO

INSTANT = REPO / "tests" / "bots" / "instant_bot.py"


class _Res:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def referee(capsys: pytest.CaptureFixture[str]):
    """The command line, in this process (its bots are real subprocesses)."""

    def run(*args: str) -> _Res:
        capsys.readouterr()
        rc = main(list(args))
        out, err = capsys.readouterr()
        return _Res(rc, out, err)

    return run


def _config(path: Path, names: list[str], *, seed: int = 3, out: str = "out", sizes: str = "3", deals: int = 1) -> Path:
    """A small round robin of deterministic bots: a fresh process per game, each
    bot's generator seeded by its own BOT_SEED, so a game depends only on its
    deal and seating."""
    bots = "".join(
        f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{INSTANT}"]\nenv = {{ BOT_SEED = "{ord(n)}" }}\n'
        for n in names
    )
    path.write_text(
        f'seed = {seed}\nreuse = "game"\nout = "{out}"\n[clock]\nmove_ms = 5000\n{bots}'
        f'[[variants]]\nname = "kwartet"\nsizes = {sizes}\ndeals = {deals}\n'
    )
    return path


def _rows(out: Path) -> dict[str, tuple]:
    with Ledger.in_dir(out, create=False) as ledger:
        return {r.game_id: (r.seed, r.bots, r.scores, r.ranks, r.reason) for r in ledger.rows()}


def _standings(out: Path) -> dict:
    return json.loads((out / "standings.json").read_text())


def _results(st: dict) -> dict:
    """The standings' scopes without the think times (which differ from run to run)."""
    return {
        scope: [{k: v for k, v in r.items() if not k.startswith("think")} for r in data["bots"]]
        for scope, data in st["scopes"].items()
    }


def test_added_bots_play_the_new_games_only_and_equal_the_all_bots_night(tmp_path: Path, referee) -> None:
    cfg = _config(tmp_path / "night.toml", ["a", "b", "c"])
    res = referee("run", str(cfg), "--quiet")
    assert res.returncode == 0, res.stderr
    first = _rows(tmp_path / "out")
    first_st = _results(_standings(tmp_path / "out"))
    assert len(first) == 1 * 1 * 3

    _config(cfg, ["a", "b", "c", "d"])  # a bot added: 4 tables of 3, 3 of them new
    res = referee("run", str(cfg), "--quiet")
    assert res.returncode == 0, res.stderr
    assert "1 bot added: 9 new games (d)" in res.stderr
    grown = _rows(tmp_path / "out")
    assert len(grown) == 4 * 1 * 3
    assert {k: grown[k] for k in first} == first  # earlier games: same ids, untouched
    logs = {p.name.split(".jsonl")[0] for p in (tmp_path / "out" / "games").glob("*.jsonl*")}
    assert logs == set(grown)

    # the night planned with all four bots from the start: equal game by game
    whole = _config(tmp_path / "whole.toml", ["a", "b", "c", "d"], out="whole")
    res = referee("run", str(whole), "--quiet")
    assert res.returncode == 0, res.stderr
    assert _rows(tmp_path / "whole") == grown
    assert [g.game_id for g in sched.games(load_config(whole))] == list(grown)
    assert _results(_standings(tmp_path / "whole")) == _results(_standings(tmp_path / "out"))

    # a bot removed: withdrawn, nothing played, its games kept but left out
    _config(cfg, ["a", "b", "c"])
    res = referee("run", str(cfg))
    assert res.returncode == 0, res.stderr
    assert "1 bot withdrawn: d" in res.stderr
    assert "0 games played now, 3/3 in the ledger" in res.stdout
    assert _rows(tmp_path / "out") == grown
    st = _standings(tmp_path / "out")
    assert st["withdrawn"] == [{"bot": "d", "games": 9, "counted": False}]
    assert st["games"] == 3  # the table without d
    assert "Withdrawn: d (9 games)" in (tmp_path / "out" / "standings.md").read_text()
    assert "Withdrawn: d" in (tmp_path / "out" / "report.html").read_text()
    assert _results(st) == first_st  # the standings of the night without d

    # --keep-withdrawn counts them, the bot marked
    res = referee("standings", str(tmp_path / "out"), "--keep-withdrawn", "--json")
    assert res.returncode == 0, res.stderr
    kept = json.loads(res.stdout)
    assert kept["games"] == 12 and kept["withdrawn"][0]["counted"] is True
    assert next(r for r in kept["scopes"]["overall"]["bots"] if r["bot"] == "d")["withdrawn"] is True

    # back with its old config: in again, nothing to replay
    _config(cfg, ["a", "b", "c", "d"])
    res = referee("run", str(cfg), "--quiet")
    assert res.returncode == 0, res.stderr
    assert "1 bot back: d" in res.stderr
    assert _rows(tmp_path / "out") == grown
    assert "withdrawn" not in _standings(tmp_path / "out")


def test_other_changes_are_refused_with_the_diff(tmp_path: Path, referee) -> None:
    cfg = _config(tmp_path / "night.toml", ["a", "b", "c"])
    assert referee("run", str(cfg), "--quiet").returncode == 0
    before = _rows(tmp_path / "out")
    _config(cfg, ["a", "b", "c", "d"], seed=4)  # a bot added, and the seed changed
    res = referee("run", str(cfg), "--quiet")
    assert res.returncode == 2
    assert "seed: was 3, now 4" in res.stderr and "Adding bots or removing them is accepted" in res.stderr
    assert "Traceback" not in res.stderr
    text = cfg.read_text().replace("seed = 4", "seed = 3").replace('BOT_SEED = "97"', 'BOT_SEED = "1"')
    cfg.write_text(text)  # a bot of the night changed
    res = referee("run", str(cfg), "--quiet")
    assert res.returncode == 2 and "bots.a.env" in res.stderr
    assert _rows(tmp_path / "out") == before


def test_a_split_night_cannot_change_its_bots(tmp_path: Path, referee) -> None:
    cfg = _config(tmp_path / "night.toml", ["a", "b", "c", "d"])
    assert referee("run", str(cfg), "--quiet", "--shard", "1/2").returncode == 0
    _config(cfg, ["a", "b", "c", "d", "e"])
    res = referee("run", str(cfg), "--quiet", "--shard", "1/2")
    assert res.returncode == 2 and "split into shards" in res.stderr


def test_tables_are_numbered_in_joining_order() -> None:
    assert list(sched.colex(4, 2)) == [(0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)]
    assert list(sched.colex(5, 3))[:4] == list(sched.colex(4, 3))
    assert sum(1 for _ in sched.colex(7, 3)) == 35


def test_a_night_of_an_older_referee_is_not_resumed(tmp_path: Path, referee) -> None:
    cfg = _config(tmp_path / "night.toml", ["a", "b", "c"])
    assert referee("run", str(cfg), "--quiet").returncode == 0
    with Ledger.in_dir(tmp_path / "out", create=False) as ledger:
        ledger.db.execute("DELETE FROM meta WHERE key = 'ids'")  # as the referee before table numbering by roster
    res = referee("run", str(cfg), "--quiet")
    assert res.returncode == 2 and "started by an older referee" in res.stderr
    assert referee("standings", str(tmp_path / "out")).returncode == 0
