"""``referee bench viewers``: what a night's viewer pages cost, beside what its games cost.

Plays a small league of the sample bots (every variant, 3 and 4 seats) in a temporary folder, or
takes an existing night's folder (``--out``), then writes every game's viewer page
(``games/GAME.frames.js``) as ``referee run``/``referee report`` do (:func:`referee.view.viewers.write_viewers`,
a process pool on all cores) into a fresh folder, and reports per game:

* the night: wall ms per game of the league itself (only when it was played here);
* the viewer pages made from the logs (older nights, ``referee report``): wall ms per page on all
  cores, and CPU ms per page (this process and its pool workers), and CPU ms per page in one process
  (no pool) for ``--sample`` games spread over the night, beside a version 1 page (the frames
  builder, the pipeline before pages were made live) made from the same logs, alternated;
* the viewer pages made as the games are played (``referee run`` since the live viewer,
  :mod:`referee.view.live`): the CPU the night spends on a game's page, measured on the same
  ``--sample`` games as the CPU of a replay of the log through the hand machine with the live
  writer attached (event recorder, live file, final page: version 2) minus the same replay without
  it (the machine's own work is the night's play, not the page's); each game best of ``--repeat``
  runs, the two alternated.

Nothing here is a test: the figures depend on the machine and its load (the load average is shown).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from referee.bench import positive_int

_REPO = Path(__file__).resolve().parents[2]
_VARIANTS = ("kwartet", "happy-families", "authors", "chickens")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default=None, help="an existing night's output folder (default: play a league here)")
    p.add_argument("--deals", type=positive_int, default=3, help="deals per variant and table size (default 3)")
    p.add_argument("--jobs", type=positive_int, default=None, help="viewer processes (default: all cores)")
    p.add_argument("--sample", type=positive_int, default=60, help="games timed in one process (default 60)")
    p.add_argument("--repeat", type=positive_int, default=3, help="runs per game of the live figure (default 3)")


def _config(deals: int) -> str:
    bot = _REPO / "sample_bots" / "random_bot.py"
    lines = ['name = "bench-viewers"', "seed = 7", 'reuse = "session"', 'out = "out"']
    lines.append("[clock]\nmove_ms = 5000\nstartup_ms = 20000")
    for name in "abcd":
        lines.append(f'[[bots]]\nname = "bot-{name}"\ncommand = ["{{python}}", "{bot}"]')
    for v in _VARIANTS:
        sizes = "4" if v == "chickens" else "[3, 4]"
        lines.append(f'[[variants]]\nname = "{v}"\nsizes = {sizes}\ndeals = {deals}')
    return "\n".join(lines) + "\n"


def _play(folder: Path, deals: int) -> tuple[Path, float, int]:
    from referee.league.config import load_config
    from referee.league.outdir import open_ledger
    from referee.league.runner import play

    cfg = folder / "bench.toml"
    cfg.write_text(_config(deals), encoding="utf-8")
    league = load_config(cfg)
    ledger = open_ledger(league)
    t0 = time.perf_counter()
    play(league, ledger)
    seconds = time.perf_counter() - t0
    played = ledger.count()
    ledger.close()
    return league.out, seconds, played


def _games(out: Path) -> list[tuple[str, str]]:
    from referee.league.ledger import Ledger

    led = Ledger.in_dir(out, create=False)
    try:
        return [(r.game_id, str(out / r.log_path)) for r in led.rows() if r.log_path]
    finally:
        led.close()


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _live_cost(logs: list[str], folder: Path, repeat: int) -> tuple[float, float]:
    """CPU ms per game: a replay of the log without and with the live writer (best of ``repeat``
    each, alternated), summed over ``logs``, divided by their number."""
    from referee.core.spec import GameResult
    from referee.runtime.replay import load_log, replay_records
    from referee.view.live import LiveGameWriter

    live, pages = folder / "live", folder / "games"
    live.mkdir(parents=True, exist_ok=True)
    pages.mkdir(parents=True, exist_ok=True)
    clock = time.thread_time_ns
    bare = watched = 0
    for log in logs:
        records = load_log(log)
        header, footer = records[0][2], records[-1][2]["footer"]
        result = GameResult(
            game_id=str(header["game"]),
            scores=footer["scores"],
            ranks=footer["ranks"],
            win_shares=footer["win_shares"],
            forfeits=footer["forfeits"],
            faults=[],
            think_ms=[],
            log_path=None,
            reason=footer["reason"],
            detail=footer.get("detail"),
            log_capped=bool(footer.get("log_capped")),
        )
        best_bare = best_watched = 1 << 62
        for _ in range(repeat):
            t = clock()
            replay_records(records, log)
            best_bare = min(best_bare, clock() - t)
            (pages / f"{header['game']}.frames.js").unlink(missing_ok=True)  # (new, as in a night)
            t = clock()
            w = LiveGameWriter(live, pages, str(header["game"]))
            w.begin(None, header)  # type: ignore[arg-type]  # (the writer needs no machine to begin)
            replay_records(records, log, observer=w)
            w.end(result, False)
            best_watched = min(best_watched, clock() - t)
        bare += best_bare
        watched += best_watched
    n = max(1, len(logs))
    return bare / n / 1e6, watched / n / 1e6


def run(args: argparse.Namespace) -> dict[str, Any]:
    from referee.errors import UserError
    from referee.view.events import events_from_log
    from referee.view.frames import frames_from_log
    from referee.view.page import frames_js
    from referee.view.viewers import write_viewers

    with tempfile.TemporaryDirectory(prefix="referee-bench-viewers-") as tmp:
        night: dict[str, Any] | None = None
        if args.out is None:
            out, seconds, played = _play(Path(tmp), args.deals)
            night = {"games": played, "seconds": seconds, "ms_per_game": seconds * 1000 / played if played else 0.0}
        else:
            out = Path(args.out)
            if not (out / "ledger.sqlite").is_file():
                raise UserError(f"bench viewers: {out} holds no night (no ledger.sqlite)")
        games = _games(out)
        if not games:
            raise UserError(f"bench viewers: {out} has no game logs")
        target = Path(tmp) / "pages"
        load0 = os.getloadavg()[0]
        c0, t0 = _cpu(), time.perf_counter()
        stats = write_viewers(target, games, jobs=args.jobs)
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
        n = stats.written or 1
        sample = games[:: max(1, len(games) // args.sample)][: args.sample]  # spread over the variants
        one = v1 = 0.0
        for _, log in sample:  # the two alternated, game by game
            c1 = time.process_time()
            frames_js(events_from_log(log))
            c2 = time.process_time()
            frames_js(frames_from_log(log))
            one += c2 - c1
            v1 += time.process_time() - c2
        one, v1 = one * 1000 / len(sample), v1 * 1000 / len(sample)
        bare, watched = _live_cost([log for _, log in sample], Path(tmp) / "live-pages", args.repeat)
        size = sum(p.stat().st_size for p in (target / "games").glob("*.frames.js"))
        shutil.rmtree(target, ignore_errors=True)
    return {
        "cpus": os.cpu_count(),
        "jobs": args.jobs or os.cpu_count(),
        "load_average": round(load0, 1),
        "night": night,
        "pages": stats.written,
        "failed": stats.failed,
        "first_error": stats.first_error,
        "seconds": wall,
        "wall_ms_per_page": wall * 1000 / n,
        "cpu_ms_per_page": cpu * 1000 / n,
        "one_process_cpu_ms_per_page": one,
        "v1_one_process_cpu_ms_per_page": v1,
        "live_cpu_ms_per_page": watched - bare,
        "replay_cpu_ms_per_game": bare,
        "sample": len(sample),
        "kb_per_page": size / n / 1000,
    }


def print_result(r: dict[str, Any]) -> None:
    print(f"viewer pages bench: {r['cpus']} CPUs, {r['jobs']} viewer processes, load average {r['load_average']}")
    if r["night"]:
        g = r["night"]
        print(
            f"  the night     : {g['ms_per_game']:7.1f} ms per game (wall; {g['games']} games in {g['seconds']:.1f} s)"
        )
    print(
        f"  viewer pages  : {r['wall_ms_per_page']:7.1f} ms per page (wall; {r['pages']} pages in {r['seconds']:.1f} s)"
        f", {r['cpu_ms_per_page']:.1f} ms CPU per page"
    )
    print(f"  one process   : {r['one_process_cpu_ms_per_page']:7.1f} ms CPU per page ({r['sample']} games)")
    print(
        f"  version 1     : {r['v1_one_process_cpu_ms_per_page']:7.1f} ms CPU per page from its log in one process "
        "(the frames of version 1, the pipeline before pages were made live)"
    )
    print(
        f"  made live     : {r['live_cpu_ms_per_page']:7.2f} ms CPU per page, as the night makes them "
        f"({r['sample']} games; the machine's own replay of a game: {r['replay_cpu_ms_per_game']:.1f} ms)"
    )
    if r["v1_one_process_cpu_ms_per_page"] and r["live_cpu_ms_per_page"] > 0:
        ratio = r["v1_one_process_cpu_ms_per_page"] / r["live_cpu_ms_per_page"]
        print(f"  ratio         : {ratio:7.1f} x less CPU per page made live than a version 1 page from its log")
    print(f"  page size     : {r['kb_per_page']:7.1f} KB per page")
    if r["failed"]:
        print(f"  FAILED        : {r['failed']} logs could not be shown ({r['first_error']})", file=sys.stderr)
