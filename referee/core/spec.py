"""What to play and what came out: the shapes shared by the hand machine, the
runtime, the game log, replay and the league.

Each shape is defined once, as a msgspec Struct, and used by whoever writes
it and whoever reads it:

* :class:`ClockSpec` - the time limits (league config ``[clock]``, the game
  spec, the log header's ``clock``/``seat_clocks``);
* :class:`FaultPolicy` - retries, line and event-buffer sizes, the decision and
  log-size backstops (league ``[faults]``, the game spec, the log header);
* :class:`GameSpec` - one game or match to play;
* :class:`FaultRecord`, :class:`ThinkStats`, :class:`GameResult` - what a game
  produced (the log's ``fault`` records and footer, the league's ledger rows).

``Meta`` constraints are checked when the shape is decoded (a config, a log);
code that builds a shape directly calls ``validate()``, which raises
``ValueError`` naming the field.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import Meta

from referee.rules import registry as _registry
from referee.rules.kind import DECISIONS_PER_CARD_AND_SEAT as _PER_CARD
from referee.rules.kind import MAX_DECISIONS as _MAX_DECISIONS

from .errors import Problem

__all__ = [
    "ClockSpec",
    "FaultPolicy",
    "FaultRecord",
    "GameResult",
    "GameSpec",
    "ThinkStats",
    "FAULT_KINDS",
    "END_REASONS",
    "MAX_DECISIONS",
    "max_decisions_for",
]

#: the protocol's fault names
FaultKind = Literal["timeout", "crash", "malformed", "illegal", "stale"]
FAULT_KINDS: tuple[str, ...] = ("timeout", "crash", "malformed", "illegal", "stale")
#: how a hand or game ends: ``complete`` (the rules ended it), ``stalled`` (the stalemate rule ended an
#: ask hand; scored as it stands, a complete result), ``aborted`` (no result: a backstop or a failure)
EndReason = Literal["complete", "stalled", "aborted"]
END_REASONS: tuple[str, ...] = ("complete", "stalled", "aborted")

#: ``FaultPolicy.max_decisions`` by default: a hand still running after this many decisions is
#: aborted (defined in :mod:`referee.rules.kind`, with the measurements behind it); a kind's
#: default cap is its registration's ``max_decisions`` (``max_decisions_for``)
MAX_DECISIONS = _MAX_DECISIONS
DECISIONS_PER_CARD_AND_SEAT = _PER_CARD


def max_decisions_for(rules: Any, players: int) -> int:
    """The default cap on a hand's decisions for ``rules`` at ``players`` seats
    (used when a league or ``referee play`` does not set one), as the game's
    kind registers it (``referee.rules.registry``): :data:`MAX_DECISIONS`, or
    for a big deck :data:`DECISIONS_PER_CARD_AND_SEAT` per card and seat if that
    is more (random players need more turns to gather bigger families). Pure."""
    return _registry.max_decisions_for(rules, players)


Positive = Annotated[int, Meta(ge=1)]
NonNegative = Annotated[int, Meta(ge=0)]


#: how far past its wall limit a reply may be read and still be accepted. A reply already waiting
#: when the referee gets to run after its deadline is accepted and measured then (the referee's own
#: lateness is not the bot's timeout): an overloaded host (+400 ms seen with move_ms 100 and 36
#: games at once, +1,061 ms under a loaded test suite). Past this bound the runtime judges the
#: decision a timeout (its detail says the referee read the reply late) and replay refuses an
#: accepted reply measured later: the two apply this one figure, so a real log always verifies
LATE_READ_MS = 2500.0


class ClockSpec(msgspec.Struct, kw_only=True):
    """Time limits of one seat (or of every seat).

    ``mode`` "wall" measures elapsed time from the ``turn`` line written to the
    reply line read; "cpu" measures the CPU time of the bot over the same span,
    under a wall ceiling per decision (``wall_ceiling_ms``, default 3 x
    ``move_ms``). ``bank_ms``: a total per game (per hand of a match) from which
    each decision's time is taken. ``startup_ms`` bounds the ``hello``;
    ``grace_ms`` is the time between ``bye`` and SIGKILL.
    """

    move_ms: Positive = 1000
    bank_ms: Positive | None = None
    startup_ms: Positive = 10000
    mode: Literal["wall", "cpu"] = "wall"
    wall_ceiling_ms: Positive | None = None
    grace_ms: NonNegative = 500

    def ceiling_ms(self) -> int:
        """The wall-clock limit of one decision."""
        if self.mode == "cpu":
            return self.wall_ceiling_ms if self.wall_ceiling_ms is not None else 3 * self.move_ms
        return self.move_ms

    def validate(self) -> None:
        """Raise ``ValueError`` naming the bad field."""
        if self.mode not in ("wall", "cpu"):
            raise ValueError(f"clock mode must be 'wall' or 'cpu', got {self.mode!r}")
        if self.move_ms <= 0:
            raise ValueError(f"move_ms must be positive, got {self.move_ms}")
        if self.bank_ms is not None and self.bank_ms <= 0:
            raise ValueError(f"bank_ms must be positive, got {self.bank_ms}")
        if self.startup_ms <= 0:
            raise ValueError(f"startup_ms must be positive, got {self.startup_ms}")
        if self.grace_ms < 0:
            raise ValueError(f"grace_ms must be 0 or more, got {self.grace_ms}")
        if self.wall_ceiling_ms is not None and self.wall_ceiling_ms <= 0:
            raise ValueError(f"wall_ceiling_ms must be positive, got {self.wall_ceiling_ms}")

    def resolved(self) -> ClockSpec:
        """This clock with ``wall_ceiling_ms`` filled in (the log header's form)."""
        return msgspec.structs.replace(self, wall_ceiling_ms=self.ceiling_ms())

    def to_json(self) -> dict[str, Any]:
        """The log header's form (builtins; ``wall_ceiling_ms`` resolved)."""
        out: dict[str, Any] = msgspec.to_builtins(self.resolved())
        return out


class FaultPolicy(msgspec.Struct, kw_only=True):
    """How faults and runaway games are handled.

    ``retries``: extra tries for illegal or malformed replies within the same
    move time (the bot gets an ``error`` and may answer again); ``max_line``:
    the longest line a bot may write, in bytes; ``event_buffer``: bytes of
    event lines held for a seat before they are written without waiting for
    its next turn; ``max_decisions``: the last backstop against a hand that
    never ends: the stalemate rule ends hands in which no card moves, but bots
    can also hand the same cards back and forth forever; a hand still running
    after this many decisions ends "aborted" (a league and ``referee play``
    use :func:`max_decisions_for` unless told otherwise); ``max_log_bytes``: a
    game log stops recording the play once it reaches this size (it says so
    in a ``capped`` record and its footer, and the result says so too).
    """

    retries: NonNegative = 0
    max_line: Annotated[int, Meta(ge=64)] = 65536
    event_buffer: Annotated[int, Meta(ge=0)] = 16384
    max_decisions: Positive = MAX_DECISIONS
    max_log_bytes: Annotated[int, Meta(ge=65536)] = 32 * 1024 * 1024

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


class FaultRecord(msgspec.Struct, dict=True):
    """One fault: ``seat`` (match seat), ``bot``, ``fault`` (the protocol's
    name), ``detail`` (what the bot is told), ``decision_id`` (the turn it
    answered, if any; ``id`` on the wire) and ``game_id`` (the hand's protocol
    game id; ``game`` on the wire). The log's ``fault`` record and the
    ledger's faults use this shape. ``problem``: the structured
    :class:`~referee.core.errors.Problem` of a malformed or illegal reply, for
    a program to act on without reading ``detail``; in memory only (not a
    field: never encoded, not compared; None when read back from a log), set
    by :meth:`with_problem`."""

    seat: int
    bot: str
    fault: FaultKind
    detail: str
    decision_id: int | None = msgspec.field(default=None, name="id")
    game_id: str | None = msgspec.field(default=None, name="game")
    problem: ClassVar[Problem | None] = None

    def with_problem(self, problem: Problem | None) -> FaultRecord:
        """This record, with its in-memory :attr:`problem` set (returns self)."""
        setattr(self, "problem", problem)  # noqa: B010  an instance attribute (dict=True) over a ClassVar, which mypy refuses as `self.problem =`
        return self

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "bot": self.bot,
            "fault": self.fault,
            "detail": self.detail,
            "id": self.decision_id,
            "game": self.game_id,
        }


