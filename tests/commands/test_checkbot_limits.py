"""``referee check-bot --max-line / --retries / --max-decisions``: the fault options of ``referee play``
(one definition, :func:`referee.commands.play.add_limit_options`) change what check-bot enforces.
Real bot processes; one variant per run to keep it short, the runs made by one module fixture, one
at a time (tests/parallel_cli.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from referee.cli import main
from tests.parallel_cli import Run, check_bots, checked

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"
PY = sys.executable
# the module's check-bot runs are made once (one fixture, on one worker)
pytestmark = pytest.mark.xdist_group("checkbot-limits")


def argv(*argv: str) -> tuple[str, ...]:
    return ("--variant", "kwartet", "--grace-ms", "200", *argv)


WIDE = ("--", PY, str(BOTS / "wide_bot.py"))  # every reply is a 100 kB line
# on its 10th turn (past the probes) it prints a debug line, then the legal reply (the retry)
RETRIED = ("--", f"env BOT_FAULT_AT=10 BOT_THEN_LEGAL=1 {PY} {BOTS / 'nonjson_bot.py'}")
RUNS = {
    "wide": argv("--max-line", "200000", *WIDE),
    "narrow": argv("--max-line", "65536", *WIDE),
    "retries": argv("--retries", "1", *RETRIED),
    "no retries": argv(*RETRIED),
    "max decisions": argv("--max-decisions", "5", "--", PY, str(ROOT / "sample_bots" / "random_bot.py")),
}


@pytest.fixture(scope="module")
def runs() -> dict[tuple[str, ...], Run]:
    # one at a time: these runs keep the short 200 ms grace after bye, which a bot's exit missed
    # with three check-bots side by side on a loaded machine ("still running 200 ms after bye")
    return check_bots(RUNS.values(), at_once=1)


def test_max_line_bounds_the_bots_lines(runs: dict[tuple[str, ...], Run]) -> None:
    status, out = checked(runs, RUNS["wide"])
    assert status == 0 and "FAIL" not in out, out
    status, out = checked(runs, RUNS["narrow"])
    assert status == 1, out
    assert "longer than 65536 bytes" in out, out


def test_retries_give_a_malformed_reply_another_try(runs: dict[tuple[str, ...], Run]) -> None:
    status, out = checked(runs, RUNS["retries"])
    assert status == 0 and "FAIL" not in out, out
    status, out = checked(runs, RUNS["no retries"])
    assert status == 1 and "FAIL game: kwartet" in out and "malformed" in out, out


def test_max_decisions_bounds_self_play(runs: dict[tuple[str, ...], Run]) -> None:
    status, out = checked(runs, RUNS["max decisions"])
    assert status == 1, out
    assert "FAIL self-play" in out and "no end after 5 decisions" in out, out


@pytest.mark.parametrize(
    "argv,words",
    [
        (["--max-line", "10"], "--max-line at least 64"),
        (["--retries", "-1"], "--retries must be >= 0"),
        (["--max-decisions", "0"], "--max-decisions must be at least 1"),
        (["--move-ms", "0"], "--move-ms must be a positive number"),
    ],
)
def test_bad_fault_options_are_one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str], words: str) -> None:
    status = main(["check-bot", *argv, "--", PY, str(ROOT / "sample_bots" / "random_bot.py")])
    out, err = capsys.readouterr()
    assert status == 2 and words in err and "Traceback" not in err, err
