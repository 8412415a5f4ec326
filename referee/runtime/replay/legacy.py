"""Game logs older than version 3, as the hand machine's input stream.

The one place that knows the old formats. Versions 1 and 2 did not record the
machine's inputs other than replies; they are read back from the records
those inputs caused, by the records' kinds and order (never by their text):

* a ``crash`` fault with no turn id before anything was written: a bot dead at
  the start (:class:`DeadAtStart`; its ``death`` read back by the core's
  :func:`~referee.core.inputs.dead_at_start_death`);
* any other fault with no turn id (``crash``, ``timeout``): a failed write;
* a ``timeout`` or ``crash`` fault naming a turn: a timeout, a crash;
* the ``in``/``bad`` records of a seat after its timeout fault: stale lines;
* a ``bad`` record with ``long`` (version 2): a line too long, its detail that
  of the seat's next retry or fault; version 1 did not record such a line: a
  ``malformed`` retry or fault not right after a refused line of its seat is one;
* version 1 did not record a refused line's number: the seat's next retry or
  fault names it (:func:`referee.core.decode.detail_lineno`, the core's own wording).

Version 1 also recorded the refused replies and faults of a simultaneous
decision as they arrived (today: in seat order once every seat answered) and
did not record the ``error`` written for a stale line: :class:`V1Machine`
records as it did. Neither version records ``written`` or every closed pipe:
replay infers those (:attr:`Stream.infer_written`, :attr:`Stream.pipes_unlogged`).
Version 1 ask games are played with the rules as they were then
(:func:`rules_of`: no stalemate rule, old presets).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import msgspec

from referee.core.decode import detail_lineno
from referee.core.errors import is_retry_error, split_retry_note
from referee.core.inputs import (
    Crash,
    DeadAtStart,
    Input,
    Reply,
    StaleLine,
    Timeout,
    TooLong,
    WriteFailed,
    dead_at_start_death,
)
from referee.core.machine import HandMachine
from referee.core.records import ActRec, FaultRec, Header, InRec, OutRec, RetryRec
from referee.rules import AskRules, Rules, get_variant

from .stream import Lenience, Queue, Records, Stream, reply_bytes

__all__ = ["V1Lenience", "V1Machine", "legacy_stream", "rules_of"]


class V1Machine(HandMachine):
    """The hand machine recording as version 1 did: the records of a simultaneous
    decision as they come, no record of the ``error`` sent for a stale line."""

    def _defer(self, seat: Any, fn: Callable[[], None]) -> None:
        fn()

    def _log_stale_error(self, seat: int, data: bytes) -> None:
        pass


class V1Lenience(Lenience):
    """What replay forgives a version 1 log: the turns of a simultaneous decision written in
    no fixed order, refused-reply records without ``line``, ``raw`` and ``long``, and the
    ``malformed`` detail of a refused line whose logged text is lossy (``lossy``: those records'
    body indices; its fault's or retry's detail, and the retry's ``error``, are the log's)."""

    def __init__(self) -> None:
        self.lossy: set[int] = set()
        self._free: set[int] = set()  # seats whose next malformed detail cannot be re-derived

    def fed(self, k: int, seat: int) -> None:
        if k in self.lossy:
            self._free.add(seat)

    def next_out(self, q: Queue, key: str, want: dict[str, Any], to: int) -> tuple[str, dict[str, Any]]:
        if want["to"] == to:
            return key, want
        # what one seat was sent is ordered, writes to different seats need not be
        other = next((i for i, (k, w) in enumerate(q) if k == "out" and w["to"] == to), None)
        if other is None:
            return key, want
        q.appendleft((key, want))
        key, want = q[other + 1]
        del q[other + 1]
        return key, want

    def want_in(self, want: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in want.items() if k not in ("line", "raw", "long")}

    def want_fault(self, seat: int, got: dict[str, Any], want: dict[str, Any]) -> dict[str, Any]:
        if seat in self._free and want.get("fault") == "malformed" and got.get("fault") == "malformed":
            self._free.discard(seat)
            return dict(want, detail=got.get("detail"))
        return want

    def want_retry(self, seat: int, got: dict[str, Any], want: dict[str, Any], q: Queue) -> dict[str, Any]:
        if seat not in self._free or want.get("fault") != "malformed":
            return want
        self._free.discard(seat)
        detail = got.get("detail")
        for i, (key, w) in enumerate(q):  # the error sent with the retry carries the log's detail too
            if key == "out" and w["to"] == seat:
                msgs = [
                    dict(x, detail=str(detail) + split_retry_note(x["detail"])[1])
                    if x.get("type") == "error" and is_retry_error(x.get("detail", ""))
                    else x
                    for x in w["out"]
                ]
                q[i] = (key, dict(w, out=msgs))
                break
        return dict(want, detail=detail)


def rules_of(header: Header) -> Rules:
    """The rules a log's game was played with (raises like ``get_variant``)."""
    if header.log_version < 2 and header.rules.get("game", "ask") == "ask":
        return AskRules.from_record(header.rules)  # as played then (no stalemate rule, old presets)
    rules: Rules = get_variant(header.rules)  # get_variant returns Any (the record of any kind)
    return rules


