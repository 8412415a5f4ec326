"""Issue 10's endless game through the real CLI: the old WRITING-A-BOT example (two copies at a
kwartet table with the tracker) now ends "stalled" in seconds; the fixed example ends complete."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
LOOPING = f"{PY} {ROOT / 'tests' / 'bots' / 'looping_bot.py'}"
TRACKER = f"{PY} {ROOT / 'sample_bots' / 'tracker_bot.py'}"


def referee(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run(
        [PY, "-m", "referee", *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd
    )


def doc_example_bot(tmp_path: Path) -> str:
    """The bot of docs/WRITING-A-BOT.md section 1, saved as sample_bots/my_bot.py of a copy of the repository
    layout (its first lines find protocol/sdk.py one folder up, as the page says)."""
    text = (ROOT / "docs" / "WRITING-A-BOT.md").read_text()
    section = text[text.index("## 1. Python") : text.index("## 2. JavaScript")]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    (tmp_path / "sample_bots").mkdir()
    (tmp_path / "protocol").symlink_to(ROOT / "protocol")
    bot = tmp_path / "sample_bots" / "my_bot.py"
    bot.write_text(code.group(1))
    return f"{PY} {bot}"


def test_the_issue_10_game_ends_stalled_and_replays(tmp_path: Path) -> None:
    res = referee(
        "play",
        "kwartet",
        "--seed",
        "1",
        "--bot",
        f"a={LOOPING}",
        "--bot",
        f"b={LOOPING}",
        "--bot",
        f"t={TRACKER}",
        "--log",
        str(tmp_path),
    )
    assert res.returncode == 0, res.stderr
    assert "kwartet-3p-000001 (stalled)" in res.stdout
    assert "stalled: 100 asks in a row moved no card" in res.stdout
    [log] = tmp_path.glob("*.jsonl")
    assert log.stat().st_size < 1_000_000  # it was 92 MB and 100,000 decisions
    rep = referee("replay", "--quiet", str(log))
    assert rep.returncode == 0 and "verified: 1 hand(s)" in rep.stdout, rep.stdout + rep.stderr


def test_the_fixed_example_bot_ends_the_same_game_complete(tmp_path: Path) -> None:
    mine = doc_example_bot(tmp_path)
    res = referee(
        "play",
        "kwartet",
        "--seed",
        "1",
        "--bot",
        f"a={mine}",
        "--bot",
        f"b={mine}",
        "--bot",
        f"t={TRACKER}",
        "--log",
        str(tmp_path / "logs"),
    )
    assert res.returncode == 0, res.stderr
    assert "(complete)" in res.stdout and "fault:" not in res.stdout, res.stdout
    # and in self-play at every size, two or four copies of it end their hands too
    for variant, n in (("kwartet", 4), ("happy-families-jaques", 3), ("authors", 5)):
        res = referee(
            "play", variant, "--seed", "3", "--bot", f"m={mine}", "--players", str(n), "--log", str(tmp_path / "logs")
        )
        assert res.returncode == 0 and "(complete)" in res.stdout, (variant, res.stdout, res.stderr)


def test_max_decisions_option(tmp_path: Path) -> None:
    patient = tmp_path / "patient.toml"
    patient.write_text('name = "patient"\nbase = "kwartet"\nstall = 100000\n')
    res = referee(
        "play",
        str(patient),
        "--seed",
        "1",
        "--bot",
        f"a={LOOPING}",
        "--bot",
        f"b={LOOPING}",
        "--bot",
        f"t={TRACKER}",
        "--max-decisions",
        "60",
        "--log",
        str(tmp_path),
    )
    assert res.returncode == 0, res.stderr
    assert "(aborted)" in res.stdout and "no end after 60 decisions" in res.stdout
    bad = referee(
        "play",
        "kwartet",
        "--bot",
        "a=x",
        "--bot",
        "b=y",
        "--bot",
        "c=z",
        "--max-decisions",
        "0",
        "--log",
        str(tmp_path),
    )
    assert bad.returncode == 2 and "error: --max-decisions must be at least 1" in bad.stderr
