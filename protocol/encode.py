"""Encoding the referee's messages to bots: one place, from the message Structs.

Every message the referee writes to a bot is built here. ``start``, ``end``,
``error`` and ``hello`` are encoded from their Structs (:mod:`protocol.messages`).
Two messages are on the hot path of every decision and have a measured fast
path (see docs/PERFORMANCE.md, "Encoding"): the ``event`` lines, encoded once
per event from the rules' event dict and shared by every seat, and the
``turn`` line, spliced from pre-encoded parts. Tests check that both give
exactly the bytes of encoding the corresponding Struct.

Nothing here does I/O; every function is pure and returns ``bytes`` without
the trailing newline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .messages import ENCODER, Clock, End, Error, Start

__all__ = ["EventEncoder", "TurnEncoder", "end_line", "error_line", "start_line", "start_clock"]

_encode = ENCODER.encode


def start_clock(move_ms: int, bank_ms: int | None, mode: str) -> Clock:
    """The ``start.clock`` of a seat: ``bank_ms`` only with a bank, ``mode`` only when not "wall"."""
    return Clock(move_ms=move_ms, bank_ms=bank_ms, mode=None if mode == "wall" else mode)


def start_line(
    game: str,
    variant: str,
    rules: dict[str, Any],
    seat: int,
    seats: list[str],
    dealer: int,
    hand: list[str],
    clock: Clock,
) -> bytes:
    return _encode(
        Start(game=game, variant=variant, rules=rules, seat=seat, seats=seats, dealer=dealer, hand=hand, clock=clock)
    )


def end_line(
    game: str, scores: Sequence[float], ranks: Sequence[int], reason: str, detail: str | None, forfeits: Sequence[int]
) -> bytes:
    """``end``; ``detail`` and ``forfeits`` only when there are any."""
    return _encode(
        End(
            game=game,
            scores=list(scores),
            ranks=list(ranks),
            reason=reason,  # type: ignore[arg-type]
            detail=detail or None,
            forfeits=list(forfeits) or None,
        )
    )


def error_line(fault: str, detail: str, game: str | None = None, turn_id: int | None = None) -> bytes:
    return _encode(Error(fault=fault, detail=detail, game=game, id=turn_id))  # type: ignore[arg-type]


class EventEncoder:
    """``event`` lines of one protocol game: ``{"type":"event","game":G,"seq":K, ...event}``.

    :meth:`line` encodes the rules' event dict once (its keys are the event's
    field names, ``kind`` first); a ``draw`` event's ``card`` is private to the
    drawer, so :meth:`lines` gives the public and the private line."""

    __slots__ = ("prefix",)

    def __init__(self, game: str) -> None:
        self.prefix = b'{"type":"event","game":' + _encode(game) + b',"seq":'

    def line(self, seq: int, event: dict[str, Any]) -> bytes:
        return b"%b%d,%b" % (self.prefix, seq, _encode(event)[1:])

    def draw_lines(self, seq: int, event: dict[str, Any]) -> tuple[bytes, bytes]:
        """(public, private) lines of a ``draw`` event that carries its card."""
        head = b"%b%d," % (self.prefix, seq)
        public = head + _encode({k: v for k, v in event.items() if k != "card"})[1:]
        return public, head + _encode(event)[1:]


_DECIDE = {d: b',"decide":"%s",' % d.encode() for d in ("ask", "play", "take")}


class TurnEncoder:
    """``turn`` lines of one protocol game:
    ``{"type":"turn","game":G,"id":N,"decide":D, <view fields>, "clock":{"left_ms":L,"move_ms":M}}``.

    The view fields come pre-encoded from the engine when it offers
    ``turn_fields(seat)`` (the members of the JSON object of ``view(seat)``),
    else from encoding ``view(seat)``."""

    __slots__ = ("prefix",)

    def __init__(self, game: str) -> None:
        self.prefix = b'{"type":"turn","game":' + _encode(game) + b',"id":'

    def line(self, turn_id: int, decide: str, fields: bytes, left_ms: int, move_ms: int) -> bytes:
        return b'%b%d%b%b,"clock":{"left_ms":%d,"move_ms":%d}}' % (
            self.prefix,
            turn_id,
            _DECIDE[decide],
            fields,
            left_ms,
            move_ms,
        )

    @staticmethod
    def view_fields(view: dict[str, Any]) -> bytes:
        """The members of a view dict's JSON object (the general path)."""
        return _encode(view)[1:-1]
