"""A game log as the hand machine's input stream (:class:`Stream`).

A version 3 log records every input: a reply is its ``act`` record (accepted)
or its ``in``/``bad`` record (refused); every other input is an ``input``
record (:mod:`referee.core.inputs`), written as it came. Older logs go
through :mod:`referee.runtime.replay.legacy`, the one place that knows them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import msgspec

from referee.core.inputs import DeadAtStart, Input, Reply
from referee.core.machine import HandMachine
from referee.core.records import ActRec, HandRec, InputRec, InRec, bad_line_bytes

__all__ = ["Lenience", "Queue", "Stream", "stream_of"]

Records = list[tuple[int, Any, dict[str, Any]]]
#: replay's queue of what the machine recorded, not yet compared: (record key, its dict form)
Queue = deque[tuple[str, dict[str, Any]]]


class Lenience:
    """What replay forgives the records of a log: nothing (version 3). Each hook gets what the
    re-simulation expects and returns what it then compares with the log; the subclasses of
    :mod:`referee.runtime.replay.legacy` forgive what older versions did not record or wrote
    otherwise."""

    def fed(self, k: int, seat: int) -> None:
        """Body record ``k`` (an input of ``seat``) is being fed."""

    def next_out(self, q: Queue, key: str, want: dict[str, Any], to: int) -> tuple[str, dict[str, Any]]:
        """The expected record to compare with the log's write to seat ``to`` (``key``, ``want``: the next
        expected one, already taken from ``q``)."""
        return key, want

    def want_in(self, want: dict[str, Any]) -> dict[str, Any]:
        """The expected refused-reply record."""
        return want

    def want_fault(self, seat: int, got: dict[str, Any], want: dict[str, Any]) -> dict[str, Any]:
        """The expected fault of ``seat`` (``got``: the log's)."""
        return want

    def want_retry(self, seat: int, got: dict[str, Any], want: dict[str, Any], q: Queue) -> dict[str, Any]:
        """The expected retry of ``seat`` (``got``: the log's; ``q``: what is expected after it)."""
        return want


@dataclass
class Stream:
    """What replay feeds the machine: ``initial`` (before ``start``), then
    ``inputs[k]`` when it reaches record ``k`` of the log's body (the records
    between the header and the footer). ``input_only``: records that are
    inputs and nothing the machine writes (not compared)."""

    version: int
    initial: list[DeadAtStart] = field(default_factory=list)
    inputs: dict[int, Input] = field(default_factory=dict)
    input_only: set[int] = field(default_factory=set)
    #: the machine that reads this version (legacy logs: one that records as they did)
    machine: type[HandMachine] = HandMachine
    #: older logs do not record ``written``: replay infers it (before the next record that is not a failed write)
    infer_written: bool = False
    #: older logs do not record every closed pipe of a seat that faulted: its missing messages are forgiven
    pipes_unlogged: bool = False
    #: what replay forgives this version's records (none for version 3; older: :mod:`.legacy`'s)
    lenience: Lenience = field(default_factory=lambda: Lenience())


def reply_bytes(rec: InRec) -> bytes:
    """The bytes of a refused reply's line, as the bot wrote them."""
    if rec.in_ is not None:
        return msgspec.json.encode(rec.in_)
    return bad_line_bytes(rec)


def stream_of(records: Records) -> Stream:
    """The input stream of a loaded log of the current version (3:
    :func:`referee.runtime.replay.load.load_log`); older logs go through
    :func:`referee.runtime.replay.legacy.legacy_stream` (the package's
    :func:`referee.runtime.replay.inputs_of` picks one by the log's version)."""
    version = records[0][1].log_version
    body = records[1:-1]
    st = Stream(version)
    started = False
    for k, (_, rec, _r) in enumerate(body):
        if isinstance(rec, ActRec):
            a = rec.act
            if not a.fallback:
                st.inputs[k] = Reply(seat=a.seat, line=msgspec.json.encode(a.action), ms=a.ms, wall_ms=a.wall_ms)
        elif isinstance(rec, InRec):
            st.inputs[k] = Reply(seat=rec.from_, line=reply_bytes(rec), ms=rec.ms, lineno=rec.line)
        elif isinstance(rec, InputRec):
            st.input_only.add(k)
            if isinstance(rec.input, DeadAtStart) and not started:
                st.initial.append(rec.input)
            else:
                st.inputs[k] = rec.input
        elif isinstance(rec, HandRec):
            started = True
    return st
