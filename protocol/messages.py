"""Protocol v1 message types, as msgspec Structs (tagged unions on ``type``).

The names here are the wire contract (see ``docs/PROTOCOL.md``); the project may
add optional fields, never rename or remove one.

Two directions, two unions:

* :data:`RefereeMessage` - what the referee writes to a bot
  (``hello``, ``start``, ``event``, ``turn``, ``end``, ``error``, ``bye``).
* :data:`BotMessage` - what a bot may write back
  (``hello``, ``ask``, ``play``, ``take``).

Decoding is strict (wrong types and missing fields are errors) but a bot's
unknown extra fields are ignored. Build decoders once: :data:`BOT_DECODER`,
:data:`REFEREE_DECODER`.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

PROTOCOL_VERSION = 1


class _Msg(msgspec.Struct, tag_field="type", omit_defaults=True, kw_only=True):
    pass


# --------------------------------------------------------------------------
# referee -> bot


class Clock(msgspec.Struct, omit_defaults=True, kw_only=True):
    """The game's clock settings: ``move_ms`` per decision, optional ``bank_ms``
    per game; ``mode`` is ``"wall"`` or ``"cpu"`` (optional field)."""

    move_ms: int
    bank_ms: int | None = None
    mode: str | None = None


class TurnClock(msgspec.Struct, omit_defaults=True, kw_only=True):
    """Time left: ``left_ms`` of the bank (or of the move when there is no bank);
    ``move_ms`` is this decision's limit."""

    left_ms: int | None = None
    move_ms: int | None = None


class Hello(_Msg, tag="hello", kw_only=True):
    protocol: int
    name: str
    referee: str | None = None


class Start(_Msg, tag="start", kw_only=True):
    game: str
    variant: str
    rules: dict[str, Any]
    seat: int
    seats: list[str]
    dealer: int
    hand: list[str]
    clock: Clock


class Event(_Msg, tag="event", kw_only=True):
    """A public event. ``kind`` says which of the optional fields are present:

    * ``deal``: counts, laid, first
    * ``ask``: seat, target, card or family, please, cards, rude, next
    * ``laid``: seat, family
    * ``draw``: seat (and card, in the drawer's own copy only)
    * ``reveal``: plays, centre
    * ``take``: seat, card, centre
    * ``round``: round, leader, commissioner, scores
    * ``fault``: seat, fault, detail
    """

    game: str
    seq: int
    kind: str
    seat: int | None = None
    target: int | None = None
    card: str | None = None
    family: str | None = None
    please: bool | None = None
    cards: list[str] | None = None
    rude: bool | None = None
    next: int | None = None
    counts: list[int] | None = None
    laid: list[list[str]] | None = None
    first: int | None = None
    plays: list[str] | None = None
    centre: list[str] | None = None
    round: int | None = None
    leader: int | None = None
    commissioner: int | None = None
    scores: list[int] | None = None
    fault: str | None = None
    detail: str | None = None


class Turn(_Msg, tag="turn", kw_only=True):
    game: str
    id: int
    decide: Literal["ask", "play", "take"]
    hand: list[str]
    counts: list[int]
    laid: list[list[str]]
    clock: TurnClock
    options: list[str] | None = None
    targets: list[int] | None = None
    centre: list[str] | None = None
    scores: list[int] | None = None
    round: int | None = None


#: why a game ended: ``complete`` (played to its end), ``stalled`` (an ask game ended by the
#: stalemate rule, RULES.md rule 10: scored as it stands, a result like any other) or
#: ``aborted`` (the referee could not finish it: no result)
EndReason = Literal["complete", "stalled", "aborted"]


class End(_Msg, tag="end", kw_only=True):
    game: str
    scores: list[float]
    ranks: list[int]
    reason: EndReason
    detail: str | None = None
    forfeits: list[int] | None = None


class Error(_Msg, tag="error", kw_only=True):
    fault: Literal["timeout", "crash", "malformed", "illegal", "stale"]
    detail: str
    game: str | None = None
    id: int | None = None


