"""The seccomp filter (bubblewrap, and the basic sandbox): two bots that try to signal each other
through file locks on a file every sandbox mounts (/etc/passwd) get EPERM,
other calls no bot needs are denied, and ordinary programs (fork, exec) still
run under it. (The sample bots, Python, JavaScript and C, play under it in
tests/sample_bots.)"""

from __future__ import annotations

import json

import pytest
import trio

from referee.runtime import BotSession, BotSpec, ClockSpec, ResourceLimits, seccomp
from tests.sandboxes import SANDBOXES

from .conftest import assert_no_survivors, hello_report, new_tag, zoo_command

CLOCK = ClockSpec(move_ms=2000, startup_ms=10000, grace_ms=200)


def test_the_filter_is_built_with_libseccomp() -> None:
    assert seccomp.program() is not None, seccomp.status()  # pyseccomp is a dependency, libseccomp2 on CI
    assert seccomp.status().startswith("on")


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_lock_channel_between_two_bots_is_closed(kind: str) -> None:
    tag = new_tag("locks")
    async with trio.open_nursery() as nursery:
        offline = ResourceLimits(network=False, isolation=kind)
        sender = await BotSession.start(
            BotSpec("sender", zoo_command("lockchannel", tag, "send"), limits=offline), CLOCK, nursery
        )
        receiver = await BotSession.start(
            BotSpec("receiver", zoo_command("lockchannel", tag, "receive"), limits=offline), CLOCK, nursery
        )
        sent, seen = json.loads(sender.hello.version), json.loads(receiver.hello.version)
        info = sender.sandbox_info()
        await sender.close()
        await receiver.close()
        nursery.cancel_scope.cancel()
    assert sent == {"setlk": "EPERM", "ofd": "EPERM", "flock": "EPERM"}, sent
    assert seen == {"setlk": "EPERM", "ofd": "EPERM", "flock": "EPERM"}, seen
    assert info["seccomp"].startswith("on"), info
    await assert_no_survivors(tag)


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_other_calls_are_denied_and_programs_still_run(kind: str) -> None:
    tag = new_tag("syscalls")
    spec = BotSpec("syscalls", zoo_command("syscalls", tag), limits=ResourceLimits(isolation=kind))
    report = await hello_report(spec, CLOCK)
    assert report["add_key"] == "EPERM"
    assert report["personality"] == "EPERM"
    assert report["inotify_init1"] == "EPERM"
    assert report["io_uring_setup"] == "ENOSYS"
    assert report.get("clone3", "ENOSYS") == "ENOSYS"
    assert report["subprocess"] == "hi"
    # another ABI's call numbers mean other calls: such a call kills the process
    assert report.get("i386", "SIGSYS") == "SIGSYS", report
    assert report.get("x32", "SIGSYS") == "SIGSYS", report
    await assert_no_survivors(tag)


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_a_build_may_lock_its_own_files(kind: str, tmp_path) -> None:
    """go, cargo and gradle lock files in the bot's folder while they build: a build (at no table)
    runs under the filter with file locks allowed; the bots themselves never are."""
    import sys

    from referee.runtime.build import run_build

    script = (
        "import fcntl\n"
        "with open('go.mod', 'w+') as f:\n"
        "    fcntl.flock(f, fcntl.LOCK_EX)\n"
        "    fcntl.lockf(f, fcntl.LOCK_SH)\n"
        "print('locked')\n"
    )
    result = await run_build("b", [sys.executable, "-c", script], str(tmp_path), limits=ResourceLimits(isolation=kind))
    assert result.ok and "locked" in result.output, result.output
    assert "file locks allowed" in seccomp.status(locks=True) and "file locks allowed" not in seccomp.status()
