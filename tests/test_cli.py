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
