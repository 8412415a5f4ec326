"""The bots' limit, sandbox and runtime options of ``referee play`` and ``duel`` (``check-bot``'s are in
test_checkbot_deaths.py): they reach the bot processes, and bad values are one error line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from referee.cli import main
from referee.runtime.gamelog import read_log_bytes

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
STARTER = f"{PY} {ROOT / 'starters' / 'python' / 'bot.py'}"


def test_play_runs_its_bots_in_the_sandbox_asked_for(tmp_path: Path) -> None:
    argv = ["play", "chickens", "--bot", f"a={STARTER}", "--players", "3", "--seed", "3", "--log", str(tmp_path)]
    assert main([*argv, "--sandbox", "basic", "--runtime", "python", "--memory-mb", "1024", "--game-id", "g"]) == 0
    header = json.loads(read_log_bytes((tmp_path / "g.jsonl").read_bytes()).splitlines()[0])
    assert [s["sandbox"]["sandbox"] for s in header["seats"]] == ["basic"] * 3, header


@pytest.mark.parametrize(
    "argv,words",
    [
        (["--sandbox", "nope"], "argument --sandbox: invalid choice: 'nope'"),
        (["--runtime", "pyhton"], "--runtime: unknown runtime 'pyhton' (did you mean 'python'?)"),
        (["--cpu-seconds", "0"], "--cpu-seconds 0: expected a whole number >= 1"),
    ],
)
@pytest.mark.parametrize("command", ["play", "duel"])
def test_bad_limit_options_are_one_error_line(capsys, command: str, argv: list[str], words: str) -> None:
    try:
        status = main([command, "kwartet", "--bot", f"a={STARTER}", "--bot", f"b={STARTER}", *argv])
    except SystemExit as exc:  # argparse's own errors (an invalid choice) end with SystemExit(2)
        status = exc.code  # type: ignore[assignment]
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and words in err, err
    assert "Traceback" not in err
