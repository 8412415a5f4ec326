"""The runtime's door types (see docs/ARCHITECTURE.md).

:class:`BotSpec` says how to start a bot. The game's shapes (clock, fault
policy, game spec, result) are the core's (:mod:`referee.core.spec`),
re-exported here for the runtime's callers.
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.core.spec import (
    DECISIONS_PER_CARD_AND_SEAT,
    MAX_DECISIONS,
    ClockSpec,
    FaultPolicy,
    FaultRecord,
    GameResult,
    GameSpec,
    ThinkStats,
    max_decisions_for,
)

from .limits import ResourceLimits


@dataclass
class BotSpec:
    """How to start a bot.

    ``command`` is an argv list, or a shell string run with ``/bin/sh -c``.
    ``env``: with the sandbox's clean environment (the default limits) these
    variables are added to a minimal base; without it None inherits the
    referee's environment and a dict replaces it (see docs/SECURITY.md).
    ``data``: folders the bot may read besides its own (mounted read-only at
    their resolved paths in bubblewrap; refused like any mount that shows a
    protected path).
    """

    name: str
    command: list[str] | str
    cwd: str | None = None
    env: dict[str, str] | None = None
    limits: ResourceLimits | None = None
    #: a build step (referee.runtime.build), not a bot: its seccomp filter allows file locks
    build: bool = False
    data: tuple[str, ...] = ()

    def argv(self) -> list[str]:
        if isinstance(self.command, str):
            return ["/bin/sh", "-c", self.command]
        return list(self.command)


__all__ = [
    "BotSpec",
    "ClockSpec",
    "DECISIONS_PER_CARD_AND_SEAT",
    "FaultPolicy",
    "FaultRecord",
    "GameResult",
    "GameSpec",
    "MAX_DECISIONS",
    "ThinkStats",
    "max_decisions_for",
]
