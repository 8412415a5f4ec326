"""Bot sessions: start-up failures, stderr, clocks, many games per process."""

from __future__ import annotations

import sys

import pytest
import trio

from referee.rules import get_variant
from referee.runtime import (BotCrashed, BotSession, BotSpec, BotStartError, BotTimeout, ClockSpec, GameSpec,
                             play_game, start_bots)

from .helpers import bot, live_in_group, log_records, play


async def test_missing_command_is_a_clear_start_error():
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotStartError, match="not found"):
            await BotSession.start(BotSpec("ghost", ["/nonexistent/bot"]), ClockSpec(), nursery)


async def test_shell_command_that_exits_reports_status_and_stderr():
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotCrashed, match=r"exit status 5.*oops"):
            await BotSession.start(BotSpec("sh", "echo oops >&2; exit 5"), ClockSpec(), nursery)


async def test_hello_timeout_kills_the_bot():
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotTimeout, match="startup limit of 300 ms"):
            await BotSession.start(BotSpec("sleepy", "sleep 30"), ClockSpec(startup_ms=300), nursery)


async def test_stderr_flood_never_blocks_and_tail_is_bounded(tmp_path):
    specs = [bot("noisy", "noisy_bot.py"), bot("a", "instant_bot.py"), bot("b", "instant_bot.py")]
    result, report = await play(specs, "kwartet", seed=2, log_dir=tmp_path, clock=ClockSpec(move_ms=5000))
    assert result.faults == [] and report.ok
    tails = [r["stderr"] for r in log_records(result.log_path) if "stderr" in r]
    noisy = tails[0]["tail"]
    assert 60000 < len(noisy) <= 65536 and noisy.endswith("noisy_bot: done\n")


async def test_cpu_clock_and_bank_are_recorded(tmp_path):
    specs = [bot("a", "instant_bot.py"), bot("b", "instant_bot.py", BOT_SEED="4"), bot("c", "instant_bot.py")]
    clock = ClockSpec(move_ms=1000, bank_ms=60000, mode="cpu")
    result, report = await play(specs, "chickens", seed=2, log_dir=tmp_path, clock=clock)
    assert result.faults == [] and report.ok
    assert all(t.count >= 24 for t in result.think_ms)  # 3 rounds of 8 plays, plus takes
    recs = log_records(result.log_path)
    turns = [m for r in recs if r.get("to") == 0 for m in r["out"] if m["type"] == "turn"]
    assert turns[0]["clock"] == {"left_ms": 60000, "move_ms": 1000}
    assert turns[-1]["clock"]["left_ms"] <= 60000
    assert recs[0]["clock"]["mode"] == "cpu" and recs[0]["clock"]["wall_ceiling_ms"] == 3000


async def test_cpu_clock_times_out_a_busy_bot(tmp_path):
    busy = BotSpec("busy", [sys.executable, "-c", _BUSY])
    clock = ClockSpec(move_ms=200, mode="cpu", wall_ceiling_ms=5000)
    result, _ = await play([busy, bot("a", "instant_bot.py"), bot("b", "instant_bot.py")], "kwartet", seed=1,
                           log_dir=tmp_path, clock=clock)
    assert result.faults[0].fault == "timeout" and "CPU time limit of 200 ms" in result.faults[0].detail


_BUSY = """
import sys, json
for raw in sys.stdin:
    m = json.loads(raw)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": 1, "name": "busy"}), flush=True)
    elif m["type"] == "turn":
        while True:
            pass
"""


async def test_one_process_plays_many_games_and_survives_a_faulted_game(tmp_path):
    """Session mode: the same processes play game after game; an illegal move
    forfeits one game but the session goes on (only timeouts/crashes end it)."""
    clock = ClockSpec(move_ms=3000)
    specs = [bot("bad", "illegal_bot.py", BOT_FAULT_AT="3"), bot("a", "instant_bot.py"), bot("b", "instant_bot.py")]
    rules = get_variant("authors")
    async with trio.open_nursery() as nursery:
        sessions = await start_bots(specs, clock, nursery)
        pids = [s.pid for s in sessions]
        try:
            results = []
            for g in range(4):
                results.append(await play_game(GameSpec(f"g-{g}", rules, 3, seed=g, clock=clock), sessions, tmp_path))
            assert [s.pid for s in sessions] == pids and all(s.alive for s in sessions)
            assert [r.forfeits for r in results].count([0]) == 1
            assert all(r.reason == "complete" for r in results)
        finally:
            for s in sessions:
                await s.close()
    assert all(live_in_group(p) == [] for p in pids)
