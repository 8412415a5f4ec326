"""Full games of every variant at every table size, with real bot processes, replay verified."""

from __future__ import annotations

import trio

from referee.rules import VARIANTS, get_variant
from referee.rules.match import MatchFormat
from referee.runtime import ClockSpec, GameSpec, play_game, start_bots
from referee.runtime.replay import replay

from .helpers import RANDOM_BOT, bot, play


async def test_every_variant_at_every_size_in_session_mode(tmp_path):
    """Six random_bot.py processes serve every game (session mode: start ... end, start ... end)."""
    clock = ClockSpec(move_ms=5000)
    specs = [bot(f"r{i}", RANDOM_BOT) for i in range(6)]
    played = 0
    seen: set[str] = set()
    async with trio.open_nursery() as nursery:
        sessions = await start_bots(specs, clock, nursery)
        try:
            for variant in VARIANTS:
                rules = get_variant(variant)
                for n in (2, 3, 4, 6):
                    if not rules.min_players <= n <= rules.max_players:
                        continue
                    played += 1
                    seen.add(variant)
                    gid = f"g-{variant}-{n}"
                    result = await play_game(GameSpec(gid, rules, n, seed=played, clock=clock), sessions[:n], tmp_path)
                    assert result.reason == "complete", result.detail
                    assert result.faults == [], result.faults
                    assert all(t.count > 0 for t in result.think_ms[:n]) or variant != "chickens"
                    report = replay(result.log_path)
                    assert report.ok, (gid, report.mismatches)
                    assert report.footer["scores"] == result.scores
            assert all(s.alive for s in sessions)
            assert all(s.next_id > 10 for s in sessions)
        finally:
            for s in sessions:
                await s.close()
    assert seen == set(VARIANTS)  # every registered preset, at every size it allows
    assert played >= 2 * len(VARIANTS)
    assert all(not s.alive for s in sessions)


async def test_fixed_match_is_one_log_with_hand_games(tmp_path):
    specs = [bot(f"i{i}", "instant_bot.py", BOT_SEED=str(i + 1)) for i in range(3)]
    result, report = await play(
        specs, "authors", seed=9, log_dir=tmp_path, game_id="g-000042", match=MatchFormat(kind="fixed", hands=3)
    )
    assert report.ok, report.mismatches
    assert report.hands == 3
    games = [line for line in report.transcript if line.startswith("== g-000042.h") and "ends" not in line]
    assert [g.split(":")[0] for g in games] == ["== g-000042.h1", "== g-000042.h2", "== g-000042.h3"]
    assert sum(result.scores) == 3 * 13


async def test_race_match_replays(tmp_path):
    specs = [bot(f"i{i}", "instant_bot.py", BOT_SEED=str(i + 5)) for i in range(4)]
    result, report = await play(specs, "kwartet", seed=2, log_dir=tmp_path, match=MatchFormat(kind="race", target=5))
    assert report.ok, report.mismatches
    assert max(result.scores) >= 5


async def test_race_tie_break_hand_is_played_by_the_tied_seats_only(tmp_path):
    from .helpers import log_records, sent_to

    specs = [bot(f"i{i}", "instant_bot.py", BOT_SEED=str(i + 5)) for i in range(4)]
    result, report = await play(
        specs, "kwartet", seed=7, log_dir=tmp_path, game_id="g-000007", match=MatchFormat(kind="race", target=3)
    )
    assert report.ok, report.mismatches
    hands = [r["hand"] for r in log_records(result.log_path) if "hand" in r]
    assert [h["game"] for h in hands] == ["g-000007.h1", "g-000007.h2"]
    assert hands[1]["tiebreak"] and hands[1]["seats"] == [0, 3]  # a 2-seat kwartet table, below the minimum
    for seat in (1, 2):
        assert not [m for m in sent_to(result.log_path, seat, "start") if m["game"] == "g-000007.h2"]
    start = [m for m in sent_to(result.log_path, 3, "start") if m["game"] == "g-000007.h2"][0]
    assert start["seat"] == 1 and start["seats"] == ["i0", "i3"]
    assert result.ranks[3] == 1 and result.win_shares[3] == 1.0


async def test_fixed_match_tie_break_hand_is_played_by_the_tied_seats_only(tmp_path):
    from .helpers import log_records, sent_to

    specs = [bot(f"i{i}", "instant_bot.py", BOT_SEED="1") for i in range(3)]
    result, report = await play(
        specs, "authors", seed=9, log_dir=tmp_path, game_id="g-000009", match=MatchFormat(kind="fixed", hands=1)
    )
    assert report.ok, report.mismatches
    recs = log_records(result.log_path)
    hands = [r["hand"] for r in recs if "hand" in r]
    ends = [r["hand_end"] for r in recs if "hand_end" in r]
    assert [h["game"] for h in hands][:2] == ["g-000009.h1", "g-000009.h2"]
    first = ends[0]["scores"]
    tied = [s for s in range(3) if first[s] == max(first)]
    assert len(tied) == 2 and hands[1]["tiebreak"] and hands[1]["seats"] == tied  # the hand after a fixed 1
    other = ({0, 1, 2} - set(tied)).pop()
    assert not [m for m in sent_to(result.log_path, other, "start") if m["game"] == "g-000009.h2"]
    assert result.scores.count(max(result.scores)) == 1 and result.ranks[other] == 3
    assert result.win_shares == [1.0 if s == max(result.scores) else 0.0 for s in result.scores]


async def test_chickens_start_carries_the_tables_number_of_rounds_and_the_header_a_start_time(tmp_path):
    from datetime import datetime

    from .helpers import log_records, sent_to

    for n in (3, 5):
        specs = [bot(f"r{i}", RANDOM_BOT) for i in range(n)]
        result, report = await play(specs, "chickens", seed=n, log_dir=tmp_path, game_id=f"g-chickens-{n}")
        assert report.ok, report.mismatches
        starts = [sent_to(result.log_path, s, "start")[0] for s in range(n)]
        assert {st["rules"]["rounds"] for st in starts} == {n}  # the contract: chickens carries `rounds`
        header = log_records(result.log_path)[0]
        assert header["rules"]["rounds"] is None  # the rules record: one round per player
        started = datetime.fromisoformat(header["started"].replace("Z", "+00:00"))
        assert started.tzinfo is not None and started.year >= 2024
