"""The bot pool starts the next session cut's processes ahead (while the
current ones play): at the cut they are the ones seated, and a pool closed
before its cut closes them too."""

from __future__ import annotations

import sys
from pathlib import Path

import trio
import trio.testing

from referee.league.pool import open_pool
from referee.league.work import Entrant
from referee.runtime import BotSpec, ClockSpec

BOT = str(Path(__file__).resolve().parents[2] / "sample_bots" / "random_bot.py")


def _lineup(n: int) -> list[Entrant]:
    return [Entrant(i, BotSpec(f"b{i}", [sys.executable, BOT]), ClockSpec(startup_ms=20000)) for i in range(n)]


async def test_the_next_cuts_processes_start_ahead_and_are_seated_at_the_cut() -> None:
    async with open_pool(_lineup(2), max_line=65536) as pool:
        first = await pool.seat([0, 1])
        pool.prestart()
        pool.prestart()  # (once: a set started ahead is kept until the cut)
        assert pool._next is not None
        ahead = pool._next[0]
        with trio.fail_after(30):
            await pool._next[1].wait()  # up before the cut, while the first set is still alive
        assert all(s is not None and s.alive for s in ahead) and all(s.alive for s in first)
        await pool.renew()
        second = await pool.seat([0, 1])
        assert second == ahead and {s.pid for s in second}.isdisjoint({s.pid for s in first})
        await trio.testing.wait_all_tasks_blocked()  # the cut's background close has begun
        assert all(s._closing is not None for s in first)  # the cut is closing them, in the background
        with trio.fail_after(30):
            for s in first:
                await s.close()  # waits for that close (a second close waits for the first)
        assert all(s.closed and s.process.returncode is not None for s in first)
    assert not any(s.alive for s in second)


async def test_a_cut_does_not_wait_for_the_old_processes_to_exit_and_the_pool_does() -> None:
    """The table plays on at a cut while the old set says goodbye; none outlives the pool."""
    gate = trio.Event()
    async with open_pool(_lineup(2), max_line=65536) as pool:
        first = await pool.seat([0, 1])
        real_close = first[0].close

        async def slow_close() -> None:  # the old process takes its time over bye
            await gate.wait()
            await real_close()

        first[0].close = slow_close  # type: ignore[method-assign]
        await pool.renew()
        second = await pool.seat([0, 1])
        assert all(s.alive for s in second)
        assert not first[0].closed  # still closing: the cut did not wait for it
        gate.set()
    assert all(s.closed and s.process.returncode is not None for s in [*first, *second])


async def test_a_pool_closed_before_its_cut_closes_the_processes_started_ahead() -> None:
    async with open_pool(_lineup(2), max_line=65536) as pool:
        await pool.seat([0, 1])
        pool.prestart()
        assert pool._next is not None
        ahead = pool._next[0]
        with trio.fail_after(30):
            await pool._next[1].wait()
        assert all(s is not None and s.alive for s in ahead)
    assert pool._next is None and not any(s is not None and s.alive for s in ahead)
