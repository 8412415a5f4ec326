"""``referee bench load`` (also ``python3 -m referee.bench.load``): false timeouts under CPU load.

Plays kwartet tables of CPU-busy bots (``tests/hostile/bots/cpuburner.py``:
each decision burns ``--fraction`` of the move time in CPU, then answers
legally) at a concurrency of ``--tables`` (default: twice the CPU cores), once
with the wall clock and once with the CPU-time clock (``mode = "cpu"``, wall
ceiling 3 x move time). Every bot stays within its move time in CPU terms, so
every timeout is a *false* timeout caused by the machine being overloaded.

Figures per mode: decisions answered by the bots, false timeouts (cpu mode:
also how many of them hit the wall ceiling rather than the CPU limit; a seat
that timed out is played by the fallback for the rest of its game, so this
counts at most one per seat and game), the rate per 1000 decisions, the
measured think times, and the wall time. Nothing here is a test: the figures
depend on the machine and its load.

``--hog N`` seats a CPU hog at every table (seat 0: ``tests/hostile/bots/hog.py``,
N processes spinning forever, each in a session of its own, plus a legal
player) and measures the *other* seats only; ``--weights on,off`` plays each
clock mode with the bots' equal CPU weight (their control groups' ``cpu.shares``
/ ``cpu.weight``, the default) and without it (their processes then compete one
by one, so the hog's N spinners outweigh every other bot N to 1).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from referee.bench import positive_int

_BURNER = Path(__file__).resolve().parents[2] / "tests" / "hostile" / "bots" / "cpuburner.py"
_HOG = _BURNER.with_name("hog.py")


def add_arguments(p: argparse.ArgumentParser) -> None:
    cores = os.cpu_count() or 1
    p.add_argument(
        "--tables",
        type=positive_int,
        default=2 * cores,
        help=f"tables played at once (default 2 x cores = {2 * cores})",
    )
    p.add_argument("--games", type=positive_int, default=1, help="games per table and clock mode (default 1)")
    p.add_argument("--move-ms", type=positive_int, default=100, help="move time in ms (default 100)")
    p.add_argument(
        "--fraction", type=float, default=0.7, help="share of the move time each decision burns in CPU (default 0.7)"
    )
    p.add_argument("--modes", default="wall,cpu", help="clock modes to measure (default wall,cpu)")
    p.add_argument(
        "--wall-ceiling-ms", type=int, default=None, help="cpu mode: wall limit per decision (default 3 x move time)"
    )
    p.add_argument(
        "--hog",
        type=int,
        default=0,
        help="seat a CPU hog with this many spinning processes at every table (seat 0; default 0: none)",
    )
    p.add_argument(
        "--weights",
        default="on",
        help="the bots' equal CPU weight: on, off or on,off to compare (default on)",
    )
    from referee.commands import seed_value  # the same range check as ``referee play --seed``

    p.add_argument("--seed", type=seed_value, default=1, help="first deal seed (default 1)")


def run(args: argparse.Namespace) -> dict[str, Any]:
    from referee.errors import UserError
    from referee.runtime import cgroups
    from referee.runtime.entry import run as trio_run

    if not _BURNER.exists():
        raise UserError(f"the CPU-burning bot {_BURNER} is missing (it lives in the source tree's tests/hostile/bots)")

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in ("wall", "cpu")]
    if bad or not modes:
        raise UserError(f"--modes: {','.join(bad) or '(none)'} is not a clock mode (wall, cpu)")
    weights = [w.strip() for w in getattr(args, "weights", "on").split(",") if w.strip()]
    if not weights or any(w not in ("on", "off") for w in weights):
        raise UserError(f"--weights: {getattr(args, 'weights', '')!r} is not on, off or on,off")
    hog = getattr(args, "hog", 0)
    if hog < 0:
        raise UserError(f"--hog: {hog} is not a number of processes (0 or more)")
    lay = cgroups.layout()
    out: dict[str, Any] = {
        "cores": os.cpu_count(),
        "tables": args.tables,
        "games_per_table": args.games,
        "move_ms": args.move_ms,
        "fraction": args.fraction,
        "hog": hog,
        "cpu_weight": lay.cpu_weight if lay is not None else "none",
        "modes": {},
    }
    for w in weights:
        for mode in modes:
            key = mode if weights == ["on"] else f"{mode}, weights {w}"
            cgroups.set_fair_cpu(w == "on")
            try:
                out["modes"][key] = trio_run(_measure, args, mode)
            finally:
                cgroups.set_fair_cpu(True)
    return out


async def _measure(args: argparse.Namespace, mode: Literal["wall", "cpu"]) -> dict[str, Any]:
    import trio

    from referee.rules import get_variant
    from referee.runtime import BotSession, BotSpec, ClockSpec, GameSpec, play_game

    clock = ClockSpec(
        move_ms=args.move_ms,
        mode=mode,
        startup_ms=20000,
        grace_ms=200,
        wall_ceiling_ms=getattr(args, "wall_ceiling_ms", None) if mode == "cpu" else None,
    )
    rules = get_variant("kwartet")
    totals = {
        "decisions": 0,
        "timeouts": 0,
        "ceiling_timeouts": 0,
        "other_faults": 0,
        "seat_games": 0,
        "think_ms_max": 0.0,
        "think_ms_sum": 0.0,
    }
    latencies: list[float] = []  # wall ms of every decision the measured seats answered themselves

    hog = getattr(args, "hog", 0)
    first = 1 if hog else 0  # the seats measured: all, or all but the hog's

    async def table(t: int) -> None:
        for g in range(args.games):
            specs = [
                BotSpec(f"burner{t}-{s}", [sys.executable, str(_BURNER), "bench", str(args.fraction)]) for s in range(4)
            ]
            if hog:
                specs[0] = BotSpec(f"hog{t}", [sys.executable, str(_HOG), "bench", str(hog)])
            async with trio.open_nursery() as nursery:
                sessions = [await BotSession.start(s, clock, nursery) for s in specs]
                try:
                    res = await play_game(
                        GameSpec(f"load-{mode}-t{t}-g{g}", rules, 4, seed=args.seed + 1000 * t + g, clock=clock),
                        sessions,
                        logs,
                    )
                finally:
                    for s in sessions:
                        await s.close()
                nursery.cancel_scope.cancel()
            totals["seat_games"] += 4 - first
            for f in res.faults:
                if f.seat < first:
                    continue
                if f.fault == "timeout":
                    totals["timeouts"] += 1
                    used = re.search(r"it used (\d+) ms of CPU", f.detail)
                    if used and int(used.group(1)) < args.move_ms:
                        totals["ceiling_timeouts"] += 1  # the wall ceiling, not the CPU limit
                elif f.fault != "stale":
                    totals["other_faults"] += 1
            if res.log_path is not None:
                latencies.extend(_wall_latencies(res.log_path, first))
            for st in res.think_ms[first:]:
                totals["decisions"] += st.count
                totals["think_ms_sum"] += st.total_ms
                totals["think_ms_max"] = max(totals["think_ms_max"], st.max_ms)

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="referee-bench-load-") as logs:
        async with trio.open_nursery() as nursery:
            for t in range(args.tables):
                nursery.start_soon(table, t)
    wall_s = time.monotonic() - t0
    latencies.sort()
    n = totals["decisions"]
    return {
        "decisions": n,
        "false_timeouts": totals["timeouts"],
        "of_which_wall_ceiling": totals["ceiling_timeouts"],
        "seat_games": totals["seat_games"],
        "false_timeouts_per_1000_decisions": round(1000 * totals["timeouts"] / n, 2) if n else None,
        "other_faults": totals["other_faults"],
        "think_ms_mean": round(totals["think_ms_sum"] / n, 1) if n else None,
        "think_ms_max": round(totals["think_ms_max"], 1),
        # the measured seats' decision latency on the wall clock (in either clock mode), from the game logs
        "latency_ms_median": round(latencies[len(latencies) // 2], 1) if latencies else None,
        "latency_ms_max": round(latencies[-1], 1) if latencies else None,
        "wall_s": round(wall_s, 1),
    }


def _wall_latencies(path: str, first: int) -> list[float]:
    """Wall ms of each decision answered by a bot (not the fallback) at seats
    ``first`` and up, from a game log (``wall_ms`` in cpu mode, else ``ms``)."""
    import json

    from referee.runtime.gamelog import read_log_bytes

    with open(path, "rb") as f:
        text = read_log_bytes(f.read())
    out: list[float] = []
    for line in text.splitlines():
        rec = json.loads(line)
        act = rec.get("act") if isinstance(rec, dict) else None
        if act and not act.get("fallback") and act.get("seat", 0) >= first:
            wall = act.get("wall_ms")
            out.append(float(wall if wall is not None else act.get("ms", 0.0)))
    return out


def print_result(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    title = (
        f"False timeouts under load: {result['tables']} tables at once on {result['cores']} cores, "
        f"bots burn {result['fraction']:.0%} of move_ms={result['move_ms']} in CPU"
    )
    if result.get("hog"):
        title += f"; a hog with {result['hog']} spinning processes at every table (its seat not counted)"
    table = Table(title=title)
    for col in (
        "clock",
        "decisions",
        "false timeouts",
        "at wall ceiling",
        "per 1000 decisions",
        "seat-games",
        "think mean ms",
        "think max ms",
        "latency median / max ms",
        "other faults",
        "wall s",
    ):
        table.add_column(col, justify="right")
    for mode, m in result["modes"].items():
        ceiling = str(m["of_which_wall_ceiling"]) if mode.startswith("cpu") else "-"
        table.add_row(
            mode,
            str(m["decisions"]),
            str(m["false_timeouts"]),
            ceiling,
            str(m["false_timeouts_per_1000_decisions"]),
            str(m["seat_games"]),
            str(m["think_ms_mean"]),
            str(m["think_ms_max"]),
            f"{m['latency_ms_median']} / {m['latency_ms_max']}",
            str(m["other_faults"]),
            str(m["wall_s"]),
        )
    Console().print(table)
    print("think time is the clock's measure: wall ms in wall mode, the bot's CPU ms in cpu mode;")
    print("latency is each answered decision's wall time (from the game logs), in both modes")
    print(f"bots' CPU weight (weights on): {result.get('cpu_weight', 'none')}")


def main(argv: list[str] | None = None) -> int:
    import json

    p = argparse.ArgumentParser(prog="python3 -m referee.bench.load", description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    add_arguments(p)
    args = p.parse_args(argv)
    result = run(args)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_result(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
