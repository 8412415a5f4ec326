"""The engine registry: every kind of game, registered in one place.

:data:`KINDS` lists the :class:`~referee.rules.kind.GameKind` of every game the
referee plays (the ask games, chickens...). Everything that differs per
kind is read from here: the preset names (:data:`VARIANTS`), a config's or a
log's rules (:func:`get_variant`, :func:`from_record`), the ``start.rules``
union for strict decoding and the JSON Schema (:func:`rules_wire`), the
decision cap (:func:`max_decisions_for`), the log form of an action
(:func:`action_json`), the viewer's public snapshot (:func:`kind_of` ``.snapshot``),
the SDK's style (:func:`style_of_wire`), check-bot's variants and table sizes
and the bench's variants.

Adding a game: write its rules module (a rules record, a :class:`GameState`,
its ``start.rules`` Struct and a ``KIND = GameKind(...)``) and add it to
:data:`KINDS` below. Pure; no I/O.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, Union

from protocol.messages import AskRulesWire, ChickensRulesWire

from . import go_fish
from .ask import ASK_PRESETS, AskRules, _tables
from .base import RulesError
from .chickens import CARD_VALUES, ChickensRules
from .kind import GameKind, Style, deck_decisions

__all__ = [
    "KINDS",
    "VARIANTS",
    "action_json",
    "from_record",
    "get_variant",
    "kind_named",
    "kind_of",
    "max_decisions_for",
    "presets",
    "rules_wire",
    "style_of_wire",
]


def _ask_snapshot(state: Any, pending: Any) -> dict[str, Any]:
    return {
        "laid": state.laid(),
        "scores": state.scores(),
        "turn": pending[0] if pending else None,
        "stock": state.stock_size(),
        "dealer": state.dealer,
    }


def _chickens_snapshot(state: Any, pending: Any) -> dict[str, Any]:
    playing = not state.terminal and state.decision() == "play"
    return {
        "laid": [list(x) for x in state.view(0)["laid"]],
        "scores": list(state.scores()),
        "centre": list(state.centre()),
        "round": state.round,
        "leader": state.leader,
        "commissioner": state.commissioner,
        # who has put a card face down: only while the play is awaited (the reveal shows them)
        "played": [playing and s not in pending for s in range(state.n)],
        "turn": pending[0] if len(pending) == 1 and state.decision() == "take" else None,
    }


def _ask_family(rules: AskRules, card: str) -> str:
    t = _tables(rules)
    return t.family_names[t.card_fam[t.card_index[card]]]


ASK = GameKind(
    game="ask",
    style="ask",
    rules_type=AskRules,
    wire=AskRulesWire,
    presets=ASK_PRESETS,
    from_params=AskRules.from_params,
    from_record=AskRules.from_record,
    snapshot=_ask_snapshot,
    max_decisions=lambda rules, players: deck_decisions(len(rules.deck), players),
    decisions=("ask",),
    per_seat=("laid", "scores"),
    seat_refs=("turn", "dealer"),
    matches=True,
    deals=True,
    family_of=_ask_family,
    family_points=lambda rules: rules.family_points,
)

CHICKENS = GameKind(
    game="chickens",
    style="chickens",
    rules_type=ChickensRules,
    wire=ChickensRulesWire,
    presets={"chickens": ChickensRules()},
    from_params=ChickensRules.from_params,
    from_record=ChickensRules.from_params,
    snapshot=_chickens_snapshot,
    max_decisions=lambda rules, players: deck_decisions(0, players),
    decisions=("play", "take"),
    per_seat=("laid", "scores", "played"),
    seat_refs=("turn", "leader", "commissioner"),
    deck=lambda rules: tuple(CARD_VALUES),
)

#: every kind of game, in the order the presets are listed (the registration lines)
KINDS: tuple[GameKind, ...] = (
    ASK,
    CHICKENS,
    go_fish.KIND,
)

_BY_GAME: dict[str, GameKind] = {k.game: k for k in KINDS}
_BY_TYPE: dict[type, GameKind] = {k.rules_type: k for k in KINDS}
_PRESETS: dict[str, tuple[GameKind, Any]] = {}
for _k in KINDS:
    if len(_BY_GAME) != len(KINDS) or len(_BY_TYPE) != len(KINDS):  # pragma: no cover - a registration bug
        raise AssertionError("two registered kinds share a game tag or a rules type")
    for _name, _rules in _k.presets.items():
        if _name in _PRESETS:  # pragma: no cover - a registration bug
            raise AssertionError(f"preset name {_name!r} registered twice")
        _PRESETS[_name] = (_k, _rules)

#: every preset name, kind by kind in registration order
VARIANTS: tuple[str, ...] = tuple(_PRESETS)


def presets() -> list[Any]:
    """Every preset rules record, in :data:`VARIANTS` order."""
    return [rules for _, rules in _PRESETS.values()]


def kind_named(game: str) -> GameKind:
    """The kind whose ``start.rules`` tag is ``game``; raises :class:`RulesError`."""
    kind = _BY_GAME.get(game)
    if kind is None:
        raise RulesError(f"unknown game {game!r}; the games are {', '.join(_BY_GAME)}")
    return kind


def kind_of(rules: Any) -> GameKind:
    """The kind of a rules record."""
    kind = _BY_TYPE.get(type(rules))
    if kind is None:
        raise RulesError(f"not a rules record of a registered game: {rules!r}")
    return kind


def _kind_of_params(spec: Mapping[str, Any]) -> GameKind:
    game = spec.get("game")
    if game is not None:
        return kind_named(game) if isinstance(game, str) else kind_named(repr(game))
    # without a game: a preset's name (or base) says which; an ask variant otherwise
    for key in ("name", "base"):
        value = spec.get(key)
        hit = _PRESETS.get(value) if isinstance(value, str) else None
        if hit is not None:
            return hit[0]
    return ASK


def get_variant(spec: str | Mapping[str, Any]) -> Any:
    """The rules record for a preset name or a parameter mapping (a config's
    variant table, or any kind's ``to_wire()`` form).

    A mapping's ``game`` names its kind (without one: the kind of the preset its
    ``name`` or ``base`` names, else an ask variant). Raises :class:`RulesError`
    with a clear message for unknown names (naming the closest preset, for a
    typo), unknown games and invalid parameters.
    """
    if isinstance(spec, str):
        hit = _PRESETS.get(spec)
        if hit is not None:
            return hit[1]
        close = difflib.get_close_matches(spec, VARIANTS, n=1, cutoff=0.6)
        raise RulesError(
            f"unknown variant {spec!r}; the presets are {', '.join(VARIANTS)} "
            "(or define a custom ask variant with its parameters)" + (f"; did you mean '{close[0]}'?" if close else "")
        )
    if not isinstance(spec, Mapping):
        raise RulesError(f"a variant must be a preset name or a table of parameters, not {type(spec).__name__}")
    return _kind_of_params(spec).from_params(spec)


def from_record(wire: Mapping[str, Any]) -> Any:
    """The rules exactly as a game log header records them (any kind's ``to_wire()``)."""
    game = wire.get("game", "ask")
    return kind_named(game if isinstance(game, str) else repr(game)).from_record(wire)


def rules_wire() -> Any:
    """The tagged union of every kind's ``start.rules`` Struct (strict decoding, the JSON Schema)."""
    return Union[tuple(k.wire for k in KINDS)]  # noqa: UP007  a union of a tuple built at run time


def style_of_wire(wire: Mapping[str, Any]) -> Style:
    """The style (``"ask"`` or ``"chickens"``) of a ``start.rules`` object."""
    game = wire.get("game")
    return kind_named(game).style if isinstance(game, str) else "ask"


def max_decisions_for(rules: Any, players: int) -> int:
    """The default cap on a hand's decisions for ``rules`` at ``players`` seats."""
    return kind_of(rules).max_decisions(rules, players)


def action_json(decide: str, action: Any) -> dict[str, Any]:
    """The log form of an action (protocol reply field names, no ``type``/``id``):
    an ``ask`` has ``target``, ``card`` or ``family`` and ``please``; a ``play`` or
    ``take`` its ``card``."""
    if decide == "ask":
        out: dict[str, Any] = {"target": action.target}
        if action.card is not None:
            out["card"] = action.card
        if action.family is not None:
            out["family"] = action.family
        out["please"] = bool(action.please)
        return out
    return {"card": action.card}