class ThinkStats(msgspec.Struct, kw_only=True):
    """Measured think time of one seat's bot (decisions it answered itself,
    including the one that faulted): ``count``, ``mean_ms``, ``max_ms``."""

    count: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0

    @property
    def mean_ms(self) -> float:
        return self.total_ms / self.count if self.count else 0.0

    def add(self, ms: float) -> None:
        self.count += 1
        self.total_ms += ms
        if ms > self.max_ms:
            self.max_ms = ms

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "mean_ms": round(self.mean_ms, 3), "max_ms": round(self.max_ms, 3)}


class GameSpec(msgspec.Struct):
    """One game (or one match of several hands) to play.

    ``seed`` or ``deal`` fixes the cards (an explicit deal without a seed uses
    seed 0 for the fallback player). ``match`` None (or kind "single") is one
    game; a :class:`referee.rules.match.MatchFormat` plays several hands as
    consecutive protocol games ``<game_id>.h1``, ``.h2``... in one log.

    ``seat_clocks`` (optional, one entry per seat, ``None`` entries allowed):
    seat ``i`` is timed by ``seat_clocks[i]`` instead of ``clock``; the seat's
    ``start`` and ``turn`` messages carry its own clock.
    """

    game_id: str
    rules: Any
    players: int
    seed: int | None = None
    deal: Any = None
    match: Any = None
    clock: ClockSpec = msgspec.field(default_factory=ClockSpec)
    policy: FaultPolicy = msgspec.field(default_factory=FaultPolicy)
    seat_clocks: list[ClockSpec | None] | None = None

    def clock_for(self, seat: int) -> ClockSpec:
        """The clock that times match seat ``seat``."""
        if self.seat_clocks is not None:
            c = self.seat_clocks[seat]
            if c is not None:
                return c
        return self.clock


class GameResult(msgspec.Struct, kw_only=True):
    """The outcome. ``scores`` are match totals for matches. ``win_shares``:
    forfeited seats get 0; among the other seats the best score shares one win
    (k tied seats get 1/k each). ``reason``: "complete", "stalled" (a complete
    result ended by the stalemate rule) or "aborted" (no result; ``detail``
    says why). ``log_capped``: the log reached ``FaultPolicy.max_log_bytes``
    and stopped recording the play."""

    game_id: str
    scores: list[float]
    ranks: list[int]
    win_shares: list[float]
    forfeits: list[int]
    faults: list[FaultRecord]
    think_ms: list[ThinkStats]
    log_path: str | None
    reason: EndReason = "complete"
    detail: str | None = None
    log_capped: bool = False
