"""Several ``referee`` commands at once, each through the CLI entry point in its own thread.

A ``referee check-bot`` run or a small ``referee run`` night spends most of its seconds waiting on
its bots (the probes' quiet spells, move clocks, process starts and exits, bye), little of it on the
CPU; a test module that needs a dozen of them can have them side by side. Each run is
``referee.cli.main(argv)`` exactly as a test would call it (``main`` leaves the signal handlers alone
off the main thread), with its own trio loop, its own real bot processes, and its own stdout and
stderr: :class:`_PerThread` hands every thread its own buffer while the runs last. At most
:data:`AT_ONCE` run at a time, so that a loaded two-core machine keeps up with the bots' clocks (the
probes wait at least 1,000 ms for a reply that a sample bot writes in a millisecond).
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from referee.cli import main

#: commands side by side (a check-bot run starts its bot and up to five instant bots)
AT_ONCE = 3


@dataclass(frozen=True)
class Run:
    """What one ``referee ARGV`` run returned and printed."""

    status: int
    out: str
    err: str


class _PerThread(io.TextIOBase):
    """A text stream that writes to the calling thread's own buffer (or, for a thread without one,
    to the stream it replaced)."""

    def __init__(self, fallback: object) -> None:
        super().__init__()
        self._fallback = fallback
        self._buffers: dict[int, io.StringIO] = {}

    def own(self) -> io.StringIO:
        buf = self._buffers[threading.get_ident()] = io.StringIO()
        return buf

    def release(self) -> None:
        self._buffers.pop(threading.get_ident(), None)

    def _target(self) -> object:
        return self._buffers.get(threading.get_ident(), self._fallback)

    def write(self, s: str) -> int:
        return self._target().write(s)  # type: ignore[attr-defined,no-any-return]

    def flush(self) -> None:
        self._target().flush()  # type: ignore[attr-defined]

    def isatty(self) -> bool:
        return False


def check_bots(argvs: Iterable[tuple[str, ...]], at_once: int = AT_ONCE) -> dict[tuple[str, ...], Run]:
    """``referee check-bot ARGV`` for every distinct ``argv``, ``at_once`` at a time; by argv."""
    wanted = list(dict.fromkeys(argvs))
    runs = cli_runs((("check-bot", *argv) for argv in wanted), at_once)
    return {argv: runs[("check-bot", *argv)] for argv in wanted}


def cli_runs(argvs: Iterable[tuple[str, ...]], at_once: int = AT_ONCE) -> dict[tuple[str, ...], Run]:
    """``referee ARGV`` (``referee.cli.main``) for every distinct ``argv``, ``at_once`` at a time;
    by argv."""
    wanted = list(dict.fromkeys(argvs))
    out, err = _PerThread(sys.stdout), _PerThread(sys.stderr)

    def one(argv: tuple[str, ...]) -> Run:
        mine_out, mine_err = out.own(), err.own()
        try:
            status = main(list(argv))
        finally:
            out.release()
            err.release()
        return Run(status, mine_out.getvalue(), mine_err.getvalue())

    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err  # type: ignore[assignment]
    try:
        with ThreadPoolExecutor(max_workers=at_once, thread_name_prefix="referee") as pool:
            runs = list(pool.map(one, wanted))
    finally:
        sys.stdout, sys.stderr = saved
    return dict(zip(wanted, runs, strict=True))


def checked(runs: dict[tuple[str, ...], Run], argv: tuple[str, ...]) -> tuple[int, str]:
    """The exit status and the printed checklist of the run of ``argv`` in ``runs``."""
    return runs[argv].status, runs[argv].out
