"""The command line as a service manager stops it (referee.cli): SIGTERM and SIGHUP are Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from tests.league.conftest import REPO, processes_with

SLOW_BOT = REPO / "tests" / "bots" / "slow_bot.py"


def test_sigterm_stops_a_game_being_played_with_no_bot_left(tmp_path: Path) -> None:
    tag = f"play-sigterm-{uuid.uuid4().hex}"
    bot = f"env BOT_DELAY_MS=3000 BOT_SLOW_TURNS=1000 {sys.executable} {SLOW_BOT} {tag}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee", "play", "kwartet", "--players", "3", "--bot", f"s={bot}"]
        + ["--move-ms", "20000", "--log", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 60
    while len(processes_with(tag)) < 3 and time.monotonic() < deadline:  # the three bots are playing
        time.sleep(0.1)
    assert processes_with(tag), "the bots should be running now"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "interrupted" in err and "Traceback" not in err
    assert processes_with(tag) == []


def test_a_late_asyncgen_finalizer_after_a_stop_prints_no_traceback(capsys) -> None:
    """An async generator collected after trio.run returned (a command stopped by a signal) makes
    trio's finalizer raise RunFinishedError into sys.unraisablehook: no traceback for the user;
    any other unraisable exception is still reported."""
    import sys as _sys

    import trio

    from referee import cli

    class Dying:
        def __init__(self, exc: BaseException) -> None:
            self.exc = exc

        def __del__(self) -> None:
            raise self.exc

    saved = _sys.unraisablehook
    try:
        _sys.unraisablehook = _sys.__unraisablehook__
        cli._quiet_late_asyncgens()
        cli._quiet_late_asyncgens()  # installed once
        Dying(trio.RunFinishedError("run() has exited"))
        assert capsys.readouterr().err == ""
        Dying(ValueError("boom"))
        assert "boom" in capsys.readouterr().err
    finally:
        _sys.unraisablehook = saved
