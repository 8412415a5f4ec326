"""Every sample bot plays every variant legally: real subprocess games through
the runtime (one game per variant per bot, four seats, no faults allowed)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.rules import get_variant, kind_of
from referee.runtime import BotSession, BotSpec, ClockSpec, GameSpec, play_game

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots"

VARIANTS: list[Any] = [
    "happy-families",
    "happy-families-jaques",
    "authors",
    # the stalemate rule at its strictest: the first ask that moves no card ends the game with
    # end.reason "stalled"; the bot must take it and play the next game of the session
    {"name": "impatient", "base": "kwartet", "stall": 1},
    "kwartet",
    "chickens",
    # Go Fish (OpenSpiel's rules): a game of its own kind that speaks the ask messages
    "go-fish",
    # a custom ask variant the bots have never seen: 6-member families, stock, dealer first, politeness
    {
        "name": "three-generations",
        "families": ["Ox", "Elk", "Yak", "Emu"],
        "members": ["I", "II", "III", "IV", "V", "VI"],
        "ask": "card",
        "miss": "next",
        "please": True,
        "stock": 4,
        "first": "dealer",
        "players": [2, 6],
    },
    # family mode with multi-character family names and a stock
    {
        "name": "tens",
        "families": ["10", "1", "2", "3"],
        "members": ["a", "b", "c"],
        "ask": "family",
        "miss": "asked",
        "please": False,
        "stock": 2,
        "players": [2, 6],
    },
]


def node_path() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail(
            "node (Node.js) is not installed on this machine: the JavaScript sample bot cannot be "
            "tested; install Node.js 16 or newer (e.g. apt-get install nodejs)"
        )
    return node


async def play_every_variant(command: list[str], label: str) -> None:
    clock = ClockSpec(move_ms=3000, startup_ms=15000)
    async with trio.open_nursery() as nursery:
        bots = [await BotSession.start(BotSpec(name=f"{label}-{i}", command=command), clock, nursery) for i in range(4)]
        try:
            for k, variant in enumerate(VARIANTS):
                rules = get_variant(variant)
                spec = GameSpec(game_id=f"{label}-{k}", rules=rules, players=4, seed=100 + k, clock=clock)
                result = await play_game(spec, bots, None)
                assert result.faults == [], (rules.name, result.faults)
                if rules.name == "impatient":
                    assert result.reason == "stalled" and sum(result.scores) < len(rules.families)
                    continue
                assert result.reason == "complete"
                if kind_of(rules).style == "ask":
                    assert sum(result.scores) == len(rules.families)
                assert sum(t.count for t in result.think_ms) > 0, rules.name
                assert all(b.alive for b in bots)
        finally:
            for b in bots:
                await b.close()


async def test_python_random_bot() -> None:
    await play_every_variant([sys.executable, str(SAMPLES / "random_bot.py")], "random")


async def test_python_tracker_bot() -> None:
    await play_every_variant([sys.executable, str(SAMPLES / "tracker_bot.py")], "tracker")


async def test_javascript_bot() -> None:
    await play_every_variant([node_path(), str(SAMPLES / "js_bot.js")], "js")


async def test_c_bot(tmp_path: Path) -> None:
    exe = tmp_path / "c_bot"
    build = await trio.to_thread.run_sync(
        partial(
            subprocess.run,
            ["cc", "-O2", "-Wall", "-o", str(exe), str(SAMPLES / "c_bot.c")],
            capture_output=True,
            text=True,
        )
    )
    assert build.returncode == 0, build.stderr
    assert build.stderr == "", f"the C sample should compile without warnings: {build.stderr}"
    await play_every_variant([str(exe)], "c")


def test_every_sample_starts_with_how_to_run_it() -> None:
    for path in sorted(SAMPLES.iterdir()):
        if path.suffix not in (".py", ".js", ".c"):
            continue
        head = path.read_text()[:1500].lower()
        assert "how to" in head and "run" in head, f"{path.name} lacks a header saying how to run it"


def garbage_lines() -> list[bytes]:
    """Deterministic junk: truncated messages, wrong types, deep nesting, odd escapes, binary."""
    rng = random.Random(7)
    turn = (
        '{"type":"turn","game":"g","id":5,"decide":"ask","hand":["A1"],"counts":[1,3],'
        '"laid":[[],[]],"options":["A2"],"targets":[1],"clock":{"left_ms":5}}'
    )
    lines = [turn[:k] for k in range(0, len(turn), 7)]  # every truncation
    lines += [
        "[" * 5000 + "]" * 5000,
        '{"type":' + '"' + "x" * 70000 + '"}',
        '{"type":"turn"}',
        '{"type":5}',
        '{"type":"turn","id":"seven","decide":"play"}',
        '"just a string"',
        "12",
        "null",
        "[]",
        '{"type":"start","rules":7,"seat":"x"}',
        '{"type":"\\u00e9\\ud83d\\ude00","a":"\\"\\\\\\/"}',
        '{"type":"event","kind":"ask","seat":99,"target":-1,"cards":"A1"}',
        '{"a":1e999999,"b":-0.0e-7}',
        '{"type":"hello"',
        "\x00\x01\x02",
        "\t  \r",
    ]
    lines = [x.encode() for x in lines]
    lines += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))).replace(b"\n", b" ") for _ in range(40)]
    return lines


@pytest.mark.parametrize("bot", ["python", "js", "c"])
def test_samples_survive_garbage_lines(bot: str, tmp_path: Path) -> None:
    """A sample bot skips lines it cannot use and still answers the next valid turn."""
    if bot == "python":
        command = [sys.executable, str(SAMPLES / "random_bot.py")]
    elif bot == "js":
        command = [node_path(), str(SAMPLES / "js_bot.js")]
    else:
        exe = tmp_path / "c_bot"
        subprocess.run(["cc", "-O2", "-o", str(exe), str(SAMPLES / "c_bot.c")], check=True)
        command = [str(exe)]
    rules = get_variant({"name": "two", "families": ["A", "B"], "members": ["1", "2"], "players": [2, 2]})
    valid = [
        {"type": "hello", "protocol": 1, "name": "x"},
        {
            "type": "start",
            "game": "g",
            "variant": "two",
            "rules": rules.to_wire(),
            "seat": 0,
            "seats": ["a", "b"],
            "dealer": 1,
            "hand": ["A1", "B1"],
            "clock": {"move_ms": 1000},
        },
        {
            "type": "turn",
            "game": "g",
            "id": 8,
            "decide": "ask",
            "hand": ["A1", "B1"],
            "counts": [2, 2],
            "laid": [[], []],
            "options": ["A2", "B2"],
            "targets": [1],
            "clock": {"left_ms": 900},
        },
        {"type": "bye"},
    ]
    data = b"\n".join(garbage_lines()) + b"\n" + b"".join(json.dumps(m).encode() + b"\n" for m in valid)
    proc = subprocess.run(command, input=data, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    replies = [json.loads(x) for x in proc.stdout.splitlines()]
    assert replies[-2]["type"] == "hello" and replies[-2]["protocol"] == 1
    assert replies[-1] == {**replies[-1], "type": "ask", "id": 8, "target": 1}
    assert replies[-1]["card"] in {"A2", "B2"}


async def test_protocol_doc_transcript_is_a_real_game(tmp_path: Path) -> None:
    """docs/PROTOCOL.md section 10 shows seat 0's side of a real game; replaying the same
    seeded game with the same seeded sample bots gives the same lines (clocks aside)."""
    doc = (ROOT / "docs" / "PROTOCOL.md").read_text()
    section = doc[doc.index("## 10.") : doc.index("What the same protocol looks like in chickens")]
    shown = [
        json.loads(line.split(">", 1)[1])
        for line in section.splitlines()
        if line.startswith(("referee> {", "bot>     {"))
    ]
    shown = [m for m in shown if m["type"] not in ("hello", "bye")]  # the session's, not the game's
    mini = {
        "name": "mini",
        "families": ["A", "B", "C"],
        "members": ["1", "2", "3"],
        "ask": "card",
        "miss": "asked",
        "please": True,
        "stock": 2,
        "players": [2, 4],
    }
    clock = ClockSpec(move_ms=1000, bank_ms=60000)
    async with trio.open_nursery() as nursery:
        bots = [
            await BotSession.start(
                BotSpec(name=name, command=[sys.executable, str(SAMPLES / f"{file}.py"), "22"]), clock, nursery
            )
            for name, file in (("alice", "tracker_bot"), ("bob", "random_bot"), ("carol", "random_bot"))
        ]
        try:
            result = await play_game(
                GameSpec(game_id="g-000022", rules=get_variant(mini), players=3, seed=22, clock=clock), bots, tmp_path
            )
        finally:
            for b in bots:
                await b.close()
    seen: list[dict[str, Any]] = []
    for line in (await trio.Path(result.log_path).read_text()).splitlines():
        rec = json.loads(line)
        if rec.get("to") == 0:
            seen.extend(rec["out"])
        elif rec.get("act", {}).get("seat") == 0 and not rec["act"]["fallback"]:
            seen.append(rec["act"]["action"])  # a valid reply, exactly as the bot sent it

    def strip(m: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in m.items() if not (m.get("type") == "turn" and k == "clock")}

    assert [strip(m) for m in seen] == [strip(m) for m in shown]
