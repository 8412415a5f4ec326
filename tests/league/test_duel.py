"""Duels with real bot processes: seating of the deal pairs, the SPRT deciding, faults, dropped pairs.

The statistics themselves (and their error rates, by simulation on the rules
engine) are tested in test_sprt.py; here the duel plays sample bots through the
runtime, with small move limits and few games.
"""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

import pytest
import trio

from referee.errors import UserError
from referee.league.duel import Duel, DuelSpec, check_start, field_seats, seat_pair
from referee.league.sprt import Sprt
from referee.rules import derive, get_variant
from referee.runtime import BotSpec, ClockSpec, FaultPolicy
from tests.league.conftest import processes_with

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
TAG = f"duel-test-{os.getpid()}"


def bot(name: str, script: str, *extra: str) -> BotSpec:
    return BotSpec(name, [PY, str(ROOT / script), *extra, TAG])


TRACKER = "sample_bots/tracker_bot.py"
RANDOM = "sample_bots/random_bot.py"
CLOCK = ClockSpec(move_ms=500, grace_ms=100)


def spec(
    players: int = 3, *, a: BotSpec | None = None, b: BotSpec | None = None, field: list[BotSpec] | None = None, **kw
) -> DuelSpec:
    a = a or bot("tracker", TRACKER, "1")
    b = b or bot("random", RANDOM, "2")
    fb = field_seats(field or [bot("field", RANDOM, "3")], players - 2, [a.name, b.name])
    kw.setdefault("max_pairs", 4)
    kw.setdefault("clock", CLOCK)
    return DuelSpec(rules=get_variant(kw.pop("variant", "kwartet")), players=players, a=a, b=b, field=fb, seed=7, **kw)


# --------------------------------------------------------------------------
# seating (pure)


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_pairs_put_a_and_b_in_every_ordered_pair_of_seats(players: int) -> None:
    cycle = players * (players - 1) // 2
    seen = set()
    for d in range(cycle):
        i, j = seat_pair(players, d)
        seen |= {(i, j), (j, i)}
        assert seat_pair(players, d + cycle) == (i, j)  # the cycle repeats
    assert seen == set(itertools.permutations(range(players), 2))


def test_a_pair_is_one_deal_with_a_and_b_swapped_and_the_field_in_place() -> None:
    s = spec(4, field=[bot("f", RANDOM)])
    for d in range(8):
        g1, g2 = s.pair(d)
        assert g1.spec.seed == g2.spec.seed == derive(7, f"pair:{d}")
        assert (g1.seat_a, g1.seat_b) == (g2.seat_b, g2.seat_a) == seat_pair(4, d)
        assert g1.positions[g1.seat_a] == 0 and g1.positions[g1.seat_b] == 1
        assert g2.positions[g2.seat_a] == 0 and g2.positions[g2.seat_b] == 1
        for seat in range(4):
            if seat not in (g1.seat_a, g1.seat_b):
                assert g1.positions[seat] == g2.positions[seat] >= 2  # a field bot keeps its seat (and hand)
        assert g1.spec.game_id == f"duel-kwartet-4p-7-{d + 1:05d}-1" and g2.spec.game_id.endswith("-2")
    assert [b.name for b in s.field] == ["f", "f#2"]


def test_field_names_never_clash_with_a_or_b() -> None:
    names = [b.name for b in field_seats([bot("x", RANDOM), bot("y", RANDOM)], 4, ["x", "x#2"])]
    assert names == ["x#3", "y", "x#4", "y#2"]
    with pytest.raises(ValueError, match="needs 2 field bot"):
        DuelSpec(
            rules=get_variant("kwartet"),
            players=4,
            a=bot("a", RANDOM),
            b=bot("b", RANDOM),
            field=(),
            seed=1,
            max_pairs=1,
        )
    with pytest.raises(ValueError, match="different names"):
        DuelSpec(
            rules=get_variant("kwartet"),
            players=3,
            a=bot("a", RANDOM),
            b=bot("b", RANDOM),
            field=(bot("a", RANDOM),),
            seed=1,
            max_pairs=1,
        )
    with pytest.raises(ValueError, match="kwartet is for 3-6 players, not 2"):
        spec(2)


# --------------------------------------------------------------------------
# real duels


