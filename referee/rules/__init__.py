"""Rules engines: pure, deterministic, no I/O.

Entry points:

* :func:`get_variant` - a rules record from a preset name (``"kwartet"``) or a
  custom-variant parameter mapping (as in a league config or a log header).
* ``rules.new_game(players, seed=..., deal=...)`` - a fresh :class:`GameState`.
* :data:`VARIANTS` - the preset names.
"""

from __future__ import annotations

import difflib
from typing import Any, Mapping

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
from .rng import Rng, derive

Rules = AskRules | ChickensRules

VARIANTS: tuple[str, ...] = (*ASK_PRESETS, "chickens")


def get_variant(spec: str | Mapping[str, Any]) -> Rules:
    """Return the rules record for a preset name or a parameter mapping.

    A mapping with ``"game": "chickens"`` (or ``name == "chickens"``) gives
    chickens; any other mapping is an ask variant (see ``AskRules.from_params``).
    Raises :class:`RulesError` with a clear message for unknown names (naming
    the closest preset, for a typo) and invalid combinations.
    """
    if isinstance(spec, str):
        if spec == "chickens":
            return ChickensRules()
        if spec in ASK_PRESETS:
            return ASK_PRESETS[spec]
        close = difflib.get_close_matches(spec, VARIANTS, n=1, cutoff=0.6)
        raise RulesError(
            f"unknown variant {spec!r}; the presets are {', '.join(VARIANTS)} "
            "(or define a custom ask variant with its parameters)" + (f"; did you mean '{close[0]}'?" if close else "")
        )
    if spec.get("game") == "chickens" or spec.get("name") == "chickens":
        return ChickensRules.from_params(spec)
    return AskRules.from_params(spec)


__all__ = [
    "Ask",
    "AskGame",
    "AskRules",
    "ASK_PRESETS",
    "ChickensGame",
    "ChickensRules",
    "Deal",
    "Event",
    "GameState",
    "IllegalAction",
    "Play",
    "Rng",
    "Rules",
    "RulesError",
    "Take",
    "VARIANTS",
    "derive",
    "event_for_seat",
    "get_variant",
    "ranks_from_scores",
    "win_shares",
]
