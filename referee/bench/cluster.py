"""``referee bench cluster``: the same night played by the local runner and by 1 and 2 local Dask workers.

Three figures (docs/PERFORMANCE.md, "Cluster"):

* **games/s** of one night (4 bots, 4-seat games, the Python sample bot) played
  by the local runner (``referee run``), and by a Dask cluster on this
  machine of 1 and of 2 worker processes, and of 2 with ``--send-logs`` (the
  workers here see the output folder, so by default they write the logs in
  place; see :meth:`referee.league.cluster.Cluster.executor`) (a ``dask scheduler`` and ``dask
  worker --nthreads 1`` processes on 127.0.0.1, as ``referee run --cluster``
  uses them; ``--workers N`` would run the scheduler inside the coordinator
  and blur its CPU figure). Each run is a child process (the real runner:
  ledger, logs, standings); the time is that of the play, without starting
  the cluster (given apart).
* **coordinator CPU per committed game**, end to end: the CPU time of the
  coordinator process (the ``referee run`` process: its trio thread and the
  Dask client's thread; the workers are other processes) during the play of
  the 2-worker run, divided by the games it committed; and at **steady
  state**: from the first committed game to the last, over the games in
  between (without the connection, the preflight on the workers, the first
  submissions and the shutdown), split by thread (``MainThread``: trio and the
  commit path; ``IO``: the Dask client's event loop).
* **commit path CPU per game**: ``--commits`` synthetic finished games (a real
  game's result and log, under new game ids) pushed through the path a game
  from a worker takes on the coordinator: decode the worker's record, write
  its log (or, written in place by the worker, rename it into ``games/``),
  commit the ledger row, count it. The nights go into ``--dir`` (default: the
  current folder, as a night's ``--out``), whose cost of creating a file is
  reported first: it is most of the coordinator's cost when logs are sent. The
  target is at most 0.5 ms, so that one coordinator can take 2,000 games/s
  from a large cluster.

Nothing here is a test: figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from referee.bench import positive_int

_REPO = Path(__file__).resolve().parents[2]
_BOT = _REPO / "sample_bots" / "random_bot.py"
TARGET_COMMIT_MS = 0.5


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--games", type=positive_int, default=640, help="games in the night (default 640)")
    p.add_argument(
        "--commits", type=positive_int, default=2000, help="synthetic games through the commit path (default 2000)"
    )
    p.add_argument(
        "--profile",
        metavar="PREFIX",
        help="write a cProfile of the coordinator's trio thread in each cluster run to PREFIX-1.prof, PREFIX-2.prof",
    )
    p.add_argument(
        "--dir",
        default=".",
        help="where the nights' output folders go, as a real night's --out would (a temporary folder in it, "
        "removed afterwards; default: the current directory)",
    )
    p.add_argument(
        "--bot", default=str(_BOT), help="bot script run with this Python (default: sample_bots/random_bot.py)"
    )


def _config(games: int, bot: str) -> str:
    deals = max(1, round(games / 4))  # one table (4 bots, 4 seats), every deal in 4 rotations
    lines = ['name = "bench-cluster"', "seed = 1", 'out = "out"', "[clock]\nmove_ms = 5000\nstartup_ms = 20000"]
    for name in "abcd":
        lines.append(f'[[bots]]\nname = "bot-{name}"\ncommand = ["{{python}}", {json.dumps(bot)}]')
    lines.append(f'[[variants]]\nname = "kwartet"\nsizes = 4\ndeals = {deals}')
    return "\n".join(lines) + "\n"


def _thread_cpu() -> dict[str, float]:
    """CPU seconds (user + system) of each thread of this process, summed by thread name (Linux)."""
    import threading

    names = {t.native_id: t.name.split(" ")[0].split("(")[0].rstrip("-_0123456789") for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    with contextlib.suppress(OSError):
        for tid in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(f"/proc/self/task/{tid}/stat").read_text()
                name = names.get(int(tid)) or "other"
                fields = stat[stat.rindex(")") + 2 :].split()
                out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def _child(spec_json: str) -> None:
    """Play the night in this (child) process; print its figures as JSON.

    Steady state: the coordinator's CPU from the first committed game to the
    last one, over the games in between (no connection, preflight, first unit
    submission or shutdown), and split by thread (the trio thread is
    ``MainThread``; the Dask client's event loop is another thread)."""
    from referee.league.config import load_config
    from referee.league.outdir import open_ledger
    from referee.league.runner import play

    spec = json.loads(spec_json)
    marks: list[tuple[float, dict[str, float]]] = []
    seen = [0]

    def hook(stats: Any, _tally: Any) -> None:
        if stats.played == seen[0]:
            return  # the first progress line, before any game
        seen[0] = stats.played
        if stats.played == 1 or stats.played == stats.total - stats.done_before:
            marks.append((time.process_time(), _thread_cpu()))

    with tempfile.TemporaryDirectory(prefix="referee-bench-", dir=spec["dir"]) as tmp:
        cfg = Path(tmp) / "bench.toml"
        cfg.write_text(_config(spec["games"], spec["bot"]))
        league = load_config(cfg)
        cluster = None
        if spec["address"]:
            from referee.league.cluster import Cluster

            cluster = Cluster.connect(spec["address"], send_logs=spec["send_logs"])
        profile = None
        if spec.get("profile"):
            import cProfile

            profile = cProfile.Profile(time.thread_time)  # CPU time of the trio thread, not waits
        try:
            with open_ledger(league) as ledger:
                c0, t0 = time.process_time(), time.perf_counter()
                if profile is not None:
                    profile.enable()
                play(league, ledger, cluster=cluster, hook=hook)
                if profile is not None:
                    profile.disable()
                dt, cpu = time.perf_counter() - t0, time.process_time() - c0
                played = ledger.count()
        finally:
            if cluster is not None:
                cluster.close()
    if profile is not None:
        profile.dump_stats(spec["profile"])
    steady = None
    threads: dict[str, float] = {}
    if len(marks) == 2 and played > 1:
        (a, ta), (b, tb) = marks
        steady = (b - a) * 1000.0 / (played - 1)
        threads = {k: round((v - ta.get(k, 0.0)) * 1000.0 / (played - 1), 3) for k, v in tb.items()}
        threads = {k: v for k, v in threads.items() if v > 0}
    print(
        json.dumps(
            {
                "workers": spec["workers"],
                "games": played,
                "seconds": dt,
                "games_per_s": played / dt if dt else 0.0,
                "coordinator_cpu_ms_per_game": cpu * 1000.0 / played if played else 0.0,
                "steady_cpu_ms_per_game": steady,
                "steady_threads_ms_per_game": threads,
            }
        )
    )


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(_REPO), os.environ.get("PYTHONPATH", "")]),
        "DASK_LOGGING__DISTRIBUTED": "critical",
    }


