"""The watcher and the leftover probe are files of the package, run as files:
``ps`` shows a short line naming the watcher, not its source."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from referee.runtime import BotSession, BotSpec, ClockSpec, ResourceLimits
from referee.runtime.sandbox import child
from tests.sandboxes import SANDBOXES

ROOT = Path(__file__).resolve().parents[3]
BOT = [sys.executable, str(ROOT / "sample_bots" / "random_bot.py")]


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_the_watchers_command_line_is_short_and_names_its_file(kind: str) -> None:
    spec = BotSpec("w", BOT, limits=ResourceLimits(isolation=kind))
    async with trio.open_nursery() as nursery:
        session = await BotSession.start(spec, ClockSpec(startup_ms=10000), nursery)
        argv = (await trio.Path(f"/proc/{session.pid}/cmdline").read_bytes()).rstrip(b"\0").split(b"\0")
        await session.close()
        nursery.cancel_scope.cancel()
    line = b" ".join(argv)
    assert argv[1:4] == [b"-I", b"-S", os.fsencode(child.WATCHER)], argv
    # (its arguments: the bot's pid, temporary folder and control groups - one per v1 controller)
    assert b"-c" not in argv and max(map(len, argv)) < 256 and len(line) < 1024, line
    assert os.path.basename(child.WATCHER) == "watcher.py"


def test_the_scripts_are_files_of_the_package() -> None:
    """The watcher imports without running (its work is under ``__main__``) and
    takes no module from the referee (run with ``-I -S``, it sees none); the
    probe is valid POSIX shell."""
    assert os.path.isfile(child.WATCHER) and os.path.isfile(child.PROBE)
    code = f"import runpy; runpy.run_path({child.WATCHER!r}, run_name='imported'); print('ok')"
    run = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=30)
    assert run.stdout.strip() == "ok", run.stderr
    assert "referee" not in Path(child.WATCHER).read_text().split('"""', 2)[2].split("def ")[0]
    assert subprocess.run(["/bin/sh", "-n", child.PROBE], timeout=30).returncode == 0
