"""Every zoo bot plays a real 4-seat game through the runtime's ``play_game``
(the other seats are the fast legal zoo bot, one game uses
``sample_bots/random_bot.py``). Each must end with the expected fault at its
seat (and none at the others), a complete game, a log that ``referee replay``
verifies, and no surviving process."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.cli import main
from referee.rules import get_variant
from referee.runtime import (
    BotCrashed,
    BotMalformed,
    BotSession,
    BotSpec,
    ClockSpec,
    FaultPolicy,
    GameSpec,
    ResourceLimits,
    play_game,
)
from referee.runtime.sandbox import namespace_support
from referee.runtime.session import STDERR_TAIL

from .conftest import PYTHON, REPO, assert_no_survivors, new_tag, zoo_command

CLOCK = ClockSpec(move_ms=300, startup_ms=8000, grace_ms=300)
SMALL_MEMORY = ResourceLimits(address_space=160 << 20)

# bot -> (expected faults at its seat, extra args, limits, retries)
CASES: dict[str, tuple[set[str], tuple[str, ...], ResourceLimits | None, int]] = {
    "silent": ({"timeout"}, (), None, 0),
    "sleepy": ({"timeout", "stale"}, (), None, 0),
    "crasher": ({"crash"}, ("2",), None, 0),
    "spew": ({"malformed"}, ("1024",), None, 0),  # 64 MiB without a newline
    "giantline": ({"malformed"}, (), None, 0),
    "badutf8": ({"malformed"}, (), None, 0),
    "nonjson": ({"malformed"}, (), None, 0),
    "wrongshape": ({"malformed"}, (), None, 0),
    "deepjson": ({"malformed"}, (), None, 0),
    "deepjson-late": ({"timeout", "stale"}, ("late",), None, 0),
    "illegal": ({"illegal"}, (), None, 0),
    "illegal-retries": ({"illegal"}, (), None, 2),
    "staleid": ({"stale"}, (), None, 0),
    "stderrflood": (set(), ("2000",), None, 0),
    "memhog": ({"crash"}, (), SMALL_MEMORY, 0),
    "forker": ({"crash"}, (), None, 0),
    "closer": ({"crash"}, (), None, 0),
    "stdincloser": ({"crash"}, (), None, 0),
    "slowloris": ({"timeout"}, (), None, 0),
    "assassin": ({"crash"}, (), None, 0),
    "byeignorer": (set(), (), None, 0),
}


async def play_with(
    hostile: str,
    args: tuple[str, ...],
    limits: ResourceLimits | None,
    retries: int,
    tmp_path: Path,
    *,
    seat: int = 1,
    others: list[str] | None = None,
    variant: str = "kwartet",
) -> tuple[Any, str]:
    """One game: the hostile bot at ``seat``, legal bots elsewhere; returns
    (GameResult, tag) after every session is closed."""
    tag = new_tag(hostile)
    bot = hostile.split("-")[0]
    specs = []
    for i in range(4):
        if i == seat:
            specs.append(BotSpec(hostile, zoo_command(bot, tag, *args), limits=limits))
        else:
            cmd = (others or [])[i] if others else None
            specs.append(BotSpec(f"legal{i}", cmd or zoo_command("legal", new_tag("legal"))))
    # the memory hog gets time to fill its address space: its fault must be the crash, not a timeout
    clock = ClockSpec(move_ms=3000, startup_ms=8000, grace_ms=300) if bot == "memhog" else CLOCK
    if bot == "sleepy":  # answers at 1.5 x move_ms: 200 ms after the limit, well inside the stale window
        clock = ClockSpec(move_ms=400, startup_ms=8000, grace_ms=300)
    if hostile == "deepjson-late":  # answers 600 ms after the limit: within the 1,000 ms stale window
        clock = ClockSpec(move_ms=1000, startup_ms=8000, grace_ms=300)
    spec = GameSpec(
        game_id=f"zoo-{hostile}",
        rules=get_variant(variant),
        players=4,
        seed=1234 + seat,
        clock=clock,
        policy=FaultPolicy(retries=retries),
    )
    async with trio.open_nursery() as nursery:
        sessions = [await BotSession.start(s, clock, nursery) for s in specs]
        try:
            result = await play_game(spec, sessions, tmp_path)
        finally:
            for s in sessions:
                t0 = trio.current_time()
                await s.close()
                if s.name == "byeignorer":  # it got its grace (a lower bound only: never a speed test)
                    assert trio.current_time() - t0 >= clock.grace_ms / 1000 * 0.9
        nursery.cancel_scope.cancel()
    return result, tag


def _status_kib(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)


def _reset_peak_rss() -> int | None:
    """Reset this process's peak RSS (Linux: clear_refs 5); return the current RSS."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return _status_kib("VmRSS")
    except (OSError, KeyError):
        return None


