"""Per-bot clock overrides reach the runtime as per-seat clocks (GameSpec.seat_clocks)."""

from __future__ import annotations

import json
from pathlib import Path

from referee.cli import main
from referee.runtime.gamelog import read_log_bytes

from .conftest import REPO, bots_toml

SLOW_BOT = REPO / "tests" / "bots" / "slow_bot.py"


def test_per_bot_move_limit_applies_to_that_bot_only(tmp_path: Path, make_config) -> None:
    # two copies of the same slow bot (first turn of each process answered after ~150 ms):
    # only "tight", whose own move limit is 100 ms, times out; the league limit is 2000 ms
    cfg = make_config(
        'seed = 3\nout = "out"\nconcurrency = 1\n[clock]\nmove_ms = 2000\n'
        + bots_toml(["a"])
        + f'[[bots]]\nname = "tight"\ncommand = ["{{python}}", "{SLOW_BOT}"]\n'
        + 'env = { BOT_SLOW_TURNS = "1", BOT_DELAY_MS = "150" }\nclock = { move_ms = 100 }\n'
        + f'[[bots]]\nname = "loose"\ncommand = ["{{python}}", "{SLOW_BOT}"]\n'
        + 'env = { BOT_SLOW_TURNS = "1", BOT_DELAY_MS = "150" }\nclock = { bank_ms = 60000 }\n'
        + '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'
    )
    assert main(["run", str(cfg), "--quiet"]) == 0
    out = tmp_path / "out"
    logs = sorted((out / "games").glob("*.jsonl*"))
    assert logs
    tight_timeouts = 0
    for log in logs:
        recs = [json.loads(line) for line in read_log_bytes(log.read_bytes()).decode().splitlines()]
        seats = {s["bot"]: s["seat"] for s in recs[0]["seats"]}
        clocks = recs[0]["seat_clocks"]
        assert clocks[seats["tight"]]["move_ms"] == 100 and clocks[seats["a"]]["move_ms"] == 2000
        assert clocks[seats["loose"]]["bank_ms"] == 60000 and clocks[seats["loose"]]["move_ms"] == 2000
        starts = {r["to"]: m for r in recs if "to" in r for m in r["out"] if m["type"] == "start"}
        assert starts[seats["tight"]]["clock"] == {"move_ms": 100}
        assert starts[seats["loose"]]["clock"] == {"move_ms": 2000, "bank_ms": 60000}
        faults = recs[-1]["footer"]["faults"]
        assert all(f["bot"] == "tight" for f in faults), faults
        tight_timeouts += sum(f["fault"] == "timeout" for f in faults)
    assert tight_timeouts >= 1
    st = json.loads((out / "standings.json").read_text())
    rows = {r["bot"]: r for r in st["scopes"]["overall"]["bots"]}
    assert rows["loose"]["forfeits"] == 0 and rows["tight"]["forfeits"] >= 1
