"""The command line turns interrupts and bad paths into one clear line, never a traceback."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from referee.cli import main

REPO = Path(__file__).resolve().parents[2]
RANDOM_BOT = [sys.executable, str(REPO / "sample_bots" / "random_bot.py")]


def test_ctrl_c_during_check_bot_exits_130_without_traceback() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "referee", "check-bot", "--", *RANDOM_BOT],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    time.sleep(1.0)
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
