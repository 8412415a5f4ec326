"""Every sample bot plays every variant legally: real subprocess games through
the runtime (one game per variant per bot, four seats, no faults allowed)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.rules import get_variant
from referee.runtime import BotSession, BotSpec, ClockSpec, GameSpec, play_game

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots"

VARIANTS: list[Any] = [
    "happy-families", "happy-families-jaques", "authors", "kwartet", "chickens",
    # a custom ask variant the bots have never seen: 6-member families, stock, dealer first, politeness
    {"name": "three-generations", "families": ["Ox", "Elk", "Yak", "Emu"], "members": ["I", "II", "III", "IV", "V", "VI"],
     "ask": "card", "miss": "next", "please": True, "stock": 4, "first": "dealer", "players": [2, 6]},
    # family mode with multi-character family names and a stock
    {"name": "tens", "families": ["10", "1", "2", "3"], "members": ["a", "b", "c"], "ask": "family",
     "miss": "asked", "please": False, "stock": 2, "players": [2, 6]},
]


def node_path() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (Node.js) is not installed on this machine: the JavaScript sample bot cannot be "
                    "tested; install Node.js 16 or newer (e.g. apt-get install nodejs)")
    return node


async def play_every_variant(command: list[str], label: str) -> None:
    clock = ClockSpec(move_ms=3000, startup_ms=15000)
    async with trio.open_nursery() as nursery:
        bots = [await BotSession.start(BotSpec(name=f"{label}-{i}", command=command), clock, nursery)
                for i in range(4)]
        try:
            for k, variant in enumerate(VARIANTS):
                rules = get_variant(variant)
                spec = GameSpec(game_id=f"{label}-{k}", rules=rules, players=4, seed=100 + k, clock=clock)
                result = await play_game(spec, bots, None)
                assert result.faults == [], (rules.name, result.faults)
                assert result.reason == "complete"
                if rules.kind == "ask":
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
    build = subprocess.run(["cc", "-O2", "-Wall", "-o", str(exe), str(SAMPLES / "c_bot.c")],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    assert build.stderr == "", f"the C sample should compile without warnings: {build.stderr}"
    await play_every_variant([str(exe)], "c")


def test_every_sample_starts_with_how_to_run_it() -> None:
    for path in sorted(SAMPLES.iterdir()):
        if path.suffix not in (".py", ".js", ".c"):
            continue
        head = path.read_text()[:1500].lower()
        assert "how to" in head and "run" in head, f"{path.name} lacks a header saying how to run it"