def _measure(
    games: int, workers: int, bot: str, profile: str | None = None, folder: str = ".", *, send_logs: bool = False
) -> dict[str, Any]:
    """One night in a child process: locally (``workers`` 0) or on a fresh
    scheduler with ``workers`` worker processes (started and killed here)."""
    import socket

    procs: list[subprocess.Popen[bytes]] = []
    address = None
    env = _env()
    t0 = time.perf_counter()
    scratch = tempfile.TemporaryDirectory(prefix="referee-bench-dask-")
    try:
        if workers:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            address = f"tcp://127.0.0.1:{port}"
            dask = [sys.executable, "-m", "dask"]
            procs.append(
                subprocess.Popen(
                    [*dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
            for i in range(workers):
                procs.append(
                    subprocess.Popen(
                        [
                            *dask,
                            "worker",
                            address,
                            "--nthreads",
                            "1",
                            "--no-nanny",
                            "--host",
                            "127.0.0.1",
                            "--no-dashboard",
                            "--local-directory",
                            scratch.name,
                            "--name",
                            f"bench-{i}",
                        ],
                        env=env,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        start_new_session=True,
                    )
                )
            from distributed import Client

            with Client(address, timeout=30, set_as_default=False) as c:  # type: ignore[no-untyped-call]
                c.wait_for_workers(workers, timeout=60)
        startup = time.perf_counter() - t0
        result = _child_run(games, workers, address, bot, env, profile, folder, send_logs)
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        scratch.cleanup()
    result["startup_s"] = startup
    return result


def _child_run(
    games: int,
    workers: int,
    address: str | None,
    bot: str,
    env: dict[str, str],
    profile: str | None = None,
    folder: str = ".",
    send_logs: bool = False,
) -> dict[str, Any]:
    spec = json.dumps(
        {
            "games": games,
            "workers": workers,
            "address": address,
            "bot": bot,
            "profile": profile,
            "dir": folder,
            "send_logs": send_logs,
        }
    )
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from referee.bench.cluster import _child; _child(sys.argv[1])", spec],
        check=False,
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        from referee.errors import UserError

        tail = "\n".join(proc.stderr.strip().splitlines()[-10:])
        raise UserError(f"bench cluster: the run with {workers or 'no'} workers failed:\n{tail}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def create_cost_us(folder: str, n: int = 500) -> float:
    """CPU microseconds to create, write (6 KB) and close one new file in ``folder``
    (a file system that is slow at creating files makes every commit slow)."""
    with tempfile.TemporaryDirectory(prefix="referee-bench-probe-", dir=folder) as tmp:
        data = b"x" * 6000
        c0 = time.process_time()
        for i in range(n):
            fd = os.open(os.path.join(tmp, f"{i}.tmp"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
            os.write(fd, data)
            os.close(fd)
        return (time.process_time() - c0) * 1e6 / n


def _commit_path(n: int, bot: str, folder: str = ".", *, in_place: bool = False) -> dict[str, Any]:
    """CPU per game of the coordinator's commit path for a game delivered by a
    worker: its log sent over the network, or (``in_place``) written by the
    worker into the run's incoming folder (the files made beforehand, untimed)."""
    import msgspec
    import trio
    import zstandard

    from referee.league import schedule as sched
    from referee.league.cluster import DaskExecutor, WorkerSetup, _Pending
    from referee.league.config import load_config
    from referee.league.outdir import open_ledger
    from referee.league.runner import RunStats, _Committer
    from referee.league.standings import Tally
    from referee.league.work import GameDone, UnitMaker
    from referee.runtime import open_bots, play_game
    from referee.runtime.entry import run as trio_run
    from referee.runtime.gamelog import log_name

    with tempfile.TemporaryDirectory(prefix="referee-bench-", dir=folder) as tmp:
        cfg = Path(tmp) / "bench.toml"
        cfg.write_text(_config(n, bot))
        league = load_config(cfg)
        games = list(sched.games(league))[:n]
        maker = UnitMaker(league)
        table = next(iter(sched.tables(league)))
        unit = maker.unit(table, games[:1])

        async def one() -> Any:
            async with open_bots([e.bot for e in unit.lineup], unit.clock) as bots:
                return await play_game(unit.spec(unit.games[0]), bots.sessions, tmp)

        result = trio_run(one)
        log = Path(result.log_path or "").read_bytes()
        packed = zstandard.ZstdCompressor(level=3).compress(log)
        blob = pickle.dumps(GameDone(games[0].game_id, result, 1.0, packed), protocol=pickle.HIGHEST_PROTOCOL)
        blobs = dict.fromkeys((g.game_id for g in games), blob)
        incoming = None
        if in_place:
            incoming = os.path.join(league.out, ".incoming", "bench")
            unit_dir = os.path.join(incoming, "unit-1")
            os.makedirs(unit_dir)
            for g in games:
                path = os.path.join(unit_dir, log_name(g.game_id, True))
                Path(path).write_bytes(packed)
                done = GameDone(g.game_id, msgspec.structs.replace(result, log_path=path), 1.0, None)
                blobs[g.game_id] = pickle.dumps(done, protocol=pickle.HIGHEST_PROTOCOL)
        with open_ledger(league) as ledger:
            ledger.commit_staged()
            committer = _Committer(
                league, ledger, RunStats(total=len(games), done_before=0), Tally(league.name, live=True), None
            )
            ex = DaskExecutor(
                client=None,  # type: ignore[arg-type]
                setup=WorkerSetup("bench", (), (), incoming),
                games=os.path.join(league.out, "games"),
            )
            send, recv = trio.open_memory_channel[Any](0)
            pending = _Pending(unit, {g.game_id for g in games}, send, recv)
            by_id = {g.game_id: g for g in games}
            c0, t0 = time.process_time(), time.perf_counter()
            for g in games:

                def deliver(d: GameDone, g: sched.ScheduledGame = g) -> None:
                    committer.commit(by_id[g.game_id], d)

                ex._deliver(pending, g.game_id, blobs[g.game_id], deliver)
            cpu, dt = time.process_time() - c0, time.perf_counter() - t0
            assert ledger.count() == len(games)
    return {
        "games": len(games),
        "log_bytes": len(log),
        "wire_bytes": len(blobs[games[0].game_id]),
        "cpu_ms_per_game": cpu * 1000.0 / len(games),
        "wall_ms_per_game": dt * 1000.0 / len(games),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    try:
        import distributed  # noqa: F401
    except ImportError:
        from referee.errors import UserError

        raise UserError("bench cluster needs the `cluster` extra: pip install 'card-referee[cluster]'") from None

    def prof(workers: int) -> str | None:
        return f"{args.profile}-{workers}.prof" if args.profile else None

    folder = os.path.abspath(args.dir)
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        from referee.errors import UserError

        raise UserError(f"bench cluster --dir {args.dir}: not a folder this user can write in")
    create_us = create_cost_us(folder)
    local = _measure(args.games, 0, args.bot, folder=folder)
    one = _measure(args.games, 1, args.bot, prof(1), folder)
    two = _measure(args.games, 2, args.bot, prof(2), folder)
    two_sent = _measure(args.games, 2, args.bot, None, folder, send_logs=True)
    commit = _commit_path(args.commits, args.bot, folder)
    commit_in_place = _commit_path(args.commits, args.bot, folder, in_place=True)
    return {
        "cpus": os.cpu_count(),
        "dir": folder,
        "file_create_us": round(create_us, 1),
        "night": {"variant": "kwartet", "seats": 4, "bots": 4, "games": local["games"]},
        "local": local,
        "workers_1": one,
        "workers_2": two,
        "workers_2_send_logs": two_sent,
        "coordinator_cpu_ms_per_game": round(two["coordinator_cpu_ms_per_game"], 3),
        "coordinator_steady_cpu_ms_per_game": None
        if two["steady_cpu_ms_per_game"] is None
        else round(two["steady_cpu_ms_per_game"], 3),
        "commit_path": commit,
        "commit_path_in_place": commit_in_place,
        "target_commit_ms": TARGET_COMMIT_MS,
    }


def print_result(r: dict[str, Any]) -> None:
    n = r["night"]
    print(f"cluster bench: {n['games']} games of {n['seats']}-seat {n['variant']}, {n['bots']} bots, {r['cpus']} CPUs")
    print(f"  output in {r['dir']}: creating a file there costs {r['file_create_us']:.0f} us CPU")
    rows = (
        ("local runner", "local"),
        ("1 worker    ", "workers_1"),
        ("2 workers   ", "workers_2"),
        ("2, send-logs", "workers_2_send_logs"),
    )
    for label, key in rows:
        m = r[key]
        start = f", cluster start {m['startup_s']:.1f} s" if m["workers"] else ""
        steady = ""
        if m["workers"] and m.get("steady_cpu_ms_per_game") is not None:
            split = ", ".join(f"{k} {v:.2f}" for k, v in sorted(m["steady_threads_ms_per_game"].items()))
            steady = f"; steady state {m['steady_cpu_ms_per_game']:.2f} ms/game: {split}"
        print(
            f"  {label}: {m['games_per_s']:7.1f} games/s  ({m['games']} games in {m['seconds']:.1f} s{start}; "
            f"coordinator CPU {m['coordinator_cpu_ms_per_game']:.2f} ms/game{steady})"
        )
    for label, key, how in (
        ("commit path ", "commit_path", "log sent"),
        ("  in place  ", "commit_path_in_place", "log written by the worker"),
    ):
        c = r[key]
        ok = "meets" if c["cpu_ms_per_game"] <= r["target_commit_ms"] else "ABOVE"
        print(
            f"  {label}: {c['cpu_ms_per_game']:.3f} ms CPU per game ({c['games']} games, {how}: log "
            f"{c['log_bytes']} B, {c['wire_bytes']} B on the wire; {ok} the target of {r['target_commit_ms']} ms)"
        )
