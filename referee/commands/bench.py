"""``referee bench engine|transport|league|viewers|load|schedule|cluster``: speed benchmarks (never tests)."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from typing import Any

_TARGETS = {
    "engine": ("referee.bench.engine", "Random-vs-random games in-process: games/s and actions/s per variant."),
    "transport": ("referee.bench.transport", "Referee round trip vs raw pipe ping-pong, and referee CPU per decision."),
    "league": ("referee.bench.league", "A 4-bot league of 4-seat games: games/s in session and per-game mode."),
    "viewers": (
        "referee.bench.viewers",
        "A night's viewer pages: ms per page (wall and CPU) beside the night's ms per game.",
    ),
    "load": ("referee.bench.load", "CPU-busy bots at 2 x cores tables: false timeouts under the wall and CPU clocks."),
    "schedule": ("referee.bench.schedule", "Planning a balanced night for a big field: time and peak memory."),
    "cluster": (
        "referee.bench.cluster",
        "The local runner vs 1 and 2 local Dask workers (and 2 with --send-logs), and the coordinator's CPU per game.",
    ),
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bench", help="run a speed benchmark", description=__doc__)
    bsub = p.add_subparsers(dest="bench", metavar="BENCH", required=True)
    for name, (module_name, text) in _TARGETS.items():
        bp = bsub.add_parser(name, help=text, description=text)
        bp.add_argument("--json", action="store_true", help="print the figures as JSON")
        module = importlib.import_module(module_name)
        module.add_arguments(bp)
        bp.set_defaults(func=_runner(module))


def _runner(module: Any) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        result = module.run(args)
        if args.json:
            json.dump(result, sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            module.print_result(result)
        return 0

    return run
