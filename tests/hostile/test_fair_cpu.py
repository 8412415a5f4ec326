"""Fair CPU: every bot's control group has the same CPU weight, so a bot that
runs many busy processes (each in its own session) cannot starve the other
bots at its table; and every bot runs under SCHED_BATCH (the same share, no
preempting the referee whenever a line wakes it), which the seccomp filter
keeps it from undoing. Nothing here measures speed: the tests read the
weights, the group membership and the policy, and play a table with a hog
seated and a move time far above what a legal bot needs, asserting no
timeouts."""

from __future__ import annotations

import pytest
import trio

from referee.rules import get_variant
from referee.runtime import BotSession, BotSpec, ClockSpec, GameSpec, ResourceLimits, cgroups, play_game
from tests.sandboxes import SANDBOXES

from .conftest import assert_no_survivors, hello_report, new_tag, survivors, zoo_command

LAYOUT = cgroups.layout()
needs_weight = pytest.mark.skipif(
    LAYOUT is None or LAYOUT.weight is None, reason="no cpu controller for the bots' groups on this machine"
)
HOGS = 24


async def _wait_for_spinners(tag: str, n: int) -> list[int]:
    with trio.move_on_after(20):
        while len(survivors(tag)) < n:  # noqa: ASYNC110  polls the kernel's process table: no trio event to wait on
            await trio.sleep(0.05)
    return survivors(tag)


@needs_weight
async def test_hog_processes_share_one_weighted_group() -> None:
    tag = new_tag("hog")
    clock = ClockSpec(move_ms=2000, startup_ms=20000, grace_ms=200)
    async with trio.open_nursery() as nursery:
        hog = await BotSession.start(BotSpec("hog", zoo_command("hog", tag, str(HOGS))), clock, nursery)
        try:
            cg = hog._plan.cgroup
            assert cg is not None and LAYOUT is not None and LAYOUT.weight is not None
            expected = cgroups.CPU_SHARES if "v1" in LAYOUT.cpu_weight else cgroups.CPU_WEIGHT
            assert cg.weight_value() == expected
            assert hog.sandbox_info()["cpu"] == LAYOUT.cpu_weight != "none"
            pids = await _wait_for_spinners(tag, HOGS + 1)
            assert len(pids) >= HOGS + 1, pids
            for pid in pids:  # every spinner (own session and all) is weighed inside the bot's group
                lines = (await trio.Path(f"/proc/{pid}/cgroup").read_text()).splitlines()
                hierarchy = "cpu" if "v1" in LAYOUT.cpu_weight else ""
                groups = dict((ln.split(":")[1], ln.split(":", 2)[2]) for ln in lines)
                mine = [path for ctl, path in groups.items() if hierarchy in ctl.split(",") or ctl == hierarchy]
                assert mine and mine[0].endswith("/" + cg.name), (pid, lines)
        finally:
            await hog.close()
        nursery.cancel_scope.cancel()
    await assert_no_survivors(tag)


@needs_weight
async def test_a_hog_at_the_table_does_not_make_the_others_time_out() -> None:
    tag = new_tag("hog")
    others = new_tag("legal")
    clock = ClockSpec(move_ms=2000, startup_ms=20000, grace_ms=200, mode="cpu")
    specs = [BotSpec("hog", zoo_command("hog", tag, str(HOGS)))] + [
        BotSpec(f"legal{i}", zoo_command("legal", others)) for i in range(2)
    ]
    rules = get_variant("kwartet")
    async with trio.open_nursery() as nursery:
        sessions = [await BotSession.start(s, clock, nursery) for s in specs]
        try:
            await _wait_for_spinners(tag, HOGS + 1)
            res = await play_game(GameSpec("hog-table", rules, 3, seed=7, clock=clock), sessions, None)
        finally:
            for s in sessions:
                await s.close()
        nursery.cancel_scope.cancel()
    assert [f for f in res.faults if f.seat != 0] == [], res.faults
    assert res.reason == "complete"
    await assert_no_survivors(tag)
    await assert_no_survivors(others)


@pytest.mark.parametrize("kind", [*SANDBOXES, "none"])
async def test_every_bot_runs_under_sched_batch_and_cannot_switch_back(kind: str) -> None:
    """The policy is set in the forked child before exec, so the bot, the
    processes it starts and (bwrap) the sandbox's own all have it. Under the
    seccomp filter (bwrap, basic) the ways back to SCHED_OTHER fail (EPERM,
    ENOSYS for sched_setattr) while setting the policy a thread has works (mono
    does it for every thread); without a sandbox nothing stops a bot from
    switching back."""
    tag = new_tag("scheduler")
    clock = ClockSpec(move_ms=2000, startup_ms=20000, grace_ms=200)
    spec = BotSpec("scheduler", zoo_command("scheduler", tag), limits=ResourceLimits(isolation=kind))
    report = await hello_report(spec, clock)
    assert report["policy"] == "batch" and report["child"] == "batch", report
    assert report["same"] == "ok", report
    if kind != "none":
        assert report["sched_setscheduler"] == report["reset_on_fork"] == "EPERM", report
        assert report.get("sched_setattr", "ENOSYS") == "ENOSYS", report
        assert report["after"] == "batch", report
    await assert_no_survivors(tag)