class Bye(_Msg, tag="bye", kw_only=True):
    pass


RefereeMessage = Hello | Start | Event | Turn | End | Error | Bye


# --------------------------------------------------------------------------
# bot -> referee


class BotHello(_Msg, tag="hello", kw_only=True):
    protocol: int
    name: str
    version: str | None = None


class AskReply(_Msg, tag="ask", kw_only=True):
    id: int
    target: int
    card: str | None = None
    family: str | None = None
    please: bool = False


class PlayReply(_Msg, tag="play", kw_only=True):
    id: int
    card: str


class TakeReply(_Msg, tag="take", kw_only=True):
    id: int
    card: str


BotMessage = BotHello | AskReply | PlayReply | TakeReply

#: reply type expected for each ``decide`` value of a turn
REPLY_FOR_DECISION: dict[str, type] = {"ask": AskReply, "play": PlayReply, "take": TakeReply}

BOT_DECODER: msgspec.json.Decoder[BotMessage] = msgspec.json.Decoder(BotMessage)
REFEREE_DECODER: msgspec.json.Decoder[RefereeMessage] = msgspec.json.Decoder(RefereeMessage)
ENCODER = msgspec.json.Encoder()


# --------------------------------------------------------------------------
# per-kind event shapes (for the JSON Schema and the docs; on the wire every
# event is the one ``Event`` message above)


class _Ev(msgspec.Struct, tag_field="kind", omit_defaults=True, kw_only=True):
    type: Literal["event"] = "event"
    game: str
    seq: int


class DealEvent(_Ev, tag="deal", kw_only=True):
    counts: list[int]
    laid: list[list[str]]
    first: int | None


class AskEvent(_Ev, tag="ask", kw_only=True):
    seat: int
    target: int
    card: str | None = None
    family: str | None = None
    please: bool
    cards: list[str]
    rude: bool
    next: int | None


class LaidEvent(_Ev, tag="laid", kw_only=True):
    seat: int
    family: str


class DrawEvent(_Ev, tag="draw", kw_only=True):
    seat: int
    card: str | None = None


class RevealEvent(_Ev, tag="reveal", kw_only=True):
    plays: list[str]
    centre: list[str]


class TakeEvent(_Ev, tag="take", kw_only=True):
    seat: int
    card: str
    centre: list[str]


class RoundEvent(_Ev, tag="round", kw_only=True):
    round: int
    leader: int
    commissioner: int
    scores: list[int]


class FaultEvent(_Ev, tag="fault", kw_only=True):
    seat: int
    fault: Literal["timeout", "crash", "malformed", "illegal", "stale"]
    detail: str


EventKind = DealEvent | AskEvent | LaidEvent | DrawEvent | RevealEvent | TakeEvent | RoundEvent | FaultEvent


# --------------------------------------------------------------------------
# the shapes of ``start.rules`` (the rules engines' ``to_wire()``; for the JSON Schema and the docs:
# on the wire ``Start.rules`` stays a plain object, so a bot reads it as one; a test decodes every
# engine's ``to_wire()`` with these, so they cannot drift)


class _Rules(msgspec.Struct, tag_field="game", forbid_unknown_fields=True, kw_only=True):
    name: str
    players: tuple[int, int]


class AskRulesWire(_Rules, tag="ask", kw_only=True):
    """``start.rules`` of an ask game (RULES.md part A, PROTOCOL.md's rules table)."""

    families: list[str]
    members: list[str]
    ask: Literal["card", "family"]
    miss: Literal["asked", "next"]
    please: bool
    stock: int
    first: Literal["left", "dealer"]
    stall: int | None = None
    family_points: int | None = None


class ChickensRulesWire(_Rules, tag="chickens", kw_only=True):
    """``start.rules`` of chickens: ``rounds`` is the table's size (null only in a log header)."""

    rounds: int | None
    cards: dict[str, int]
    nobles: list[str]


#: the base of every ``start.rules`` shape (a rules module defines its own on it: ``tag`` = its ``game``)
RulesWireBase = _Rules
