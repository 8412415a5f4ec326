"""The game log's records: one definition, used by the writer and every reader.

A game log is one JSON Lines file per game or match. :class:`Header` is the
first line; every other line is one record, told apart by its key:

* ``hand`` (:class:`HandRec`) - a hand (a protocol game) starts;
* ``out`` (:class:`OutRec`) - the lines written to one seat in one write
  (``to``), exactly as sent;
* ``act`` (:class:`ActRec`) - an action applied to the game: a bot's valid
  reply as received (``fallback`` false, with its think time ``ms``; with the
  cpu clock also ``wall_ms``), or the referee's fallback move;
* ``in`` / ``bad`` (:class:`InRec`) - a reply refused: one that decoded
  (``in``, embedded as JSON) or a line that did not (``bad``, as text);
  ``line`` is the line's number in the bot's output (log version 2);
* ``fault`` (:class:`FaultRec`), ``retry`` (:class:`RetryRec`);
* ``input`` (:class:`InputRec`) - an input of the hand machine other than a
  reply, as it came (:mod:`referee.core.inputs`: a line too long, a timeout, a
  crash, a failed write, a closed pipe, a stale line, a bot dead at the start),
  so that replay feeds the machine the very inputs it had (log version 3);
* ``capped`` (:class:`CappedRec`) - the log reached its size limit and stops
  recording the play here (log version 2);
* ``hand_end`` (:class:`HandEndRec`), ``stderr`` (:class:`StderrRec`, one per
  seat) and, last, ``footer`` (:class:`FooterRec`). A log without a footer is
  truncated.

Timed records carry ``t``, seconds since the game started (monotonic clock).

The runtime's writer (:class:`referee.runtime.gamelog.GameLog`) formats the
frequent records (``out``, ``act``, ``in``) as bytes by hand for speed; the
tests check that everything it writes decodes as these Structs. Version 2
added ``in.line``, ``bad.line``/``bad.long``, ``capped``, ``footer.log_capped``,
``seats[].sandbox``, the end reason ``stalled`` and ``policy.max_log_bytes``;
version 3 added the ``input`` records (a line too long and a stale line are
recorded as ``input`` records, no longer as ``bad``/``in`` records). Versions
1 and 2 are read too (:mod:`referee.runtime.replay.legacy` turns them into
the machine's inputs).
"""

from __future__ import annotations

from typing import Any

import msgspec

from .inputs import LoggedInput
from .spec import ClockSpec, EndReason, FaultKind, FaultPolicy, FaultRecord

__all__ = [
    "LOG_KIND",
    "LOG_VERSION",
    "READABLE_VERSIONS",
    "Header",
    "SeatInfo",
    "HandInfo",
    "HandRec",
    "OutRec",
    "ActInfo",
    "ActRec",
    "InRec",
    "FaultRec",
    "InputRec",
    "RetryInfo",
    "RetryRec",
    "CappedInfo",
    "CappedRec",
    "HandEndInfo",
    "HandEndRec",
    "DroppedInfo",
    "StderrInfo",
    "StderrRec",
    "FooterInfo",
    "FooterRec",
    "RECORD_TYPES",
    "record_type",
    "bad_line_fields",
    "bad_line_bytes",
]

LOG_KIND = "card-referee-game"
LOG_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)


class _S(msgspec.Struct, kw_only=True):
    pass


class SeatInfo(_S):
    """A seat of the header: the bot's league name, its command, its ``hello``
    (name/version) and how it was sandboxed (free text fields: not provable)."""

    seat: int
    bot: str
    command: list[str] | str
    hello: dict[str, Any] | None
    sandbox: dict[str, Any] | None = None


class Header(_S):
    log: str
    log_version: int
    protocol: int
    referee: str
    game: str
    variant: str
    rules: dict[str, Any]
    players: int
    seed: int | None
    deal: dict[str, Any] | None
    match: dict[str, Any] | None
    seats: list[SeatInfo]
    clock: ClockSpec
    policy: FaultPolicy
    seat_clocks: list[ClockSpec] | None
    started: str | None = None  # UTC date and time the game started (not provable)