async def test_tracker_against_random_accepts_h1_within_a_bounded_number_of_games() -> None:
    # the tracker is hundreds of Elo stronger than random play (test_sprt.py measures it in process): a wide
    # SPRT (H1: +200 Elo) accepts H1 within a couple of dozen deal pairs; 40 pairs bound it with room to spare
    duel = Duel(spec(3, max_pairs=40, test=Sprt(0, 200), concurrency=2))
    assert await duel.run() == "H1"
    st = duel.state
    assert st.decided_at is not None and st.decided_at <= 40
    s = duel.summary()
    assert s.result == "H1" and s.stats.llr >= s.stats.upper
    # a positive Elo, or none at all when A won every pair (a score of 1: the logistic Elo is unbounded)
    assert (s.stats.elo is not None and s.stats.elo > 0) or (s.stats.elo is None and s.stats.score == 1.0), s.stats
    assert s.games == 2 * (s.pairs + s.dropped_pairs) and s.wins + s.draws + s.losses == 2 * s.pairs
    assert s.wins > s.losses
    # every game has every lineup position seated once
    assert [t.games for t in s.bots] == [s.games] * 3 and all(t.decisions > 0 for t in s.bots)
    assert [t.role for t in s.bots] == ["A", "B", "field"]
    assert not processes_with(TAG)


async def test_max_pairs_undecided_and_without_a_test(tmp_path: Path) -> None:
    duel = Duel(spec(3, max_pairs=2, test=Sprt(0, 10), log_dir=tmp_path))
    assert await duel.run() == "continue"
    assert duel.summary().result == "undecided" and duel.games == 4
    assert sorted(p.name for p in await trio.Path(tmp_path).iterdir()) == [
        f"duel-kwartet-3p-7-0000{d}-{g}.jsonl" for d in (1, 2) for g in (1, 2)
    ]
    duel = Duel(spec(3, max_pairs=1))
    await duel.run()
    assert duel.summary().result == "complete" and duel.summary().stats.llr is None


async def test_a_crashing_bot_is_played_on_by_the_fallback_and_its_faults_are_counted() -> None:
    duel = Duel(spec(3, b=bot("crasher", "tests/bots/crash_bot.py"), max_pairs=1))
    await duel.run()
    s = duel.summary()
    assert s.games == 2 and s.pairs == 1  # every game has a result: the fallback played the crashed seat on
    b = s.bots[1]
    assert b.name == "crasher" and b.faults.get("crash", 0) == b.forfeits >= 1 and sum(s.bots[0].faults.values()) == 0
    assert not processes_with(TAG)  # crashed sessions were reaped (with the `sleep` each crash leaves behind)


async def test_aborted_games_drop_their_pair_whole() -> None:
    policy = FaultPolicy(max_decisions=2)  # every hand is aborted after two decisions: no game has a result
    duel = Duel(spec(3, max_pairs=3, policy=policy, concurrency=2))
    await duel.run()
    s = duel.summary()
    assert s.pairs == 0 and s.dropped_pairs == 3 and s.games == 3  # a pair's second game is not played
    assert s.stats.units == 0


async def test_a_bot_that_does_not_start_is_named() -> None:
    with pytest.raises(UserError, match=r"--bot B 'nobot' could not start: .*not found"):
        await check_start(spec(3, b=BotSpec("nobot", ["/no/such/bot"])))
    with pytest.raises(UserError, match=r"--field bot 'f' could not start"):
        await check_start(spec(3, field=[BotSpec("f", [PY, "-c", "pass"])]))
    # a bot that cannot start at a table (it passed the check, say, and its file went away) stops the duel
    duel = Duel(spec(3, b=BotSpec("nobot", ["/no/such/bot"])))
    with pytest.raises(UserError, match=r"--bot B 'nobot' could not start"):
        await duel.run()
    assert duel.games == 0 and not processes_with(TAG)


async def test_a_duel_played_in_units_by_an_executor_plays_the_same_games(tmp_path: Path) -> None:
    """The path of a duel on a cluster (``referee host --workers``): the pairs as units of work, played
    by an executor (here the local one a worker runs); the same games, counted the same, as with pools."""
    from referee.league.local import LocalExecutor
    from referee.league.work import Entrant

    here, there = tmp_path / "pools", tmp_path / "units"
    here.mkdir()
    there.mkdir()
    pools = Duel(spec(3, max_pairs=3, test=Sprt(0, 10), log_dir=here))
    await pools.run()
    units = Duel(spec(3, max_pairs=3, test=Sprt(0, 10), log_dir=there, concurrency=2))
    lineup = [Entrant(i, b, CLOCK) for i, b in enumerate(units.spec.lineup)]
    unit, played = units.unit(0, 2, lineup)
    assert [g.game_id for g in unit.games] == [p[k].spec.game_id for k in (0, 1) for p in played]
    assert unit.fresh == {2}  # the second games: fresh processes (no process meets a deal twice)
    await units.run(LocalExecutor(there), lineup, pairs_per_unit=2)
    a, b = pools.summary(), units.summary()
    assert b.games == a.games == 6 and b.pairs == a.pairs == 3 and b.wins + b.draws + b.losses == 6
    assert sorted(p.name for p in there.iterdir()) == sorted(p.name for p in here.iterdir())
    assert [t.games for t in b.bots] == [6, 6, 6] and not processes_with(TAG)
