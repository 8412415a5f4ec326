"""The command line turns interrupts and bad paths into one clear line, never a traceback."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from referee.cli import main

REPO = Path(__file__).resolve().parents[2]
RANDOM_BOT = [sys.executable, str(REPO / "sample_bots" / "random_bot.py")]


def _running(marker: str, besides: int) -> bool:
    """Whether a process other than ``besides`` has ``marker`` in its command line."""
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and int(d.name) != besides and marker.encode() in (d / "cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


def test_ctrl_c_during_check_bot_exits_130_without_traceback(tmp_path: Path) -> None:
    bot = tmp_path / f"bot-{os.getpid()}-{time.monotonic_ns()}.py"
    shutil.copy(RANDOM_BOT[1], bot)
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee", "check-bot", "--", sys.executable, str(bot)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    deadline = time.monotonic() + 60
    while not _running(bot.name, proc.pid) and time.monotonic() < deadline:  # check-bot is at work with the bot
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err and b"interrupted" in err


def test_log_dir_that_is_a_file_is_a_clear_error(tmp_path: Path, capsys) -> None:
    f = tmp_path / "afile"
    f.write_text("x")
    assert main(["check-bot", "--log-dir", str(f), "--", *RANDOM_BOT]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --log-dir") and "Traceback" not in err
