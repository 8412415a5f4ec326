"""``referee bench league``: a 4-bot league of 4-seat games with the Python sample bot.

Measures games per second with process reuse ``session`` (one process per bot
and table shard for all its games) and ``game`` (a fresh process per game),
and the referee's peak memory (max RSS) at two league sizes, to show that it
stays flat as the league grows (the schedule is generated lazily and results
go straight to the ledger).

Each measurement runs the real league runner (ledger, logs, standings) in a
child process, so every figure is the referee process's own. Bot processes are
not counted in the RSS figures. Nothing here is a test: figures depend on the
machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from referee.bench import positive_int

_REPO = Path(__file__).resolve().parents[2]
_BOT = _REPO / "sample_bots" / "random_bot.py"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--variant", default="kwartet", help="variant to play (default kwartet)")
    p.add_argument("--games", type=positive_int, default=400, help="games in the session-mode run (default 400)")
    p.add_argument(
        "--game-mode-games", type=positive_int, default=48, help="games in the per-game-mode run (default 48)"
    )
    p.add_argument(
        "--sizes", default="200,1600", help="two league sizes (games) for the memory figures (default 200,1600)"
    )
    p.add_argument("--concurrency", type=positive_int, default=None, help="tables/shards at once (default: CPU cores)")
    p.add_argument(
        "--compress",
        choices=("zstd", "none"),
        default="zstd",
        help="the leagues' [output] compress (default zstd, as a league night)",
    )
    p.add_argument(
        "--viewers",
        action="store_true",
        help="also watch every game as it is played and write its viewer page, as referee run does "
        "(default: the play alone, as this benchmark has always measured; the pages' own cost is "
        "referee bench viewers)",
    )
    p.add_argument(
        "--bot", default=str(_BOT), help="bot script run with this Python (default: sample_bots/random_bot.py)"
    )


def _config(variant: str, games: int, reuse: str, concurrency: int | None, bot: str, compress: str = "zstd") -> str:
    deals = max(1, round(games / 4))
    lines = [
        f'name = "bench-{reuse}"',
        "seed = 1",
        f'reuse = "{reuse}"',
        'out = "out"',
        f'output = {{ compress = "{compress}" }}',
    ]
    if concurrency:
        lines.append(f"concurrency = {concurrency}")
    lines.append("[clock]\nmove_ms = 5000\nstartup_ms = 20000")
    for name in "abcd":
        lines.append(f'[[bots]]\nname = "bot-{name}"\ncommand = ["{{python}}", {json.dumps(bot)}]')
    lines.append(f'[[variants]]\nname = "{variant}"\nsizes = 4\ndeals = {deals}')
    return "\n".join(lines) + "\n"


def _child(spec_json: str) -> None:
    """Run one league in this (child) process; print its figures as JSON."""
    import resource

    from referee.league.config import load_config
    from referee.league.outdir import open_ledger
    from referee.league.runner import play

    spec = json.loads(spec_json)
    with tempfile.TemporaryDirectory(prefix="referee-bench-") as tmp:
        cfg = Path(tmp) / "bench.toml"
        cfg.write_text(
            _config(
                spec["variant"],
                spec["games"],
                spec["reuse"],
                spec["concurrency"],
                spec["bot"],
                spec.get("compress", "zstd"),
            )
        )
        league = load_config(cfg)
        ledger = open_ledger(league)
        t0 = time.perf_counter()
        stats = play(league, ledger, viewers=bool(spec.get("viewers", False)))
        dt = time.perf_counter() - t0
        played = ledger.count()
        ledger.close()
        log_bytes = sum(p.stat().st_size for p in (league.out / "games").glob("*.jsonl*"))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    rss_kb = usage.ru_maxrss
    print(
        json.dumps(
            {
                "games": played,
                "seconds": dt,
                "games_per_s": played / dt if dt else 0.0,
                "max_rss_mb": rss_kb / 1024.0,
                "faults": stats.faults,
                "reuse": spec["reuse"],
                "log_bytes_per_game": log_bytes / played if played else 0.0,
                "referee_cpu_ms_per_game": (usage.ru_utime + usage.ru_stime) * 1000 / played if played else 0.0,
            }
        )
    )


def _measure(
    variant: str,
    games: int,
    reuse: str,
    concurrency: int | None,
    bot: str,
    compress: str = "zstd",
    viewers: bool = False,
) -> dict[str, Any]:
    spec = json.dumps(
        {
            "variant": variant,
            "games": games,
            "reuse": reuse,
            "concurrency": concurrency,
            "bot": bot,
            "compress": compress,
            "viewers": viewers,
        }
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from referee.bench.league import _child; _child(sys.argv[1])", spec],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        from referee.errors import UserError

        tail = "\n".join(proc.stderr.strip().splitlines()[-10:])
        raise UserError(f"bench league: the {reuse}-mode run failed:\n{tail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(args: argparse.Namespace) -> dict[str, Any]:
    try:
        small, large = (int(x) for x in args.sizes.split(","))
    except ValueError:
        from referee.errors import UserError

        raise UserError("--sizes takes two game counts, e.g. --sizes 200,1600") from None
    conc = args.concurrency
    session = _measure(args.variant, args.games, "session", conc, args.bot, args.compress, args.viewers)
    per_game = _measure(args.variant, args.game_mode_games, "game", conc, args.bot, args.compress, args.viewers)
    mem_small = _measure(args.variant, small, "session", conc, args.bot, args.compress, args.viewers)
    mem_large = _measure(args.variant, large, "session", conc, args.bot, args.compress, args.viewers)
    return {
        "variant": args.variant,
        "bots": 4,
        "seats": 4,
        "cpus": os.cpu_count(),
        "concurrency": conc or os.cpu_count(),
        "session": session,
        "game": per_game,
        "memory": [
            {
                "games": mem_small["games"],
                "max_rss_mb": round(mem_small["max_rss_mb"], 1),
                "games_per_s": round(mem_small["games_per_s"], 1),
            },
            {
                "games": mem_large["games"],
                "max_rss_mb": round(mem_large["max_rss_mb"], 1),
                "games_per_s": round(mem_large["games_per_s"], 1),
            },
        ],
        "compress": args.compress,
        "viewers": args.viewers,
        "target_session_games_per_s": 50,
    }


def print_result(r: dict[str, Any]) -> None:
    s, g = r["session"], r["game"]
    print(
        f"league bench: {r['bots']} bots, {r['seats']}-seat {r['variant']}, {r['cpus']} CPUs, concurrency {r['concurrency']}"  # noqa: E501
    )
    ok = "meets" if s["games_per_s"] >= r["target_session_games_per_s"] else "BELOW"
    print(
        f"  session mode : {s['games_per_s']:7.1f} games/s  ({s['games']} games in {s['seconds']:.1f} s; "
        f"{ok} the target of {r['target_session_games_per_s']}/s)"
    )
    print(f"  per-game mode: {g['games_per_s']:7.1f} games/s  ({g['games']} games in {g['seconds']:.1f} s)")
    print(f"  game logs    : {s['log_bytes_per_game'] / 1000:7.1f} KB per game (compress = {r['compress']})")
    for m in r["memory"]:
        print(f"  max RSS      : {m['max_rss_mb']:7.1f} MB at {m['games']} games ({m['games_per_s']} games/s)")
