"""The ``referee`` command line. Entry point: :func:`main`.

Each command lives in a module of :mod:`referee.commands` that defines
``register(subparsers)``; a registered sub-parser sets ``func`` (called with the
parsed arguments, returns the exit status).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any

from referee import __version__
from referee.errors import UserError, user_facing
from referee.rules import RulesError

#: modules that register commands, in help order
COMMAND_MODULES = (
    "referee.commands.play",  # play, replay
    "referee.commands.league",  # run, plan, standings, report
    "referee.commands.duel",  # duel
    "referee.commands.checkbot",  # check-bot
    "referee.commands.view",  # view, serve
    "referee.commands.schema",  # schema
    "referee.commands.site",  # host, submit
    "referee.commands.bench",  # bench engine|transport|league
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="referee",
        description="Referee for card-game bot leagues: play games, run league nights, check bots.",
    )
    parser.add_argument("--version", action="version", version=f"referee {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        module.register(sub)
    return parser


#: the signals a service manager stops a program with (Slurm, Kubernetes, systemd: SIGTERM; a closed
#: terminal or session: SIGHUP); each is taken as Ctrl-C (see :func:`_stop_signals`)
STOP_SIGNALS = ("SIGTERM", "SIGHUP")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 failure, 2 usage/input error;
    stopped by Ctrl-C 130, by SIGTERM 143, by SIGHUP 129)."""
    received: list[int] = []
    _quiet_late_asyncgens()
    with _stop_signals(received):
        try:
            parser = build_parser()  # imports every command: Ctrl-C may come this early
            args = parser.parse_args(argv)
            func = getattr(args, "func", None)
            if func is None:
                parser.print_help(sys.stderr)
                return 2
            from referee.runtime.sandbox import protection_scope

            with protection_scope():  # what the command hides from bots, it hides for itself only
                status = int(func(args) or 0)
        except BaseException as exc:  # sorted out by _exit_status, re-raised if unknown
            code = _exit_status(exc)
            if code is None:
                raise
            status = code
    if status == 130 and received:
        return 128 + received[0]  # the shell's code for a program ended by that signal
    return status


def _quiet_late_asyncgens() -> None:
    """Keep one harmless shutdown message from the user: an async generator that a stopped command
    (Ctrl-C, SIGTERM, SIGHUP) left suspended is collected after ``trio.run`` has returned, and
    trio's finalizer for it can then only report ``RunFinishedError`` as an unraisable traceback.
    Nothing is left to clean up by then (every bot is closed and every game recorded inside the
    run); every other unraisable exception is reported as before."""
    previous = sys.unraisablehook
    if getattr(previous, "_referee_quiet", False):
        return

    def hook(unraisable: Any) -> None:
        exc = unraisable.exc_value
        if type(exc).__name__ == "RunFinishedError" and type(exc).__module__.startswith("trio"):
            return
        previous(unraisable)

    hook._referee_quiet = True  # type: ignore[attr-defined]
    sys.unraisablehook = hook


@contextmanager
def _stop_signals(received: list[int]) -> Iterator[None]:
    """While the command runs, SIGTERM and SIGHUP do what Ctrl-C does: each is handed to
    SIGINT's handler of the moment (trio's inside ``trio.run``, which raises ``KeyboardInterrupt``
    at a safe point and lets every command stop as on Ctrl-C: finished games recorded, bots
    closed; Python's default outside it), and its number appended to ``received``. Off the
    main thread (a command run from a test's thread) nothing changes."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        current = signal.getsignal(signal.SIGINT)
        if not callable(current):  # SIGINT ignored or not Python's (a background job of a shell)
            current = signal.default_int_handler
        current(signal.SIGINT, frame)

    before: dict[signal.Signals, Any] = {}
    for name in STOP_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is not None:
            before[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in before.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)


def _exit_status(exc: BaseException) -> int | None:
    """Turn an exception that reached the command line into a message and an
    exit status, or ``None`` for a real bug (which keeps its traceback).

    Exception groups (from trio nurseries) are looked through with
    :func:`referee.errors.user_facing`: Ctrl-C anywhere inside wins, then the
    first user error.
    """
    exc = user_facing(exc)
    if isinstance(exc, KeyboardInterrupt):
        print("interrupted", file=sys.stderr)
        return 130
    if isinstance(exc, (UserError, RulesError)):
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if isinstance(exc, BrokenPipeError):
        return 1
    sqlite3 = sys.modules.get("sqlite3")  # not imported: the exception is not SQLite's
    if sqlite3 is not None and isinstance(exc, sqlite3.DatabaseError):
        # a ledger damaged while a command read it (the ledger's own checks name the file first)
        print(
            f"error: a league ledger cannot be read ({exc}); restore it from a copy, or start the league "
            "afresh with --new-out",
            file=sys.stderr,
        )
        return 2
    if isinstance(exc, OSError) and exc.filename is not None:
        # a file or folder the user named cannot be used (missing, a file where a folder is needed, ...)
        print(f"error: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return None


if __name__ == "__main__":
    sys.exit(main())
