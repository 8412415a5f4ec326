"""Removing a bot's temporary folder never stalls trio's loop: where the
folder is on the host's disk (no tmpfs of its own: a non-root referee), a
folder of 30k files takes long to remove, and other tables' turns must go on
meanwhile. Shown by event order, not by time: a task that keeps checkpointing
runs while the folder still exists after the removal has begun."""

from __future__ import annotations

import os
from pathlib import Path

import trio

from referee.runtime.sandbox import SpawnPlan


async def test_a_big_temporary_folder_is_removed_off_the_event_loop(tmp_path: Path) -> None:
    folder = tmp_path / "referee-bot-filer-test"
    (folder / "sub").mkdir(parents=True)
    for i in range(30000):
        os.close(os.open(folder / ("sub" if i % 2 else ".") / f"f{i}", os.O_CREAT | os.O_WRONLY, 0o600))
    plan = SpawnPlan(argv=["true"], cwd=None, env=None, preexec=None, workdir=str(folder))
    started = trio.Event()
    done = trio.Event()
    ticks_while_there = 0

    async def other_table() -> None:
        nonlocal ticks_while_there
        await started.wait()
        while not done.is_set():
            if folder.exists():
                ticks_while_there += 1
            await trio.lowlevel.checkpoint()

    async def release() -> None:
        started.set()
        await plan.release()
        done.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other_table)
        nursery.start_soon(release)
    assert not folder.exists() and plan.workdir is None
    assert ticks_while_there > 0, "the loop was blocked while the folder was removed"
    assert not os.listdir(tmp_path)
