"""The hand machine's inputs: one closed, tagged union of msgspec Structs.

Whoever drives a :class:`referee.core.machine.HandMachine` tells it what
happened through :meth:`HandMachine.feed`, one :data:`Input` at a time:

* :class:`Reply` - a seat wrote a line while its turn was awaited;
* :class:`TooLong` - a seat wrote a line longer than ``FaultPolicy.max_line``;
* :class:`Timeout` - a seat did not answer its turn in time;
* :class:`Crash` - a seat's stdout closed (or its process ended) while awaited;
* :class:`WriteFailed` - a write to a seat failed (closed stdin, or it stopped reading);
* :class:`PipeClosed` - an ``error`` written at once could not be delivered;
* :class:`StaleLine` - a line a seat wrote after it timed out;
* :class:`DeadAtStart` - a seat's bot was not running when the game started
  (fed before :meth:`HandMachine.start`);
* :class:`Written` - the driver finished the writes it took.

The inputs that are not replies are rare: the machine logs each one as it
is fed (an ``input`` record, log version 3), so that replay feeds the very
same inputs again. Replies are not logged as inputs: their ``act``/``in``/
``bad`` records already are (the hot path logs no more than before).

Every detail worded by the driver (a timeout's, a crash's, a failed write's,
a line too long's) travels in the input and becomes the fault's detail
unchanged; the machine words its own (a dead seat's, a refused reply's) and
:func:`dead_at_start_death` reads its own wording back for old logs.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "Crash",
    "DEAD_AT_START",
    "DeadAtStart",
    "Input",
    "LoggedInput",
    "PipeClosed",
    "Reply",
    "StaleLine",
    "Timeout",
    "TooLong",
    "WRITTEN",
    "WriteFailed",
    "Written",
    "dead_at_start_death",
    "dead_at_start_detail",
]


class _SeatInput(msgspec.Struct, tag_field="type", kw_only=True):
    """An input about one match seat."""

    seat: int


class Reply(_SeatInput, tag="reply"):
    """``seat`` wrote ``line`` (without its newline) ``ms`` after its turn was
    written (its CPU time with the cpu clock; ``wall_ms`` the wall time then);
    ``lineno``: the line's number in the bot's output."""

    line: bytes
    ms: float
    wall_ms: float | None = None
    lineno: int | None = None


class TooLong(_SeatInput, tag="too_long"):
    """``seat`` wrote a line longer than the limit: ``head`` is its start,
    ``detail`` the framing's description (the fault's detail)."""

    head: bytes
    detail: str
    ms: float
    lineno: int | None = None


class Timeout(_SeatInput, tag="timeout"):
    """``seat`` did not answer its turn in time (``ms``: the time charged, when measured)."""

    detail: str
    ms: float | None = None


class Crash(_SeatInput, tag="crash"):
    """``seat``'s stdout closed (or its process ended) while its reply was awaited."""

    detail: str
    ms: float | None = None


class WriteFailed(_SeatInput, tag="write_failed"):
    """A write to ``seat`` failed: its stdin is closed (``fault`` "crash") or it
    stopped reading (``fault`` "timeout")."""

    fault: Literal["crash", "timeout"]
    detail: str


class PipeClosed(_SeatInput, tag="pipe_closed"):
    """Writes to ``seat`` fail (an ``error`` written at once was not delivered)."""


class StaleLine(_SeatInput, tag="stale_line"):
    """A line ``seat`` wrote after it timed out, ``ms`` after that turn was written."""

    line: bytes
    ms: float
    lineno: int | None = None


class DeadAtStart(_SeatInput, tag="dead_at_start"):
    """``seat``'s bot is not running at the start of the game (``death``: why, when known)."""

    death: str | None = None


class Written(msgspec.Struct, tag_field="type", tag="written"):
    """The driver finished the writes it took (and fed any failure)."""


#: the one :class:`Written` (it has no fields)
WRITTEN = Written()

#: the inputs a game log records (``input`` records): all but replies (and a ``written``
#: only when it ends a hand: the others change nothing)
LoggedInput = TooLong | Timeout | Crash | WriteFailed | PipeClosed | StaleLine | DeadAtStart | Written
#: every input of the machine
Input = Reply | LoggedInput

#: the start of a dead seat's ``crash`` detail (worded here, read back here only)
DEAD_AT_START = "the bot process is not running at the start of the game"


def dead_at_start_detail(death: str | None) -> str:
    """The detail of the ``crash`` fault of a seat dead at the start."""
    return DEAD_AT_START + (f" ({death})" if death else "")


def dead_at_start_death(detail: str) -> tuple[bool, str | None]:
    """Read :func:`dead_at_start_detail` back: (whether ``detail`` is one, its ``death``).
    For logs older than version 3, which recorded only the fault."""
    if detail == DEAD_AT_START:
        return True, None
    if detail.startswith(DEAD_AT_START + " (") and detail.endswith(")"):
        return True, detail[len(DEAD_AT_START) + 2 : -1]
    return False, None