def _peak_rss() -> int:
    return _status_kib("VmHWM")


def check_replay(log_path: str) -> None:
    assert main(["replay", log_path]) == 0, f"referee replay failed on {log_path}"


@pytest.mark.parametrize("hostile", list(CASES))
async def test_zoo_bot_in_a_game(hostile: str, tmp_path: Path) -> None:
    expected, args, limits, retries = CASES[hostile]
    base_rss = _reset_peak_rss()
    result, tag = await play_with(hostile, args, limits, retries, tmp_path)
    if hostile == "spew" and base_rss is not None:
        growth = _peak_rss() - base_rss
        assert growth < 24 << 20, f"the referee's peak memory grew by {growth >> 20} MiB while a bot spewed 64 MiB"
    assert result.reason == "complete", result.detail
    at_seat = {f.fault for f in result.faults if f.seat == 1}
    elsewhere = [f for f in result.faults if f.seat != 1]
    assert not elsewhere, f"other seats got faults: {elsewhere}"
    assert at_seat == expected, [f.to_json() for f in result.faults]
    assert result.forfeits == ([1] if expected else [])
    if expected:
        assert result.win_shares[1] == 0
    assert abs(sum(result.win_shares) - 1) < 1e-9
    records = [json.loads(line) for line in (await trio.Path(result.log_path).read_text()).splitlines()]
    footer = records[-1]["footer"]
    assert footer["reason"] == "complete"
    tails = {r["stderr"]["seat"]: r["stderr"]["tail"] for r in records if "stderr" in r}
    assert all(len(t.encode()) <= STDERR_TAIL + 4 for t in tails.values())
    if hostile == "stderrflood":
        assert "stderr flood" in tails[1]
    if hostile == "assassin" and namespace_support(True)[0]:  # its kills named pids of its own namespace
        header = records[0]
        attempts = next(s["hello"]["version"] for s in header["seats"] if s["bot"] == "assassin")
        # with its private /proc it cannot even find the referee; with the host's it could, but
        # kill() would look the pid up in its own namespace: "No such process"
        assert "referee pid invisible" in attempts or f"referee {os.getpid()}: No such process" in attempts, attempts
        assert "killed?!" not in attempts
    if hostile == "nonjson":
        assert any("stderr" in f.detail for f in result.faults), "the detail should point to stderr"
    if hostile == "illegal-retries":
        assert sum(1 for r in records if "retry" in r) == retries
    check_replay(result.log_path)
    await assert_no_survivors(tag)


async def test_zoo_with_sample_random_bot(tmp_path: Path) -> None:
    """The sample random bot as a neighbour of a crashing bot (happy families)."""
    random_bot = [PYTHON, str(REPO / "sample_bots" / "random_bot.py")]
    result, tag = await play_with(
        "crasher", ("3",), None, 0, tmp_path, others=[random_bot] * 4, variant="happy-families"
    )
    assert {f.fault for f in result.faults} == {"crash"}
    check_replay(result.log_path)
    await assert_no_survivors(tag)


async def test_bot_flooding_before_hello(tmp_path: Path) -> None:
    tag = new_tag("prehello")
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotMalformed) as info:
            await BotSession.start(BotSpec("prehello", zoo_command("prehello", tag)), CLOCK, nursery)
        nursery.cancel_scope.cancel()
    assert "longer than" in str(info.value)
    await assert_no_survivors(tag)


async def test_bot_exiting_before_hello(tmp_path: Path) -> None:
    tag = new_tag("nohello")
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotCrashed) as info:
            await BotSession.start(BotSpec("nohello", zoo_command("nohello", tag)), CLOCK, nursery)
        nursery.cancel_scope.cancel()
    assert "before answering hello" in str(info.value) and "goodbye before hello" in str(info.value)
    await assert_no_survivors(tag)
