"""The one way the referee enters trio: :func:`run`.

``trio.run`` by default turns Ctrl-C into a ``KeyboardInterrupt`` raised wherever Python happens to
be when the signal arrives, unless that code is marked protected. Most places are fine, but some
swallow it: an exception raised inside an at-fork hook (``logging``'s lock release in the parent,
run after every fork of a bot spawn that has a ``preexec_fn``) is printed as "Exception ignored" and
lost, and the command then waits for ever with every bot already gone. :func:`run` asks trio to
deliver Ctrl-C (and SIGTERM and SIGHUP, which the command line hands to the same handler) only at
the main task's next checkpoint, where it is raised as ``KeyboardInterrupt`` and unwinds the
nurseries as a cancellation does: finished games recorded, bot processes closed by their shielded
teardown. The price is that a long stretch of synchronous code finishes before Ctrl-C is seen; the
referee's synchronous stretches are short (a game's CPU work is a few milliseconds)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar, TypeVarTuple

import trio

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


def run(async_fn: Callable[[*Ts], Awaitable[T]], *args: *Ts) -> T:
    """``trio.run(async_fn, *args)`` with Ctrl-C delivered at checkpoints only (see the module's
    docstring). Off the main thread (a command run from a test's thread, a Dask worker's task)
    trio installs no Ctrl-C handler and this is plain ``trio.run``."""
    return trio.run(async_fn, *args, restrict_keyboard_interrupt_to_checkpoints=True)