class HandInfo(_S):
    index: int
    game: str
    seats: list[int]
    dealer: int
    seed: int | None
    deal: dict[str, Any] | None
    tiebreak: bool | None = None  # matches only


class HandRec(_S):
    hand: HandInfo


class OutRec(_S):
    t: float
    to: int
    out: list[dict[str, Any]]


class ActInfo(_S):
    seat: int
    id: int | None
    decide: str
    fallback: bool
    action: dict[str, Any]
    ms: float
    wall_ms: float | None = None  # cpu clock: the decision's wall time (``ms`` is then CPU time)


class ActRec(_S):
    t: float
    act: ActInfo


class InRec(_S):
    t: float
    from_: int = msgspec.field(name="from")
    ms: float
    in_: Any = msgspec.field(name="in", default=None)
    bad: str | None = None
    line: int | None = None  # the line's number in the bot's output (version 2)
    long: bool = False  # ``bad``: the line was longer than the limit (its start is shown)
    raw: str | None = None  # ``bad``: the whole line in base64 when ``bad`` is not exactly it (version 2)


class FaultRec(_S):
    t: float
    fault: FaultRecord


class InputRec(_S):
    """An input of the hand machine other than a reply, as it came (version 3)."""

    t: float
    input: LoggedInput


class RetryInfo(_S):
    seat: int
    id: int
    fault: FaultKind
    detail: str
    left: int


class RetryRec(_S):
    t: float
    retry: RetryInfo


class CappedInfo(_S):
    bytes: int


class CappedRec(_S):
    t: float
    capped: CappedInfo


class HandEndInfo(_S):
    game: str
    scores: list[float]
    ranks: list[int]
    reason: EndReason
    index: int | None = None
    detail: str | None = None


class HandEndRec(_S):
    hand_end: HandEndInfo


class DroppedInfo(_S):
    lines: int
    bytes: int


class StderrInfo(_S):
    seat: int
    bot: str
    tail: str
    #: the seat's stale lines this game did not log (over the machine's STALE_LOG_LINES/BYTES)
    stale_dropped: DroppedInfo | None = None


class StderrRec(_S):
    stderr: StderrInfo


class FooterInfo(_S):
    scores: list[float]
    ranks: list[int]
    win_shares: list[float]
    forfeits: list[int]
    reason: EndReason
    detail: str | None
    faults: list[FaultRecord]
    think_ms: list[dict[str, Any]]
    log_capped: bool = False


class FooterRec(_S):
    footer: FooterInfo


#: the key that names a record's kind -> its Struct
RECORD_TYPES: dict[str, type] = {
    "out": OutRec,
    "act": ActRec,
    "fault": FaultRec,
    "input": InputRec,
    "hand": HandRec,
    "hand_end": HandEndRec,
    "in": InRec,
    "bad": InRec,
    "retry": RetryRec,
    "capped": CappedRec,
    "stderr": StderrRec,
    "footer": FooterRec,
}


def record_type(raw: dict[str, Any]) -> tuple[str, type] | None:
    """The kind key and Struct of a decoded record (``None`` if unknown)."""
    for key, typ in RECORD_TYPES.items():
        if key in raw:
            return key, typ
    return None


def bad_line_fields(raw: bytes) -> dict[str, Any]:
    """How a refused line that is not a valid message is logged (``bad``): its
    text (invalid UTF-8 replaced, at most 2,000 characters, for a human) and,
    when that text is not exactly the line, ``raw``: the whole line in base64,
    so that replay sees the very bytes the bot wrote."""
    import base64

    text = raw.decode("utf-8", "replace")
    out: dict[str, Any] = {"bad": text[:2000]}
    if len(text) > 2000 or text.encode("utf-8") != raw:
        out["raw"] = base64.b64encode(raw).decode("ascii")
    return out


def bad_line_bytes(rec: InRec) -> bytes:
    """The bytes of a ``bad`` record's line (exact when ``raw`` is present)."""
    import base64

    if rec.raw is not None:
        return base64.b64decode(rec.raw)
    return (rec.bad or "").encode("utf-8")
