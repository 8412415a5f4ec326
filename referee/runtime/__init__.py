"""The bot runtime (trio): processes, framing, clocks, faults, games, logs, replay.

The door for the league (docs/ARCHITECTURE.md section 3)::

    async with trio.open_nursery() as nursery:
        bots = [await BotSession.start(spec, clock, nursery) for spec in specs]
        try:
            result = await play_game(GameSpec(...), bots, log_dir)
        finally:
            for bot in bots:
                await bot.close()
"""

from referee.core.errors import (
    BotCrashed,
    BotError,
    BotIllegal,
    BotMalformed,
    BotRefused,
    BotStale,
    BotStartError,
    BotTimeout,
)

from .game import play_game
from .limits import ResourceLimits
from .process import BotProcess, ProcState
from .session import BotLineup, BotSession, open_bots, start_bots
from .spec import BotSpec, ClockSpec, FaultPolicy, FaultRecord, GameResult, GameSpec, ThinkStats

__all__ = [
    "BotCrashed",
    "BotError",
    "BotIllegal",
    "BotMalformed",
    "BotProcess",
    "BotRefused",
    "BotSession",
    "BotSpec",
    "BotStale",
    "BotStartError",
    "BotTimeout",
    "ClockSpec",
    "FaultPolicy",
    "FaultRecord",
    "GameResult",
    "GameSpec",
    "ProcState",
    "ResourceLimits",
    "ThinkStats",
    "play_game",
    "start_bots",
    "open_bots",
    "BotLineup",
]
