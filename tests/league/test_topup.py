"""A balanced or gauntlet night that grows: bots added get a top-up block, earlier tables stay."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from referee.cli import main
from referee.league import schedule as sched
from referee.league.config import load_config
from referee.league.ledger import Ledger
from referee.league.outdir import open_night
from referee.league.roster import night_of
from referee.league.runner import play

from .conftest import REPO, cli

INSTANT = REPO / "tests" / "bots" / "instant_bot.py"

pytestmark = pytest.mark.xdist_group("topup")

SCHEDULES = {
    # 5 bots, 2 tables each at 3 seats: 4 tables (12 games); a top-up of 2 bots: 4 tables more
    "balanced": '[schedule]\nkind = "balanced"\nseats_per_bot = 2\n',
    # challenger a at 2 tables against the field b..e; each added bot: 2 tables against the field
    "gauntlet": '[schedule]\nkind = "gauntlet"\nseats_per_bot = 2\nchallengers = [{chal}]\n',
}


def _config(path: Path, kind: str, names: list[str], challengers: tuple[str, ...] = ("a",)) -> Path:
    bots = "".join(
        f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{INSTANT}"]\nenv = {{ BOT_SEED = "{ord(n)}" }}\n'
        for n in names
    )
    schedule = SCHEDULES[kind].format(chal=", ".join(f'"{c}"' for c in challengers))
    path.write_text(
        # reuse = "table": one process per seat for a whole table (3 starts, not 9 in session mode with
        # one deal); the top-ups' tables, ids and seats are checked, not how bots are reused
        f'seed = 5\nout = "out"\nconcurrency = 2\nreuse = "table"\n[clock]\nmove_ms = 5000\n{schedule}{bots}'
        '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'
    )
    return path


def _run(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def _rows(out: Path) -> dict[str, tuple[Any, ...]]:
    with Ledger.in_dir(out, create=False) as ledger:
        return {r.game_id: (r.seed, r.bots, r.scores, r.ranks, r.reason) for r in ledger.rows()}


def _tables(rows: dict[str, tuple[Any, ...]], ids: set[str]) -> dict[str, set[str]]:
    """Table key -> its bots, for the games ``ids``."""
    out: dict[str, set[str]] = {}
    for gid in ids:
        out.setdefault(gid.rsplit("-", 2)[0], set()).update(rows[gid][1])
    return out


def _grow(night: Path, kind: str) -> tuple[Path, dict, dict]:
    """A night of 5 bots played in the folder ``night`` (kept as ``night-first`` next to it), then
    2 bots added (f listed as a challenger of a gauntlet) and played."""
    night.mkdir()
    cfg = _config(night / "night.toml", kind, list("abcde"))
    res = cli("run", str(cfg), "--quiet")
    assert res.returncode == 0, res.stderr
    first = _rows(night / "out")
    shutil.copytree(night, night.parent / f"{night.name}-first")
    _config(cfg, kind, list("abcdefg"), challengers=("a", "f"))
    res = cli("run", str(cfg), "--quiet")
    assert res.returncode == 0, res.stderr
    assert "2 bots added: 12 new games (f, g)" in res.stderr
    return cfg, first, _rows(night / "out")


@pytest.fixture(scope="module")
def balanced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The balanced night grown once (:func:`_grow`), shared: ``night/`` as grown, ``night-first/`` as
    it was before f and g came. A test copies a folder before it plays into it."""
    root = tmp_path_factory.mktemp("balanced")
    _grow(root / "night", "balanced")
    return root


def _copy(src: Path, tmp_path: Path) -> Path:
    """A copy of the night folder ``src`` in ``tmp_path``; its config."""
    shutil.copytree(src, tmp_path / "night")
    return tmp_path / "night" / "night.toml"


@pytest.mark.parametrize("kind", ["balanced", "gauntlet"])
def test_added_bots_play_only_their_top_up(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    if kind == "balanced":
        root = request.getfixturevalue("balanced")
        cfg = _copy(root / "night", tmp_path)
        first, second = _rows(root / "night-first" / "out"), _rows(cfg.parent / "out")
    else:
        cfg, first, second = _grow(tmp_path / "night", kind)
    assert len(first) == (12 if kind == "balanced" else 6)
    for gid, row in first.items():  # every earlier game id, seed, seating and result unchanged
        assert second[gid] == row
    new = set(second) - set(first)
    assert len(new) == 12
    tables = _tables(second, new)
    start = 4 if kind == "balanced" else 2  # the top-up's ids continue after the block's tables
    assert sorted(tables) == [f"kwartet-3p-t{t:04d}" for t in range(start, start + 4)]
    seats = Counter(b for lineup in tables.values() for b in lineup)
    assert seats["f"] == seats["g"] == 2  # each newcomer: seats_per_bot tables
    for lineup in tables.values():  # every new table seats one newcomer against the field
        assert len(lineup & {"f", "g"}) == 1
        if kind == "gauntlet":
            assert "a" not in lineup  # the field: not the night's challengers
    # the plan of the grown night counts both blocks and shows the top-up's coverage
    rc, out, err = _run("plan", str(cfg), capsys=capsys)
    assert rc == 0, err
    assert "top-up 1 (tables" in out and "f, g added" in out
    league = night_of(load_config(cfg))
    assert sched.total_games(league) == len(second)
    # running again plays nothing
    rc, _, err = _run("run", str(cfg), "--quiet", capsys=capsys)
    assert rc == 0 and "added" not in err
    assert _rows(cfg.parent / "out") == second


def test_a_second_growth_is_a_second_top_up(tmp_path: Path, balanced: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _copy(balanced / "night", tmp_path)
    second = _rows(cfg.parent / "out")
    _config(cfg, "balanced", list("abcdefgh"))
    rc, _, err = _run("run", str(cfg), "--quiet", capsys=capsys)
    assert rc == 0, err
    assert "1 bot added: 6 new games (h)" in err
    third = _rows(cfg.parent / "out")
    assert {g: third[g] for g in second} == second
    tables = _tables(third, set(third) - set(second))
    assert sorted(tables) == ["kwartet-3p-t0008", "kwartet-3p-t0009"]
    assert all("h" in lineup for lineup in tables.values())
    with Ledger.in_dir(cfg.parent / "out", create=False) as ledger:
        assert '"added":["h"]' in (ledger.get_meta("epochs") or "")


def test_a_top_up_interrupted_resumes(tmp_path: Path, balanced: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _copy(balanced / "night-first", tmp_path)
    first = _rows(cfg.parent / "out")
    _config(cfg, "balanced", list("abcdefg"))

    def stop_after_three(stats: Any, tally: Any) -> None:
        if stats.played >= 3:
            raise KeyboardInterrupt

    league, ledger, growth = open_night(load_config(cfg))
    assert growth is not None and growth.added == ("f", "g")
    with ledger, pytest.raises(KeyboardInterrupt):
        play(league, ledger, hook=stop_after_three, concurrency=1)
    cut = _rows(cfg.parent / "out")
    assert len(first) < len(cut) < len(first) + 12
    rc, _, err = _run("run", str(cfg), "--quiet", capsys=capsys)
    assert rc == 0, err
    assert "added" not in err  # the growth was recorded with the first games of the top-up
    done = _rows(cfg.parent / "out")
    assert {g: done[g] for g in cut} == cut
    assert set(done) == {g.game_id for g in sched.games(night_of(load_config(cfg)))}
    assert len(done) == len(first) + 12
