"""`referee play` (and `bench load`) input errors: one clear line, the right exit status, no traceback."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from referee.cli import main

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
RANDOM = f"{PY} {ROOT / 'sample_bots' / 'random_bot.py'}"
OLDPROTO = f"{PY} {ROOT / 'tests' / 'bots' / 'oldproto_bot.py'}"


def _bots(*commands: str) -> list[str]:
    out = []
    for i, c in enumerate(commands):
        out += ["--bot", f"b{i}={c}"]
    return out


@pytest.mark.parametrize("seed", ["-1", str(2**64), "-0x1", "seven"])
def test_seed_out_of_range_is_refused_at_argument_parsing(tmp_path, capsys, seed):
    logs = tmp_path / "logs"
    with pytest.raises(SystemExit) as info:
        main(["play", "kwartet", f"--seed={seed}", "--log", str(logs), *_bots(RANDOM, RANDOM, RANDOM)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --seed:" in err and "from 0 to 2**64 - 1" in err and "Traceback" not in err
    assert not logs.exists()  # refused before anything was started or written


def test_largest_seed_is_accepted(tmp_path, capsys):
    logs = tmp_path / "logs"
    assert (
        main(
            [
                "play",
                "kwartet",
                f"--seed={2**64 - 1}",
                "--log",
                str(logs),
                "--grace-ms",
                "100",
                *_bots(RANDOM, RANDOM, RANDOM),
            ]
        )
        == 0
    )
    assert (logs / f"kwartet-3p-{2**64 - 1}.jsonl").is_file()
    assert main(["replay", "-q", str(logs / f"kwartet-3p-{2**64 - 1}.jsonl")]) == 0


def test_bench_load_seed_is_range_checked_too(capsys):
    with pytest.raises(SystemExit) as info:
        main(["bench", "load", "--seed=-3"])
    assert info.value.code == 2
    assert "argument --seed: a seed is a whole number from 0 to 2**64 - 1" in capsys.readouterr().err


def _deal_error(tmp_path: Path, capsys, deal: str) -> str:
    assert (
        main(["play", "kwartet", "--deal", deal, "--log", str(tmp_path / "logs"), *_bots(RANDOM, RANDOM, RANDOM)]) == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_deal_that_is_a_directory(tmp_path, capsys):
    err = _deal_error(tmp_path, capsys, str(tmp_path))
    assert f"--deal {str(tmp_path)!r} is a directory, not a deal file" in err
    assert "JSON:" not in err and "Errno" not in err


def test_deal_that_is_missing(tmp_path, capsys):
    err = _deal_error(tmp_path, capsys, str(tmp_path / "nope.json"))
    assert f"deal file {str(tmp_path / 'nope.json')!r} not found" in err


def test_deal_that_cannot_be_read(tmp_path, capsys, monkeypatch):
    deal = tmp_path / "deal.json"
    deal.write_text('{"dealer": 0}')
    deal.chmod(0)
    if os.access(deal, os.R_OK):
        # root reads any file: make the read itself fail as it would for anyone else
        real = Path.read_bytes

        def denied(self: Path) -> bytes:
            if self == deal:
                raise PermissionError(13, "Permission denied", str(self))
            return real(self)

        monkeypatch.setattr(Path, "read_bytes", denied)
    err = _deal_error(tmp_path, capsys, str(deal))
    assert f"deal file {str(deal)!r} cannot be read: permission denied" in err and "JSON" not in err


def test_deal_that_is_not_json(tmp_path, capsys):
    deal = tmp_path / "deal.json"
    deal.write_text("dealer = 0")
    err = _deal_error(tmp_path, capsys, str(deal))
    assert f"deal file {str(deal)!r} is not valid JSON" in err


def test_bot_with_the_wrong_protocol_version_is_a_clear_error(tmp_path, capsys):
    logs = tmp_path / "logs"
    assert (
        main(
            [
                "play",
                "kwartet",
                "--seed",
                "1",
                "--log",
                str(logs),
                "--grace-ms",
                "100",
                "--bot",
                f"old={OLDPROTO}",
                *_bots(RANDOM, RANDOM),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "bot 'old'" in err
    assert "bot speaks protocol version 2, this referee speaks protocol version 1" in err
    assert list(logs.glob("*.jsonl")) == []  # no game was played, no empty log is left


@pytest.mark.parametrize("kind", ["directory", "no-shebang"])
def test_bot_command_that_cannot_run_is_explained(tmp_path, capsys, kind):
    if kind == "directory":
        target, words = tmp_path, "is a directory, not a program"
    else:
        target = tmp_path / "bot.py"
        target.write_text("print('hi')\n")
        target.chmod(0o755)
        words = "is not a program the system can run"
    assert (
        main(
            [
                "play",
                "kwartet",
                "--seed",
                "1",
                "--log",
                str(tmp_path / "logs"),
                "--bot",
                f"x={target}",
                *_bots(RANDOM, RANDOM),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "bot 'x'" in err and words in err
    assert "Errno" not in err and "Traceback" not in err
