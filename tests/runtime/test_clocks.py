"""Per-seat clocks (``GameSpec.seat_clocks``): each seat is timed by its own limits."""

from __future__ import annotations

import pytest

from referee.runtime import ClockSpec, GameSpec, play_game

from .helpers import bot, log_records, play, sent_to


async def test_each_seat_is_timed_by_its_own_clock(tmp_path):
    # the same slow bot (first two turns answered after ~150 ms) on both seats:
    # only the seat with the 100 ms limit times out
    specs = [
        bot("tight", "slow_bot.py", BOT_DELAY_MS="150"),
        bot("loose", "slow_bot.py", BOT_DELAY_MS="150"),
        bot("other", "instant_bot.py", BOT_SEED="2"),
    ]
    clocks = [ClockSpec(move_ms=100), ClockSpec(move_ms=1000, bank_ms=60000), None]
    result, report = await play(
        specs, "kwartet", seed=3, log_dir=tmp_path, clock=ClockSpec(move_ms=5000), seat_clocks=clocks
    )
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


# The hand's reply-deadline scope (referee/runtime/game.py, _Driver._sequential):
# sequential waits arm one long-lived cancel scope lazily, so its deadline can
# fire before the decision's own limit is spent; the decision must then go on
# waiting for the rest of its exact limit.


async def test_a_reply_after_an_early_armed_deadline_but_within_the_limit_is_accepted(tmp_path, monkeypatch):
    from referee.runtime import game

    monkeypatch.setattr(game, "SLACK_FRACTION", 1.0)  # arm once per limit: the 2nd turn's armed deadline is early
    resumed = []
    original = game._Driver._resume_wait

    async def counting(self):
        resumed.append(self._waiting[0].turn_id if self._waiting else None)
        await original(self)

    monkeypatch.setattr(game._Driver, "_resume_wait", counting)
    # seat 0 thinks 120 ms on its 1st turn and 300 ms on its 2nd, limit 400 ms: the deadline
    # armed at the game's first turn fires about 120 ms early during the 2nd; 300 ms is within the limit
    specs = [
        bot("sched", "slow_bot.py", BOT_DELAYS_MS="120,300"),
        bot("fast", "instant_bot.py", BOT_SEED="2"),
        bot("fast2", "instant_bot.py", BOT_SEED="3"),
    ]
    result, report = await play(specs, "happy-families", seed=1, log_dir=tmp_path, clock=ClockSpec(move_ms=400))
    assert result.think_ms[0].count >= 2
    assert result.faults == [], result.faults
    assert result.reason == "complete"
    assert result.think_ms[0].max_ms >= 290
    assert resumed, "the armed deadline never fired early: the test did not exercise the resume path"
    assert report.ok, report.mismatches


async def test_a_reply_late_for_its_own_limit_still_times_out_after_an_early_fire(tmp_path, monkeypatch):
    from referee.runtime import game

    monkeypatch.setattr(game, "SLACK_FRACTION", 1.0)
    # 2nd turn: 700 ms against a 400 ms limit - a timeout, however the deadline was armed
    specs = [
        bot("sched", "slow_bot.py", BOT_DELAYS_MS="120,700"),
        bot("fast", "instant_bot.py", BOT_SEED="2"),
        bot("fast2", "instant_bot.py", BOT_SEED="3"),
    ]
    result, report = await play(specs, "happy-families", seed=1, log_dir=tmp_path, clock=ClockSpec(move_ms=400))
    assert [f.fault for f in result.faults if f.seat == 0][:1] == ["timeout"], result.faults
    assert "within the time limit of 400 ms" in result.faults[0].detail
    assert result.reason == "complete" and result.forfeits == [0]
    assert report.ok, report.mismatches


async def test_cpu_clock_logs_the_wall_time_of_each_decision_too(tmp_path):
    from .helpers import log_records

    # seat 0 sleeps 150 ms on its first two turns: little CPU, much wall time
    specs = [
        bot("sleepy", "slow_bot.py", BOT_DELAY_MS="150"),
        bot("fast", "instant_bot.py", BOT_SEED="2"),
        bot("fast2", "instant_bot.py", BOT_SEED="3"),
    ]
    clock = ClockSpec(move_ms=1000, mode="cpu", wall_ceiling_ms=5000)
    result, report = await play(specs, "kwartet", seed=3, log_dir=tmp_path, clock=clock)
    assert result.faults == [], result.faults
    acts = [r["act"] for r in log_records(result.log_path) if "act" in r and not r["act"]["fallback"]]
    assert acts and all("wall_ms" in a for a in acts)
    slow = [a for a in acts if a["seat"] == 0][:2]
    assert all(a["wall_ms"] >= 140 and a["ms"] < a["wall_ms"] for a in slow), slow
    assert report.ok, report.mismatches


@pytest.mark.parametrize("fraction", [0.25, 1.0])
async def test_think_times_around_the_limit_time_out_exactly_when_late(tmp_path, monkeypatch, fraction):
    """Bots whose think times straddle the limit (some well within, some just within,
    some just past, some far past), with the hand scope armed as lazily as allowed and
    far more lazily: every accepted reply came within the limit or was read late by the
    referee itself, every timeout came after the limit, and replay (which checks the
    log's timing) verifies."""
    import random

    from referee.runtime import game

    from .helpers import log_records

    monkeypatch.setattr(game, "SLACK_FRACTION", fraction)
    limit = 120
    rng = random.Random(fraction)
    specs = []
    for i in range(4):
        delays = [rng.choice([0, 30, 90, 110, 135, 200]) for _ in range(6)]
        specs.append(bot(f"b{i}", "slow_bot.py", BOT_DELAYS_MS=",".join(map(str, delays)), BOT_SEED=str(i + 1)))
    result, report = await play(specs, "happy-families", seed=11, log_dir=tmp_path, clock=ClockSpec(move_ms=limit))
    assert report.ok, report.mismatches
    assert result.reason == "complete"
    assert all(f.fault == "timeout" for f in result.faults if f.fault != "stale"), result.faults
    for f in result.faults:
        if f.fault == "timeout":
            assert f"within the time limit of {limit} ms" in f.detail
    records = log_records(result.log_path)
    acts = [r["act"] for r in records if "act" in r and not r["act"]["fallback"]]
    assert acts
    # a slow reply that was accepted must have been sent before the limit: its think time can
    # only exceed the limit by the referee's own lateness in reading it (small on a test machine)
    assert all(a["ms"] < limit + 1000 for a in acts)
