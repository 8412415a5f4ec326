"""Rules engines: pure, deterministic, no I/O.

Entry points:

* :func:`get_variant` - a rules record from a preset name (``"kwartet"``) or a
  custom-variant parameter mapping (as in a league config or a log header).
* ``rules.new_game(players, seed=..., deal=...)`` - a fresh :class:`GameState`.
* :data:`VARIANTS` - the preset names; :data:`KINDS` - every kind of game
  (``referee.rules.registry``: where a game registers).
"""

from __future__ import annotations

from .ask import ASK_PRESETS, AskGame, AskRules
from .base import (
    Ask,
    Deal,
    Event,
    GameState,
    IllegalAction,
    Play,
    RulesError,
    Take,
    event_for_seat,
    ranks_from_scores,
    win_shares,
)
from .chickens import ChickensGame, ChickensRules
from .kind import GameKind
from .kind import RulesRecord as Rules
from .registry import KINDS, VARIANTS, get_variant, kind_of
from .rng import Rng, derive

__all__ = [
    "Ask",
    "AskGame",
    "AskRules",
    "ASK_PRESETS",
    "ChickensGame",
    "ChickensRules",
    "Deal",
    "Event",
    "GameKind",
    "GameState",
    "IllegalAction",
    "KINDS",
    "Play",
    "Rng",
    "Rules",
    "RulesError",
    "Take",
    "VARIANTS",
    "derive",
    "event_for_seat",
    "get_variant",
    "kind_of",
    "ranks_from_scores",
    "win_shares",
]
