"""Issue 10's small things: replay into a closed pipe, log names that say the variant, a variant
name suggestion for a typo, the plan's seating-balance warning, a warning for deal files whose hand
sizes break the dealing rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.cli import main

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
RANDOM = f"{PY} {ROOT / 'sample_bots' / 'random_bot.py'}"
LOOPING = f"{PY} {ROOT / 'tests' / 'bots' / 'looping_bot.py'}"
TRACKER = f"{PY} {ROOT / 'sample_bots' / 'tracker_bot.py'}"


def _bots(*commands: str) -> list[str]:
    out = []
    for i, c in enumerate(commands):
        out += ["--bot", f"b{i}={c}"]
    return out


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


# --------------------------------------------------------------------------- replay | head


@pytest.fixture(scope="module")
def long_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A game log whose transcript is far bigger than a pipe's buffer (1,500 decisions)."""
    tmp = tmp_path_factory.mktemp("long")
    variant = tmp / "patient.toml"
    variant.write_text('name = "patient"\nbase = "kwartet"\nstall = 100000\n')
    res = subprocess.run(
        [
            PY,
            "-m",
            "referee",
            "play",
            str(variant),
            "--seed",
            "1",
            "--max-decisions",
            "1500",
            "--log",
            str(tmp),
            "--game-id",
            "long",
            *_bots(LOOPING, LOOPING, TRACKER),
        ],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    return tmp / "long.jsonl"


def _replay_into_head(log: Path) -> tuple[int, str, str]:
    """``referee replay LOG | head -1`` with a real pipe: read one line, close the pipe."""
    proc = subprocess.Popen(
        [PY, "-m", "referee", "replay", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env()
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline().decode()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    return proc.wait(timeout=120), first, err


@pytest.mark.xdist_group("long-log")  # shares long_log (made once, on one worker)
def test_replay_into_a_closed_pipe_keeps_its_verdict(long_log: Path) -> None:
    assert (
        len(subprocess.run([PY, "-m", "referee", "replay", str(long_log)], capture_output=True, env=_env()).stdout)
        > 100_000
    )  # the pipe (64 KiB) fills up: writes do fail
    status, first, err = _replay_into_head(long_log)
    assert first.startswith("long: patient, 3 players, seed 1")
    assert status == 0, err
    assert err == ""  # no "mismatch", no traceback, no "Exception ignored"


@pytest.mark.xdist_group("long-log")  # shares long_log (made once, on one worker)
def test_a_tampered_log_into_a_closed_pipe_still_fails(long_log: Path, tmp_path: Path) -> None:
    lines = long_log.read_bytes().splitlines()
    footer = json.loads(lines[-1])
    footer["footer"]["scores"] = [9, 9, 9]
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join([*lines[:-1], json.dumps(footer).encode()]) + b"\n")
    status, first, err = _replay_into_head(bad)
    assert status == 1 and "Traceback" not in err


# --------------------------------------------------------------------------- log names


def test_log_names_say_which_variant_they_hold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = tmp_path / "logs"
    for variant in ("kwartet", "authors", "happy-families"):
        assert (
            main(
                [
                    "play",
                    variant,
                    "--seed",
                    "11",
                    "--log",
                    str(logs),
                    "--grace-ms",
                    "100",
                    *_bots(RANDOM, RANDOM, RANDOM),
                ]
            )
            == 0
        )
    assert (
        main(
            [
                "play",
                "happy-families",
                "--seed",
                "11",
                "--players",
                "4",
                "--log",
                str(logs),
                "--grace-ms",
                "100",
                *_bots(RANDOM, RANDOM),
            ]
        )
        == 0
    )
    custom = tmp_path / "Tiny Fish.json"
    custom.write_text(json.dumps({"name": "Tiny Fish", "families": 4, "members": 3}))
    assert (
        main(["play", str(custom), "--seed", "11", "--log", str(logs), "--grace-ms", "100", *_bots(RANDOM, RANDOM)])
        == 0
    )
    names = sorted(p.name for p in logs.iterdir())
    assert names == [
        "authors-3p-000011.jsonl",
        "happy-families-3p-000011.jsonl",
        "happy-families-4p-000011.jsonl",
        "kwartet-3p-000011.jsonl",
        "tiny-fish-2p-000011.jsonl",
    ]
    out = capsys.readouterr().out
    assert "kwartet-3p-000011 (complete)" in out
    for p in logs.iterdir():
        assert json.loads(p.read_text().split("\n")[0])["game"] + ".jsonl" == p.name


# --------------------------------------------------------------------------- variant typos


@pytest.mark.parametrize(
    "typo, meant",
    [
        ("kwartt", "kwartet"),
        ("happy-familes", "happy-families"),
        ("happy-families-jacques", "happy-families-jaques"),
        ("chicken", "chickens"),
        ("Authors", "authors"),
    ],
)
def test_play_suggests_the_closest_variant(
    typo: str, meant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["play", typo, "--log", str(tmp_path), *_bots(RANDOM, RANDOM, RANDOM)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: unknown variant '{typo}'") and err.rstrip().endswith(f"did you mean '{meant}'?")
    assert not list(tmp_path.iterdir())


def test_no_suggestion_for_a_name_like_no_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "snap", "--log", str(tmp_path), *_bots(RANDOM, RANDOM, RANDOM)]) == 2
    assert "did you mean" not in capsys.readouterr().err


def test_a_custom_variants_base_typo_gets_a_suggestion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    custom = tmp_path / "mine.toml"
    custom.write_text('name = "mine"\nbase = "kwartte"\nstock = 2\n')
    assert main(["play", str(custom), "--log", str(tmp_path), *_bots(RANDOM, RANDOM, RANDOM)]) == 2
    assert "unknown base variant 'kwartte'" in (err := capsys.readouterr().err) and "did you mean 'kwartet'?" in err


# --------------------------------------------------------------------------- deal files


def _write_deal(tmp_path: Path, dealer: int, hands: list[list[str]]) -> Path:
    p = tmp_path / "deal.json"
    p.write_text(json.dumps({"dealer": dealer, "hands": hands}))
    return p


_KW = [f"{r}{s}" for r in ("7", "8", "9", "10", "J", "Q", "K", "A") for s in "SHDC"]


_HF = [f"{f}{m}" for f in "ABCDEFGHIJK" for m in "1234"]


@pytest.mark.parametrize(
    "variant, dealer, sizes, words",
    [
        ("kwartet", 2, (12, 11, 9), "the hands differ by more than one card (seat 0: 12, seat 1: 11, seat 2: 9)"),
        ("kwartet", 0, (11, 11, 10), "the dealer (seat 0) holds a long hand of 11 cards while seat 2 holds 10"),
        # dealt from seat 0: 8, 7, 8... - a short hand before a long one; the dealer (5) is short
        ("happy-families", 5, (8, 7, 8, 7, 7, 7), "seat 2 holds 8 cards but seat 1, dealt before it"),
    ],
)
def test_a_deal_file_that_breaks_the_dealing_rule_gets_a_warning(
    variant: str, dealer: int, sizes: tuple[int, ...], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deck = _KW if variant == "kwartet" else _HF
    hands, k = [], 0
    for n in sizes:
        hands.append(deck[k : k + n])
        k += n
    deal = _write_deal(tmp_path, dealer, hands)
    assert (
        main(
            [
                "play",
                variant,
                "--deal",
                str(deal),
                "--log",
                str(tmp_path / "logs"),
                "--grace-ms",
                "100",
                "--players",
                str(len(sizes)),
                *_bots(RANDOM),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert err.startswith(f"warning: --deal {deal}: {words}"), err
    assert "the game is played with the hands as given" in err


def test_a_deal_file_that_follows_the_dealing_rule_gets_no_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deal = _write_deal(tmp_path, 1, [_KW[0:11], _KW[11:21], _KW[21:32]])  # dealt from seat 2: 11, 11, then 10
    assert (
        main(
            [
                "play",
                "kwartet",
                "--deal",
                str(deal),
                "--log",
                str(tmp_path / "logs"),
                "--grace-ms",
                "100",
                *_bots(RANDOM, RANDOM, RANDOM),
            ]
        )
        == 0
    )
    assert "warning" not in capsys.readouterr().err


# --------------------------------------------------------------------------- plan: seating balance


def _league(tmp_path: Path, variants: str) -> Path:
    bots = "".join(f'[[bots]]\nname = "b{i}"\ncommand = ["{{python}}", "x.py"]\n' for i in range(4))
    p = tmp_path / "league.toml"
    p.write_text(bots + variants)
    return p


def test_plan_warns_when_the_seating_is_not_fully_balanced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _league(
        tmp_path,
        '[[variants]]\nname = "kwartet"\nsizes = [3, 4]\ndeals = 4\n'
        '[[variants]]\nname = "authors"\nsizes = 3\ndeals = 2\n',
    )
    assert main(["plan", str(cfg)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "warning: variants[0] 'kwartet': deals = 4 is not a multiple of (size-1)! at 4 seats (6 cyclic "
        "seating orders): some orders are played more often than others, so some bots sit to the left "
        "of others more often (seating not fully balanced); deals = 6 would balance every size"
    ]


def test_plan_is_quiet_when_every_size_is_balanced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _league(
        tmp_path,
        '[[variants]]\nname = "kwartet"\nsizes = [3, 4]\ndeals = 12\n'
        '[[variants]]\nname = "happy-families"\nsizes = 2\ndeals = 1\n',
    )
    assert main(["plan", str(cfg)]) == 0
    assert "warning" not in capsys.readouterr().err
