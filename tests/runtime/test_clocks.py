"""Per-seat clocks (``GameSpec.seat_clocks``): each seat is timed by its own limits."""

from __future__ import annotations

import pytest

from referee.runtime import ClockSpec, GameSpec, play_game

from .helpers import bot, log_records, play, sent_to


async def test_each_seat_is_timed_by_its_own_clock(tmp_path):
    # the same slow bot (first two turns answered after ~150 ms) on both seats:
    # only the seat with the 100 ms limit times out
    specs = [bot("tight", "slow_bot.py", BOT_DELAY_MS="150"), bot("loose", "slow_bot.py", BOT_DELAY_MS="150"),
             bot("other", "instant_bot.py", BOT_SEED="2")]
    clocks = [ClockSpec(move_ms=100), ClockSpec(move_ms=1000, bank_ms=60000), None]
    result, report = await play(specs, "kwartet", seed=3, log_dir=tmp_path, clock=ClockSpec(move_ms=5000),
                                seat_clocks=clocks)
    assert result.reason == "complete"
    assert [f.fault for f in result.faults if f.seat == 0][:1] == ["timeout"], result.faults
    assert "within the time limit of 100 ms" in result.faults[0].detail
    assert [f for f in result.faults if f.seat == 1] == []
    assert result.forfeits == [0] and result.win_shares[0] == 0.0
    assert result.think_ms[1].max_ms >= 140  # seat 1 really answered slowly, within its own limit
    # the wire carries each seat's own clock
    assert sent_to(result.log_path, 0, "start")[0]["clock"] == {"move_ms": 100}
    assert sent_to(result.log_path, 1, "start")[0]["clock"] == {"move_ms": 1000, "bank_ms": 60000}
    assert {t["clock"]["move_ms"] for t in sent_to(result.log_path, 0, "turn")} == {100}
    turns1 = sent_to(result.log_path, 1, "turn")
    assert {t["clock"]["move_ms"] for t in turns1} == {1000}
    assert turns1[-1]["clock"]["left_ms"] < 60000 - 140  # its bank was charged
    header = log_records(result.log_path)[0]
    assert [c["move_ms"] for c in header["seat_clocks"]] == [100, 1000, 5000]
    assert header["clock"]["move_ms"] == 5000
    assert sent_to(result.log_path, 2, "start")[0]["clock"] == {"move_ms": 5000}
    assert report.ok, report.mismatches


async def test_seat_clocks_of_the_wrong_length_are_refused(tmp_path):
    from referee.rules import get_variant

    spec = GameSpec("g", get_variant("kwartet"), 3, seed=1, seat_clocks=[ClockSpec()])
    with pytest.raises(ValueError, match="1 seat_clocks for 3"):
        await play_game(spec, [None, None, None], tmp_path)  # type: ignore[list-item]
