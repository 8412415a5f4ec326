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
    async with trio.open_nursery() as nursery:
        sessions = await start_bots(specs, clock, nursery)
        try:
            for variant in VARIANTS:
                rules = get_variant(variant)
                for n in (2, 3, 4, 6):
                    if not rules.min_players <= n <= rules.max_players:
                        continue
                    played += 1
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
    assert played == 5 * 3 + 2  # 2 seats only for the two happy-families variants
    assert all(not s.alive for s in sessions)


async def test_fixed_match_is_one_log_with_hand_games(tmp_path):
    specs = [bot(f"i{i}", "instant_bot.py", BOT_SEED=str(i + 1)) for i in range(3)]
    result, report = await play(specs, "authors", seed=9, log_dir=tmp_path, game_id="g-000042",
                                match=MatchFormat(kind="fixed", hands=3))
    assert report.ok, report.mismatches
    assert report.hands == 3
    games = [line for line in report.transcript if line.startswith("== g-000042.h") and "ends" not in line]
    assert [g.split(":")[0] for g in games] == ["== g-000042.h1", "== g-000042.h2", "== g-000042.h3"]
    assert sum(result.scores) == 3 * 13


async def test_race_match_replays(tmp_path):
    specs = [bot(f"i{i}", "instant_bot.py", BOT_SEED=str(i + 5)) for i in range(4)]
    result, report = await play(specs, "kwartet", seed=2, log_dir=tmp_path,
                                match=MatchFormat(kind="race", target=5))
    assert report.ok, report.mismatches
    assert max(result.scores) >= 5