def _following_detail(body: Records, k: int, seat: int) -> str | None:
    """The detail of ``seat``'s next retry or fault after record ``k``."""
    for _, rec, _r in body[k + 1 : k + 40]:
        if isinstance(rec, FaultRec) and rec.fault.seat == seat:
            return rec.fault.detail
        if isinstance(rec, RetryRec) and rec.retry.seat == seat:
            return rec.retry.detail
    return None


def _refused_line(body: Records, k: int, seat: int) -> bool:
    """Whether record ``k - 1`` is a refused line of ``seat`` (what a retry or fault follows)."""
    if k == 0:
        return False
    rec = body[k - 1][1]
    return isinstance(rec, InRec) and rec.from_ == seat


def _v1_bytes(rec: InRec) -> bytes:
    if rec.in_ is None and rec.bad is not None and rec.raw is None:
        # v1 kept a lossy text: each replacement character stands for an invalid byte
        return rec.bad.replace("\ufffd", "\udcff").encode("utf-8", "surrogateescape")
    return reply_bytes(rec)


def legacy_stream(version: int, body: Records) -> Stream:
    """The input stream of a version 1 or 2 log's body (see the module docstring)."""
    st = Stream(version, infer_written=True, pipes_unlogged=True)
    if version < 2:
        st.machine = V1Machine
        st.lenience = V1Lenience()
    written = False  # anything written yet (a fault before that is a bot dead at the start)
    timed_out: set[int] = set()
    for k, (_, rec, _r) in enumerate(body):
        ev: Input | None = None
        if isinstance(rec, (OutRec, ActRec)):
            written = True
            if isinstance(rec, ActRec) and not rec.act.fallback:
                a = rec.act
                ev = Reply(seat=a.seat, line=msgspec.json.encode(a.action), ms=a.ms, wall_ms=a.wall_ms)
        elif isinstance(rec, InRec):
            ev = _refused(version, body, k, rec, timed_out, st)
        elif isinstance(rec, FaultRec):
            f = rec.fault
            if f.decision_id is None:
                dead, death = (False, None) if written or f.fault != "crash" else dead_at_start_death(f.detail)
                if dead:
                    st.initial.append(DeadAtStart(seat=f.seat, death=death))
                elif f.fault in ("crash", "timeout"):
                    ev = WriteFailed(seat=f.seat, fault=f.fault, detail=f.detail)
            elif f.fault == "timeout":
                ev = Timeout(seat=f.seat, detail=f.detail)
                timed_out.add(f.seat)
            elif f.fault == "crash":
                ev = Crash(seat=f.seat, detail=f.detail)
            elif version < 2 and f.fault == "malformed" and not _refused_line(body, k, f.seat):
                ev = TooLong(seat=f.seat, head=b"", detail=f.detail, ms=0.0)  # v1: a line too long
        elif isinstance(rec, RetryRec):
            r = rec.retry
            if version < 2 and r.fault == "malformed" and not _refused_line(body, k, r.seat):
                ev = TooLong(seat=r.seat, head=b"", detail=r.detail, ms=0.0)  # v1: a line too long
        if ev is not None:
            st.inputs[k] = ev
    return st


def _refused(version: int, body: Records, k: int, rec: InRec, timed_out: set[int], st: Stream) -> Input:
    """The input an old ``in``/``bad`` record stands for."""
    s = rec.from_
    data = _v1_bytes(rec) if version < 2 else reply_bytes(rec)
    lineno = rec.line
    if lineno is None:  # v1: the fault or retry that follows names it
        lineno = detail_lineno(_following_detail(body, k, s))
    if rec.bad is not None and rec.raw is None and ("\ufffd" in rec.bad or len(rec.bad) >= 2000):
        cast(V1Lenience, st.lenience).lossy.add(k)  # v1 kept only a lossy text of this line
    if s in timed_out:
        st.input_only.add(k)  # today a stale line is an `input` record
        return StaleLine(seat=s, line=data, ms=rec.ms, lineno=lineno)
    if rec.long:
        st.input_only.add(k)  # today a line too long is an `input` record
        return TooLong(seat=s, head=data, detail=_following_detail(body, k, s) or "", ms=rec.ms, lineno=lineno)
    return Reply(seat=s, line=data, ms=rec.ms, lineno=lineno)
