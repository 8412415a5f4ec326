"""``referee bench schedule``: planning a balanced (or gauntlet) night for a big field.

Measures, for one field size, the time and the peak Python memory
(``tracemalloc``) of making the plan, of making every table's lineup once, and
of the coverage figures (:func:`referee.league.balanced.benchmark`), plus the
same three times without ``tracemalloc`` (which slows Python down several
times). Nothing here is a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from referee.bench import positive_int


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bots", type=positive_int, default=10_000, help="bots in the field (default 10000)")
    p.add_argument("--size", type=positive_int, default=4, help="seats per table (default 4)")
    p.add_argument("--seats-per-bot", type=positive_int, default=12, help="tables per bot, N (default 12)")
    p.add_argument(
        "--challengers",
        type=int,
        default=0,
        help="plan a gauntlet with this many challengers (default 0: a balanced plan)",
    )
    p.add_argument("--seed", type=int, default=0, help="master seed (default 0)")


def run(args: argparse.Namespace) -> dict[str, Any]:
    from referee.league.balanced import balanced, benchmark, coverage, gauntlet

    step = max(1, args.bots // max(1, args.challengers)) if args.challengers else 1
    challengers = list(range(0, args.bots, step))[: args.challengers] if args.challengers else []
    try:
        result = benchmark(args.bots, args.size, args.seats_per_bot, args.seed, challengers=challengers)
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from None
    t0 = time.perf_counter()
    plan = (
        gauntlet(args.bots, args.size, args.seats_per_bot, args.seed, challengers)
        if challengers
        else balanced(args.bots, args.size, args.seats_per_bot, args.seed)
    )
    t1 = time.perf_counter()
    for _ in plan.lineups():
        pass
    t2 = time.perf_counter()
    coverage(plan)
    t3 = time.perf_counter()
    result.update(
        untraced_plan_s=round(t1 - t0, 4),
        untraced_all_lineups_s=round(t2 - t1, 4),
        untraced_coverage_s=round(t3 - t2, 4),
    )
    return result


def print_result(r: dict[str, Any]) -> None:
    from rich.console import Console

    console = Console()
    what = f"gauntlet of {r['challengers']} challengers" if r["challengers"] else "balanced plan"
    console.print(
        f"[bold]{what}[/]: {r['bots']:,} bots, {r['size']}-seat tables, N = {r['seats_per_bot']}: "
        f"{r['tables']:,} tables ({r['method']}, repeat-free: {r['repeat_free']})"
    )
    console.print(f"  plan:          {r['untraced_plan_s']:.3f} s   peak {r['plan_peak_kb']:,.0f} kB")
    console.print(f"  every lineup:  {r['untraced_all_lineups_s']:.3f} s   peak {r['lineups_peak_kb']:,.0f} kB")
    console.print(f"  coverage:      {r['untraced_coverage_s']:.3f} s   peak {r['coverage_peak_kb']:,.0f} kB")
    for line in r.get("coverage", []):
        console.print(f"  {line}")
