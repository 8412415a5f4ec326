"""`referee play --compress` writes a zstandard log that replay and view read as they are."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from referee.cli import main
from referee.runtime.gamelog import is_zstd, read_log_bytes

ROOT = Path(__file__).resolve().parents[2]
RANDOM = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"


def test_play_compress_writes_a_log_replay_and_view_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = tmp_path / "logs"
    bots = [x for n in "abc" for x in ("--bot", f"{n}={RANDOM} 1")]
    assert main(["play", "kwartet", "--seed", "5", *bots, "--log", str(logs), "--compress"]) == 0
    assert main(["play", "kwartet", "--seed", "5", *bots, "--log", str(logs)]) == 0
    # the id is taken by the compressed log: the plain one gets the suffix -2
    zst, plain = logs / "kwartet-3p-000005.jsonl.zst", logs / "kwartet-3p-000005-2.jsonl"
    assert sorted(p.name for p in logs.iterdir()) == sorted([plain.name, zst.name])
    assert is_zstd(zst.read_bytes()) and zst.stat().st_size < plain.stat().st_size
    header = json.loads(read_log_bytes(zst.read_bytes()).splitlines()[0])
    assert header["game"] == "kwartet-3p-000005"
    capsys.readouterr()
    assert main(["replay", "-q", str(zst)]) == 0 and "verified" in capsys.readouterr().out
    assert main(["view", str(zst)]) == 0 and (logs / "kwartet-3p-000005.html").is_file()
