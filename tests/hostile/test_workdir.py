"""The bot's temporary folder is a tmpfs of its own: bounded in size and in
files (a bot that makes too many gets ENOSPC), never on the host's disk (the
host folder stays empty), and nothing is left to remove when the bot ends."""

from __future__ import annotations

import json
import os

import pytest
import trio

from referee.runtime import BotSession, BotSpec, ClockSpec, ResourceLimits, sandbox
from tests.sandboxes import needs_bwrap

from .conftest import assert_no_survivors, new_tag, zoo_command

CLOCK = ClockSpec(move_ms=2000, startup_ms=30000, grace_ms=200)
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the bots' tmpfs needs a root referee (the CI's is)")


@needs_root
@needs_bwrap
async def test_too_many_files_is_enospc_not_the_hosts_disk() -> None:
    tag = new_tag("filer")
    spec = BotSpec("filer", zoo_command("filer", tag, str(sandbox.WORKDIR_INODES + 100)))
    async with trio.open_nursery() as nursery:
        bot = await BotSession.start(spec, CLOCK, nursery)
        report = json.loads(bot.hello.version)
        host = bot._plan.workdir
        assert host is not None and report["cwd"] == host
        on_host = os.listdir(host)
        info = bot.sandbox_info()
        await bot.close()
        nursery.cancel_scope.cancel()
    assert report["error"] == "ENOSPC", report
    assert 0 < report["made"] < sandbox.WORKDIR_INODES, report
    assert on_host == [], "the bot's files went to the host's folder"
    assert info["workdir"].startswith("tmpfs"), info
    assert not await trio.Path(host).exists()
    await assert_no_survivors(tag)


@needs_root
async def test_basic_sandbox_bounds_the_temporary_folder_too() -> None:
    if not sandbox.private_proc_support(True):
        pytest.skip("no mount namespace for the basic sandbox here")
    tag = new_tag("filer")
    spec = BotSpec(
        "filer", zoo_command("filer", tag, str(sandbox.WORKDIR_INODES + 100)), limits=ResourceLimits(isolation="basic")
    )
    async with trio.open_nursery() as nursery:
        bot = await BotSession.start(spec, CLOCK, nursery)
        report = json.loads(bot.hello.version)
        info = bot.sandbox_info()
        await bot.close()
        nursery.cancel_scope.cancel()
    assert report["error"] == "ENOSPC", report
    assert info["sandbox"] == "basic" and info["workdir"].startswith("tmpfs"), info
    await assert_no_survivors(tag)
