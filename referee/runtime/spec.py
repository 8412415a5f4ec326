"""The runtime's door types (see docs/ARCHITECTURE.md section 3).

Plain dataclasses: what to start (:class:`BotSpec`), how to time it
(:class:`ClockSpec`), how to treat faults (:class:`FaultPolicy`), what to play
(:class:`GameSpec`) and what came out (:class:`GameResult`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .limits import ResourceLimits

if TYPE_CHECKING:  # pragma: no cover
    from referee.rules import Deal, Rules

FAULTS = ("timeout", "crash", "malformed", "illegal", "stale")


@dataclass
class BotSpec:
    """How to start a bot.

    ``command`` is an argv list, or a shell string run with ``/bin/sh -c``.
    ``env``: with the sandbox's clean environment (the default limits) these
    variables are added to a minimal base; without it None inherits the
    referee's environment and a dict replaces it (see docs/SECURITY.md).
    """

    name: str
    command: list[str] | str
    cwd: str | None = None
    env: dict[str, str] | None = None
    limits: ResourceLimits | None = None

    def argv(self) -> list[str]:
        if isinstance(self.command, str):
            return ["/bin/sh", "-c", self.command]
        return list(self.command)


@dataclass
class ClockSpec:
    """Time limits. ``mode`` "wall" measures elapsed time from the ``turn`` line
    written to the reply line read; "cpu" measures the CPU time of the bot's
    process group over the same span, with a wall ceiling per decision
    (``wall_ceiling_ms``, default 3 x ``move_ms``)."""

    move_ms: int = 1000
    bank_ms: int | None = None
    startup_ms: int = 10000
    mode: str = "wall"
    wall_ceiling_ms: int | None = None
    #: grace between ``bye`` and SIGKILL of the bot's process group
    grace_ms: int = 500

    def ceiling_ms(self) -> int:
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

    def to_json(self) -> dict[str, Any]:
        return {
            "move_ms": self.move_ms, "bank_ms": self.bank_ms, "startup_ms": self.startup_ms,
            "mode": self.mode, "wall_ceiling_ms": self.ceiling_ms(), "grace_ms": self.grace_ms,
        }


@dataclass
class FaultPolicy:
    """``retries``: extra tries for illegal or malformed replies within the same
    move time (the bot gets an ``error`` and may answer again); ``max_line``:
    the longest line a bot may write, in bytes; ``event_buffer``: bytes of
    event lines held for a seat before they are written without waiting for
    its next turn; ``max_decisions``: a hand that has not ended after this
    many decisions ends with reason "aborted" (no rule stops two bots from
    asking each other in circles forever)."""

    retries: int = 0
    max_line: int = 65536
    event_buffer: int = 16384
    #: a hand still running after this many decisions is aborted (bots that ask in circles)
    max_decisions: int = 100000

    def to_json(self) -> dict[str, Any]:
        return {"retries": self.retries, "max_line": self.max_line, "event_buffer": self.event_buffer,
                "max_decisions": self.max_decisions}


@dataclass
class GameSpec:
    """One game (or one match of several hands) to play.

    ``seed`` or ``deal`` fixes the cards (an explicit deal without a seed uses
    seed 0 for the fallback player). ``match`` None (or kind "single") is one
    game; a ``referee.rules.match.MatchFormat`` plays several hands as
    consecutive protocol games ``<game_id>.h1``, ``.h2``... in one log.

    ``seat_clocks`` (optional, one entry per seat, ``None`` entries allowed):
    seat ``i`` is timed by ``seat_clocks[i]`` (its ``move_ms``, ``bank_ms``,
    ``mode`` and ``wall_ceiling_ms``) instead of ``clock``; the seat's
    ``start`` and ``turn`` messages carry its own clock. A list of the wrong
    length makes :func:`play_game` raise ``ValueError``.
    """

    game_id: str
    rules: "Rules"
    players: int
    seed: int | None = None
    deal: "Deal | None" = None
    match: Any = None
    clock: ClockSpec = field(default_factory=ClockSpec)
    policy: FaultPolicy = field(default_factory=FaultPolicy)
    seat_clocks: "list[ClockSpec | None] | None" = None

    def clock_for(self, seat: int) -> ClockSpec:
        """The clock that times match seat ``seat``."""
        if self.seat_clocks is not None:
            c = self.seat_clocks[seat]
            if c is not None:
                return c
        return self.clock


@dataclass
class FaultRecord:
    seat: int
    bot: str
    fault: str
    detail: str
    decision_id: int | None = None
    game_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "bot": self.bot, "fault": self.fault, "detail": self.detail,
                "id": self.decision_id, "game": self.game_id}


@dataclass
class ThinkStats:
    """Measured think time of one seat's bot (decisions it answered itself,
    including the one that timed out): ``count``, ``mean_ms``, ``max_ms``."""

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


@dataclass
class GameResult:
    """The outcome. ``scores`` are match totals for matches. ``win_shares``:
    forfeited seats get 0; among the other seats the best score shares one win
    (k tied seats get 1/k each)."""

    game_id: str
    scores: list[float]
    ranks: list[int]
    win_shares: list[float]
    forfeits: list[int]
    faults: list[FaultRecord]
    think_ms: list[ThinkStats]
    log_path: str | None
    reason: str = "complete"
    detail: str | None = None
