"""Balanced and gauntlet nights played end to end with the sample bots, interrupted and resumed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from referee.cli import main
from referee.league import schedule as sched
from referee.league.config import load_config
from referee.league.ledger import Ledger
from referee.league.outdir import open_ledger
from referee.league.runner import play
from referee.league.standings import from_ledger

from .conftest import REPO

RANDOM = REPO / "sample_bots" / "random_bot.py"
TRACKER = REPO / "sample_bots" / "tracker_bot.py"

#: four seeded sample bots; reuse = "game" gives every game fresh processes, so a game's result
#: depends on its seed and seating only, and a resumed night can be compared with an uninterrupted one
BOTS = "".join(
    f'[[bots]]\nname = "{name}"\ncommand = ["{{python}}", "{script}", "{seed}"]\n'
    for name, script, seed in [
        ("random-1", RANDOM, 1),
        ("random-2", RANDOM, 2),
        ("tracker-1", TRACKER, 1),
        ("tracker-2", TRACKER, 2),
    ]
)
HEAD = 'seed = 11\nconcurrency = 2\nreuse = "game"\n[clock]\nmove_ms = 2000\n'

NIGHTS = {
    # 4 bots, 1 table per bot at 3 seats: 2 tables (two bots at both: 1 table each, give or take one), 6 games
    "balanced": '[schedule]\nkind = "balanced"\nseats_per_bot = 1\n',
    # one challenger at 2 tables, the other two seats from the field of 3: 2 tables, 6 games
    "gauntlet": '[schedule]\nkind = "gauntlet"\nseats_per_bot = 2\nchallengers = ["tracker-1"]\n',
}
VARIANT = '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'


def _rows(out: Path) -> list[dict[str, Any]]:
    """Every ledger row, without what is measured (times) or where (log paths)."""
    keep = (
        "game_id",
        "variant",
        "size",
        "table",
        "deal",
        "rotation",
        "seed",
        "bots",
        "scores",
        "ranks",
        "win_shares",
        "forfeits",
        "reason",
    )
    with Ledger.in_dir(out, create=False) as ledger:
        return sorted(({k: getattr(r, k) for k in keep} for r in ledger.rows()), key=lambda r: r["game_id"])


@pytest.mark.parametrize("kind", ["balanced", "gauntlet"])
def test_a_night_resumed_after_an_interruption_equals_an_uninterrupted_one(tmp_path: Path, kind: str) -> None:
    cfg = tmp_path / "night.toml"
    cfg.write_text(HEAD + NIGHTS[kind] + BOTS + VARIANT)
    league = load_config(cfg, out=str(tmp_path / "cut"))
    planned = [g.game_id for g in sched.games(league)]
    assert len(planned) == sched.total_games(league) == 6

    # interrupted after three games (the hook runs as each game is committed)
    def stop_after_three(stats: Any, tally: Any) -> None:
        if stats.played >= 3:
            raise KeyboardInterrupt  # as Ctrl-C: play() stops every unit and lets it through

    with open_ledger(league) as ledger, pytest.raises(KeyboardInterrupt):
        play(league, ledger, hook=stop_after_three, concurrency=1)
    with Ledger.in_dir(tmp_path / "cut", create=False) as ledger:
        assert 3 <= ledger.count() < len(planned)
    assert main(["run", str(cfg), "--out", str(tmp_path / "cut"), "--quiet"]) == 0  # resume
    assert main(["run", str(cfg), "--out", str(tmp_path / "whole"), "--quiet"]) == 0  # uninterrupted

    cut, whole = _rows(tmp_path / "cut"), _rows(tmp_path / "whole")
    assert [r["game_id"] for r in cut] == sorted(planned)
    assert cut == whole
    with Ledger.in_dir(tmp_path / "whole", create=False) as ledger:
        st = from_ledger(ledger)
    bots = {r["bot"] for r in st["overall"]["rows"]} if "overall" in st else None
    seated = {b for r in whole for b in r["bots"]}
    assert seated == {"random-1", "random-2", "tracker-1", "tracker-2"}  # every bot plays
    if bots is not None:
        assert bots == seated
    if kind == "gauntlet":
        assert all("tracker-1" in r["bots"] for r in whole)  # every table seats the challenger
        assert all(r["bots"].count("tracker-1") == 1 for r in whole)
    else:  # 6 seats for 4 bots: 1 or 2 tables each (3 rotations a table)
        games = {b: sum(r["bots"].count(b) for r in whole) for b in seated}
        assert sorted(games.values()) == [3, 3, 6, 6]
    assert all(len(set(r["bots"])) == 3 for r in whole)  # different bots at every table
