"""Under CPU load (tables = 2 x cores, every bot burning CPU), the CPU-time
clock gives no false timeouts. The margins are generous on purpose: each
decision burns 30 % of its CPU budget, and the wall ceiling is 100 x the move
time, so only a CPU-accounting error (not a slow, shared machine) could fail
this. The wall-clock comparison is a benchmark (`referee bench load`), not a test."""

from __future__ import annotations

import argparse
import os

from referee.bench import load


def test_cpu_clock_no_false_timeouts_under_load() -> None:
    cores = os.cpu_count() or 1
    args = argparse.Namespace(
        tables=2 * cores, games=1, move_ms=40, fraction=0.3, modes="cpu", seed=3, wall_ceiling_ms=4000
    )
    result = load.run(args)["modes"]["cpu"]
    assert result["decisions"] >= 40 * 2 * cores, result  # every table played a whole game
    assert result["false_timeouts"] == 0, result
    assert result["other_faults"] == 0, result
