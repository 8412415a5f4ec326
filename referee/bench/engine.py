"""``referee bench engine``: random-vs-random games in-process, per variant and table size.

Each case plays whole games back to back for ``--seconds``: a seeded deal
(``new_game``), then ``random_action`` + ``apply`` for every decision, with
full legality checking and event dicts, exactly as the runtime's fallback
player drives the engine. Games use seeds 0, 1, 2... so a run is reproducible.

Figures per case: games, actions (decisions applied), CPU seconds of this
process (``time.process_time``: one core; other users of a shared machine do
not count against it) and wall seconds, and the rates ``games_per_s`` and
``actions_per_s`` (per CPU second) plus ``wall_actions_per_s``. Setup time
(deals) is included: the rates are for whole games.

The headline cases are authors and happy-families at 4 seats; the target is
250,000 actions/s on one core.

Errors: an unknown ``--variant`` raises ``RulesError``; ``--players`` outside
every chosen variant's range and a non-positive ``--seconds`` raise
``UserError`` (the CLI prints ``error: ...`` and exits 2). Ctrl-C stops the
run (the CLI reports "interrupted").
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from typing import Any

from referee.bench import positive_int
from referee.errors import UserError
from referee.rules.registry import KINDS

#: the variants benchmarked by default, in table order: every registered kind's presets (the kind's
#: registration says ``bench``), kind by kind, in name order within a kind
DEFAULT_VARIANTS: tuple[str, ...] = tuple(name for kind in KINDS if kind.bench for name in sorted(kind.presets))
#: (variant, players) pairs the target applies to
HEADLINE = (("authors", 4), ("happy-families", 4))
TARGET_ACTIONS_PER_S = 250_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seconds",
        type=float,
        default=2.0,
        metavar="S",
        help="CPU seconds to play per variant and table size (default 2)",
    )
    parser.add_argument(
        "--players",
        type=positive_int,
        nargs="+",
        default=[4],
        metavar="N",
        help="table sizes to measure (default 4); sizes a variant does not allow are skipped",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=None,
        metavar="NAME",
        help="measure only this variant (repeatable; default: every preset)",
    )


def measure(rules: Any, players: int, seconds: float, first_seed: int = 0) -> dict[str, Any]:
    """Play whole random-vs-random games of ``rules`` at ``players`` seats for
    ``seconds`` of CPU time; return the figures of this case."""
    games = 0
    actions = 0
    seed = first_seed
    cpu = time.process_time
    wall0 = time.perf_counter()
    start = cpu()
    deadline = start + seconds
    now = start
    while now < deadline:
        game = rules.new_game(players, seed=seed)
        rng = game.fallback_rng()
        pending = game.pending
        random_action = game.random_action
        apply = game.apply
        while True:
            p = pending()
            if not p:
                break
            seat = p[0]
            apply(seat, random_action(seat, rng))
            actions += 1
        games += 1
        seed += 1
        now = cpu()
    elapsed = now - start
    wall = time.perf_counter() - wall0
    return {
        "variant": rules.name,
        "players": players,
        "games": games,
        "actions": actions,
        "seconds": round(elapsed, 4),
        "wall_seconds": round(wall, 4),
        "games_per_s": round(games / elapsed, 1) if elapsed > 0 else 0.0,
        "actions_per_s": round(actions / elapsed) if elapsed > 0 else 0,
        "wall_actions_per_s": round(actions / wall) if wall > 0 else 0,
        "actions_per_game": round(actions / games, 1) if games else 0.0,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run every chosen case; return the figures (JSON-able)."""
    from referee.rules import get_variant

    seconds = float(args.seconds)
    if not seconds > 0:
        raise UserError(f"--seconds must be positive, not {args.seconds}")
    names = args.variant or list(DEFAULT_VARIANTS)
    sizes = sorted(set(args.players))
    if any(n < 2 for n in sizes):
        raise UserError(f"--players must be at least 2, not {min(sizes)}")
    cases = []
    skipped = []
    for name in names:
        rules = get_variant(name)
        for n in sizes:
            if rules.min_players <= n <= rules.max_players:
                cases.append((rules, n))
            else:
                skipped.append(
                    {
                        "variant": rules.name,
                        "players": n,
                        "reason": f"{rules.name} is for {rules.min_players}-{rules.max_players} players",
                    }
                )
    if not cases:
        raise UserError(
            f"no variant among {', '.join(names)} allows {', '.join(map(str, sizes))} players; choose --players"
        )
    results = [measure(rules, n, seconds) for rules, n in cases]
    headline = {}
    for r in results:
        if (r["variant"], r["players"]) in HEADLINE:
            headline[f"{r['variant']}@{r['players']}"] = r["actions_per_s"]
    return {
        "bench": "engine",
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "platform": platform.platform(terse=True),
        "cpus": os.cpu_count(),
        "seconds_per_case": seconds,
        "timer": "process CPU time (one core)",
        "target_actions_per_s": TARGET_ACTIONS_PER_S,
        "results": results,
        "skipped": skipped,
        "headline": headline,
        "headline_met": all(v >= TARGET_ACTIONS_PER_S for v in headline.values()) if headline else None,
    }


def print_result(result: dict[str, Any]) -> None:
    """Print the figures as a rich table."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(
        title=f"engine: random-vs-random, {result['seconds_per_case']:g} CPU s per case",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("variant", no_wrap=True)
    for col in ("seats", "games", "games/s", "actions/s", "wall act/s"):
        table.add_column(col, justify="right", no_wrap=True)
    for r in result["results"]:
        head = (r["variant"], r["players"]) in HEADLINE
        rate = f"{r['actions_per_s']:,}"
        if head:
            ok = r["actions_per_s"] >= result["target_actions_per_s"]
            rate = f"[{'green' if ok else 'red'}]{rate}[/]"
        table.add_row(
            r["variant"] + ("*" if head else ""),
            str(r["players"]),
            f"{r['games']:,}",
            f"{r['games_per_s']:,.0f}",
            rate,
            f"{r['wall_actions_per_s']:,}",
        )
    console.print(table)
    for s in result["skipped"]:
        console.print(f"skipped {s['variant']} at {s['players']} players: {s['reason']}")
    console.print(
        f"Python {result['python']} ({result['implementation']}) on {result['machine']}, {result['cpus']} CPUs; "
        f"rates per CPU second of one core. * headline, target {result['target_actions_per_s']:,} actions/s"
        + ("" if result["headline_met"] is None else (": met" if result["headline_met"] else ": NOT met"))
    )
    sys.stdout.flush()
