"""`referee play` and `referee replay` from the command line."""

from __future__ import annotations

import json
import sys

import pytest

from referee.cli import main
from tests.runtime.helpers import BOTS, RANDOM_BOT

INSTANT = f"{sys.executable} {BOTS / 'instant_bot.py'}"


def _play(tmp_path, *extra: str, variant: str = "kwartet", bots: int = 3) -> int:
    args = ["play", variant, "--log", str(tmp_path / "logs"), *extra]
    for i in range(bots):
        args += ["--bot", f"b{i}={INSTANT}"]
    return main(args)


def test_play_prints_table_and_replay_verifies(tmp_path, capsys):
    assert _play(tmp_path, "--seed", "42", "--retries", "1", "--bank-ms", "30000", "--grace-ms", "200") == 0
    out = capsys.readouterr().out
    assert "kwartet-3p-000042" in out and "seat" in out and "mean ms" in out
    log = tmp_path / "logs" / "kwartet-3p-000042.jsonl"
    assert json.loads(log.read_text().split("\n")[0])["clock"]["grace_ms"] == 200
    assert main(["replay", str(log)]) == 0
    out = capsys.readouterr().out
    assert "verified" in out and "asks seat" in out


def test_play_with_a_deal_file_and_a_custom_variant(tmp_path, capsys):
    variant = tmp_path / "tiny.json"
    variant.write_text(
        json.dumps(
            {
                "name": "tiny",
                "families": ["A", "B", "C"],
                "members": ["1", "2"],
                "ask": "card",
                "miss": "asked",
                "players": [2, 3],
            }
        )
    )
    deal = tmp_path / "deal.json"
    deal.write_text(json.dumps({"dealer": 1, "hands": [["A1", "B1", "C1"], ["A2", "B2", "C2"]], "stock": []}))
    assert (
        main(
            [
                "play",
                str(variant),
                "--deal",
                str(deal),
                "--log",
                str(tmp_path / "logs"),
                "--game-id",
                "g-t",
                "--bot",
                f"x={INSTANT}",
                "--bot",
                f"y={sys.executable} {RANDOM_BOT}",
            ]
        )
        == 0
    )
    log = tmp_path / "logs" / "g-t.jsonl"
    header = json.loads(log.read_text().split("\n")[0])
    assert header["deal"]["hands"][0] == ["A1", "B1", "C1"] and header["rules"]["name"] == "tiny"
    assert main(["replay", "-q", str(log)]) == 0


@pytest.mark.parametrize(
    "args,message",
    [
        (["play", "poker", "--bot", "a=x"], "unknown variant 'poker'"),
        (["play", "kwartet", "--bot", "nameonly"], "expected NAME=COMMAND"),
        (["play", "kwartet", "--deal", "/nope.json", "--bot", "a=x", "--bot", "b=x", "--bot", "c=x"], "not found"),
        (["play", "kwartet", "--bot", "a=/no/such/bot", "--bot", f"b={INSTANT}", "--bot", f"c={INSTANT}"], "not found"),
        (["play", "kwartet", "--bot", f"a={INSTANT}"], "kwartet is for 3-6 players, not 1"),
        (
            ["play", "kwartet", "--move-ms", "0", "--bot", "a=x", "--bot", "b=x", "--bot", "c=x"],
            "--move-ms must be a positive number",
        ),
        (
            ["play", "kwartet", "--grace-ms", "-1", "--bot", "a=x", "--bot", "b=x", "--bot", "c=x"],
            "--grace-ms must be 0 or more",
        ),
        (["replay", "/no/such/log.jsonl"], "not found"),
    ],
)
def test_bad_input_is_one_clear_error(tmp_path, capsys, args, message):
    if args[0] == "play":
        args = [*args, "--log", str(tmp_path)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_bad_deal_is_rejected(tmp_path, capsys):
    deal = tmp_path / "deal.json"
    deal.write_text(json.dumps({"dealer": 0, "hands": [["7S"], ["7S"], []]}))
    assert _play(tmp_path, "--deal", str(deal)) == 2
    assert capsys.readouterr().err.startswith("error: deal")


def test_replay_detects_corrupt_truncated_and_tampered_logs(tmp_path, capsys):
    assert _play(tmp_path, "--seed", "7") == 0
    log = tmp_path / "logs" / "kwartet-3p-000007.jsonl"
    lines = log.read_bytes().split(b"\n")
    truncated = tmp_path / "trunc.jsonl"
    truncated.write_bytes(b"\n".join(lines[: len(lines) // 2]) + b"\n")
    assert main(["replay", str(truncated)]) == 2
    assert "truncated" in capsys.readouterr().err
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"\n".join(lines[:5]) + b"\n" + lines[5][:20])
    assert main(["replay", str(cut)]) == 2
    assert "line 6 is not JSON" in capsys.readouterr().err
    # change one recorded action: the replay must notice
    recs = [json.loads(x) for x in lines if x]
    for rec in recs:
        if "act" in rec and rec["act"]["decide"] == "ask":
            rec["act"]["action"]["target"] = (rec["act"]["action"]["target"] + 1) % 3
            if rec["act"]["action"]["target"] == rec["act"]["seat"]:
                rec["act"]["action"]["target"] = (rec["act"]["action"]["target"] + 1) % 3
            break
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert main(["replay", "-q", str(tampered)]) == 1
    assert "mismatch" in capsys.readouterr().out
