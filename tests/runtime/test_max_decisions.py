"""The hand-length backstop: FaultPolicy.max_decisions and its automatic default."""

from __future__ import annotations

from pathlib import Path

import trio

from referee.rules import ASK_PRESETS, AskRules, get_variant
from referee.runtime import ClockSpec, FaultPolicy, GameSpec, play_game, start_bots
from referee.runtime.replay import replay
from referee.runtime.spec import DECISIONS_PER_CARD_AND_SEAT, MAX_DECISIONS, max_decisions_for

from .helpers import ROOT, bot, log_records, play


def test_the_default_cap_is_5000_for_every_preset_and_table_size() -> None:
    assert MAX_DECISIONS == 5000 and FaultPolicy().max_decisions == 5000
    for rules in [*ASK_PRESETS.values(), get_variant("chickens")]:
        for n in range(rules.min_players, rules.max_players + 1):
            assert max_decisions_for(rules, n) == 5000


def test_big_custom_decks_get_more_decisions_per_card_and_seat() -> None:
    big = AskRules.from_params({"name": "big", "families": 26, "members": 6, "players": [2, 6]})
    assert DECISIONS_PER_CARD_AND_SEAT == 10
    assert max_decisions_for(big, 2) == 5000  # 10 x 156 x 2 = 3120: the floor holds
    assert max_decisions_for(big, 6) == 10 * 156 * 6


async def test_a_hand_past_the_cap_is_aborted_and_replay_agrees(tmp_path: Path) -> None:
    # stall 10,000: two copies of the looping bot never end a kwartet hand before the cap
    tracker = ROOT / "sample_bots" / "tracker_bot.py"
    specs = [bot("a", "looping_bot.py"), bot("b", "looping_bot.py"), bot("t", tracker)]
    rules = AskRules.from_params({"name": "patient", "base": "kwartet", "stall": 10000})
    spec = GameSpec("g-cap", rules, 3, seed=1, clock=ClockSpec(move_ms=2000), policy=FaultPolicy(max_decisions=400))
    async with trio.open_nursery() as nursery:
        sessions = await start_bots(specs, spec.clock, nursery)
        try:
            result = await play_game(spec, sessions, tmp_path)
        finally:
            for s in sessions:
                await s.close()
    assert result.reason == "aborted" and result.detail == "no end after 400 decisions (FaultPolicy.max_decisions)"
    recs = log_records(result.log_path)
    assert recs[0]["policy"]["max_decisions"] == 400
    report = replay(result.log_path)
    assert report.ok, report.mismatches
    assert report.actions == 400


async def test_the_log_header_records_the_cap_in_force(tmp_path: Path) -> None:
    result, report = await play(
        [bot(f"i{i}", "instant_bot.py", BOT_SEED=str(i)) for i in range(3)], "kwartet", seed=4, log_dir=tmp_path
    )
    assert result.reason == "complete" and report.ok
    assert log_records(result.log_path)[0]["policy"]["max_decisions"] == 5000
