"""open_bots: no bot process outlives the block, on a normal exit, an exception or a cancel."""

from __future__ import annotations

import sys

import pytest
import trio

from referee.core.errors import BotError
from referee.runtime import BotSpec, ClockSpec, open_bots

from .helpers import ROOT, live_in_group

SDK = [sys.executable, str(ROOT / "protocol" / "sdk.py")]
CLOCK = ClockSpec(grace_ms=200)


def _specs(n: int = 2) -> list[BotSpec]:
    return [BotSpec(name=f"b{i}", command=[*SDK, str(i)]) for i in range(n)]


def _assert_gone(pids: list[int]) -> None:
    assert pids and all(live_in_group(p) == [] for p in pids)


async def test_a_normal_exit_closes_every_bot() -> None:
    async with open_bots(_specs(), CLOCK) as bots:
        pids = [s.process.pid for s in bots.sessions]
        assert all(s.alive for s in bots.sessions) and [s.name for s in bots.sessions] == ["b0", "b1"]
        await bots.restart(1)  # a replaced process is closed too
        pids.append(bots.sessions[1].process.pid)
    _assert_gone(pids)


async def test_an_exception_kills_every_bot_and_propagates() -> None:
    pids: list[int] = []
    with pytest.raises(RuntimeError, match="boom"):
        async with open_bots(_specs(), CLOCK) as bots:
            pids = [s.process.pid for s in bots.sessions]
            raise RuntimeError("boom")
    _assert_gone(pids)


async def test_a_cancel_kills_every_bot() -> None:
    pids: list[int] = []
    with trio.move_on_after(30) as scope:
        async with open_bots(_specs(), CLOCK) as bots:
            pids = [s.process.pid for s in bots.sessions]
            scope.cancel()
            await trio.sleep_forever()
    assert scope.cancelled_caught
    _assert_gone(pids)


async def test_a_bot_that_cannot_start_raises_on_entry_and_leaves_none_behind() -> None:
    specs = [*_specs(1), BotSpec(name="quitter", command=[sys.executable, "-c", "pass"])]
    with pytest.raises(BotError):
        async with open_bots(specs, CLOCK):
            raise AssertionError("not reached")
