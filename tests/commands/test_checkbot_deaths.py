"""``referee check-bot`` explains a bot that dies before its hello (its stdout, stderr, exit status or
signal, the likely cause), and takes the limit, sandbox and runtime options of ``play``. Real processes."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from referee.cli import main

PY = sys.executable
ROOT = Path(__file__).resolve().parents[2]
FAKE_JVM = (
    "import sys; print('Error occurred during initialization of VM'); "
    "print('Could not allocate compressed class space: 1073741824 bytes'); sys.exit(1)"
)


def handshake(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run check-bot on one variant; return the status, the handshake line and its fix line."""
    status = main(["check-bot", "--variant", "chickens", *argv])
    out = capsys.readouterr().out
    lines = out.splitlines()
    i = next(i for i, line in enumerate(lines) if "handshake:" in line)
    fix = lines[i + 1] if i + 1 < len(lines) and "fix:" in lines[i + 1] else ""
    return status, lines[i], fix


def test_a_runtime_that_dies_at_once_shows_its_stdout_and_the_memory_fix(capsys) -> None:
    status, line, fix = handshake(capsys, "--", PY, "-c", FAKE_JVM)
    assert status == 1 and "FAIL handshake: the bot exited with status 1 before answering hello" in line
    assert "its stdout: 'Error occurred during initialization of VM" in line and "nothing to stderr" in line
    assert "memory limit (2048 MiB" in fix and "--memory-mb 4096" in fix and "--runtime" in fix


def test_the_memory_limit_option_reaches_the_bot_and_the_fix(capsys) -> None:
    # a bot that allocates 600 MiB dies under --memory-mb 256 with MemoryError, and the fix says 256 MiB
    hog = "import sys; b = bytearray(600 << 20); print('never')"
    status, line, fix = handshake(capsys, "--memory-mb", "256", "--", PY, "-c", hog)
    assert status == 1 and "MemoryError" in line and "memory limit (256 MiB" in fix


def test_a_signal_is_named_with_its_likely_cause(capsys) -> None:
    crash = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
    status, line, fix = handshake(capsys, "--", PY, "-c", crash)
    assert status == 1 and "was killed by SIGSEGV before answering hello" in line
    assert "invalid memory access" in fix


@pytest.mark.parametrize("sandbox", ["basic", "none"])
def test_sandbox_and_runtime_options_pass_a_good_bot(capsys, sandbox: str) -> None:
    bot = str(ROOT / "starters" / "python" / "bot.py")
    assert main(["check-bot", "--variant", "chickens", "--sandbox", sandbox, "--runtime", "python", "--", PY, bot]) == 0
    assert "ready for a league" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,words",
    [
        (["--runtime", "jav"], "--runtime: unknown runtime 'jav' (did you mean 'java'?)"),
        (["--memory-mb", "0"], "--memory-mb 0: expected a whole number >= 1"),
    ],
)
def test_bad_limit_options_are_one_error_line(capsys, argv: list[str], words: str) -> None:
    assert main(["check-bot", *argv, "--", PY, "-c", "pass"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and words in err and err.count("\n") == 1, err


def test_a_real_jvm_fails_at_the_default_limit_and_passes_with_the_preset(tmp_path: Path, capsys) -> None:
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        pytest.fail("java and javac are not installed: install openjdk-17-jdk-headless (apt-get install ...)")
    src = ROOT / "starters" / "java" / "src" / "Bot.java"
    import subprocess

    subprocess.run([javac, "-d", str(tmp_path / "classes"), str(src)], check=True, capture_output=True)
    command = ["--cwd", str(tmp_path), "--", "java", "-cp", "./classes", "Bot"]
    status, line, fix = handshake(capsys, *command)
    assert status == 1 and "Could not allocate compressed class space" in line
    assert "--runtime java" in fix and 'runtime = "java"' in fix
    assert main(["check-bot", "--variant", "chickens", "--runtime", "java", *command]) == 0
    assert "JavaStarter is ready for a league" in capsys.readouterr().out


def test_the_league_start_check_names_the_same_cause(tmp_path: Path, capsys) -> None:
    import json

    cfg = tmp_path / "league.toml"
    bot = str(ROOT / "starters" / "python" / "bot.py")
    cfg.write_text(
        "[[bots]]\nname = 'jvm'\ncommand = " + json.dumps([PY, "-c", FAKE_JVM]) + "\n"
        "[[bots]]\nname = 'ok'\ncommand = " + json.dumps([PY, bot]) + "\n"
        "[[variants]]\nname = 'happy-families'\nsizes = 2\n"
    )
    assert main(["run", str(cfg), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "bot 'jvm' (bots[0]) could not start" in err and "Traceback" not in err
    assert "likely cause: the runtime could not get the memory it asked for under the memory limit" in err
    assert "--memory-mb 4096" in err


def test_a_death_during_the_probes_is_explained_too(capsys) -> None:
    # answers hello, then dies of SIGSEGV on the next message: the probe says so, with its stderr
    bot = (
        "import os, signal, sys\n"
        "sys.stdin.readline()\n"
        'print(\'{"type":"hello","protocol":1,"name":"Segv"}\', flush=True)\n'
        "sys.stdin.readline()\n"
        "print('about to crash', file=sys.stderr, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGSEGV)\n"
    )
    assert main(["check-bot", "--variant", "chickens", "--", PY, "-c", bot]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "FAIL probe: quiet until its turn" in x)
    # (it dies while the referee writes or while it reads: either way the signal and its stderr are named)
    assert "was killed by SIGSEGV before" in line and "about to crash" in line, out
    assert "invalid memory access" in out


def test_the_games_clock_options_of_a_league(capsys) -> None:
    bot = str(ROOT / "starters" / "python" / "bot.py")
    argv = ["check-bot", "--variant", "chickens", "--clock", "cpu", "--bank-ms", "30000", "--", PY, bot]
    assert main(argv) == 0, capsys.readouterr().out
    assert main(["check-bot", "--bank-ms", "0", "--", PY, bot]) == 2
    assert "--bank-ms must be a positive number" in capsys.readouterr().err
