"""What a game kind registers (see :mod:`referee.rules.registry`).

A :class:`GameKind` is everything the rest of the referee needs to know about a
kind of game beyond the :class:`~referee.rules.base.GameState` interface: its
rules record type, its ``start.rules`` shape (a msgspec Struct, tagged by
``game``), its presets, how a config's parameters and a log header's record
become a rules record, which protocol messages it speaks (``style``), the
viewer's public snapshot of a game, its decision cap, whether it plays
multi-hand matches, and the table sizes check-bot plays. A rules module
defines one and :mod:`referee.rules.registry` lists it (one line).

This module imports no engine, so every engine may import it. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from .base import GameState

__all__ = ["GameKind", "RulesRecord", "Style", "deck_decisions", "default_check_sizes"]

#: which protocol messages a game speaks: ``"ask"`` (``ask`` decisions; ``deal``, ``ask``, ``laid``
#: and ``draw`` events; a turn with ``options`` and ``targets``) or ``"chickens"`` (``play`` and
#: ``take`` decisions; ``reveal``, ``take`` and ``round`` events). The SDK and the viewer follow it.
Style = Literal["ask", "chickens"]

#: ``FaultPolicy.max_decisions`` by default (``referee.core.spec`` re-exports it): a hand still
#: running after this many decisions is aborted. The longest preset hand in 300 seeds per variant
#: and table size took 1,164 decisions (random players, happy-families-jaques at 6 seats; the
#: tracker's longest took 171, chickens at most 228); at 0.3-0.6 ms a decision an aborted hand costs
#: 1.5-3 s (docs/PERFORMANCE.md, "Hand lengths")
MAX_DECISIONS = 5000
#: :func:`deck_decisions`: decisions allowed per card of the deck and per seat (random players
#: took at most 7.7 in the custom decks measured, 4.4 in the presets)
DECISIONS_PER_CARD_AND_SEAT = 10


class RulesRecord(Protocol):
    """What every rules record has (ARCHITECTURE.md section 1): any registered kind's."""

    @property
    def name(self) -> str: ...
    @property
    def min_players(self) -> int: ...
    @property
    def max_players(self) -> int: ...
    @property
    def kind(self) -> str: ...
    def to_wire(self, players: int | None = None) -> dict[str, Any]: ...
    def new_game(self, players: int, *, seed: int | None = None, deal: Any = None) -> GameState: ...


def deck_decisions(deck_size: int, players: int) -> int:
    """The usual decision cap: ``MAX_DECISIONS``, or 10 per card and seat if that is more."""
    return max(MAX_DECISIONS, DECISIONS_PER_CARD_AND_SEAT * deck_size * players)


def default_check_sizes(min_players: int, max_players: int, cap: int | None = None) -> list[int]:
    """The table sizes check-bot plays a variant at: its smallest, 4 and its largest (at most
    ``cap``: check-bot's instant bots fill the other seats, one process each)."""
    lo, hi = min_players, max_players
    top = hi if cap is None else max(lo, min(hi, cap))
    return sorted({lo, max(lo, min(hi, 4)), top})


@dataclass(frozen=True, eq=False)
class GameKind:
    """One kind of game, as registered in :data:`referee.rules.registry.KINDS`.

    * ``game`` - the tag of its ``start.rules`` (``rules.to_wire()["game"]``), unique.
    * ``style`` - the protocol messages it speaks (:data:`Style`).
    * ``rules_type`` - its rules record class (``kind`` property == ``game``).
    * ``wire`` - the msgspec Struct of its ``start.rules`` (tag ``game``, unknown fields
      forbidden); the JSON Schema and a strict test decode every preset's ``to_wire()`` with it.
    * ``presets`` - its named variants (names are unique across kinds).
    * ``from_params(mapping)`` - a rules record from a config's parameters (also from its own
      ``to_wire()`` form); raises ``RulesError`` with a clear text.
    * ``from_record(mapping)`` - the rules exactly as a game log header records them (replay).
    * ``snapshot(state, pending)`` - the public state of a game for the viewer: per-seat lists
      (``per_seat`` keys, indexed by hand seat), seat numbers (``seat_refs`` keys) and anything
      else public (the stock's size, the centre); ``pending`` the hand seats awaited now.
    * ``max_decisions(rules, players)`` - the default cap on a hand's decisions.
    * ``decisions`` - the ``decide`` values its turns use.
    * ``matches`` - whether it plays ``fixed``/``race`` matches (else single games only).
    * ``deals`` - whether it takes an explicit deal (``--deal``, a deal file).
    * ``deck(rules)`` - every card in canonical order (the viewer sorts hands by it).
    * ``family_of(rules, card)`` - the family (rank) of a card, for an ask-style game.
    * ``family_points(rules)`` - what one laid family scores, for an ask-style game.
    * ``check_sizes(rules)`` - the table sizes check-bot plays it at.
    * ``bench`` - whether ``referee bench engine`` measures its presets by default.
    """

    game: str
    style: Style
    rules_type: type
    wire: type
    presets: Mapping[str, Any]
    from_params: Callable[[Mapping[str, Any]], Any]
    from_record: Callable[[Mapping[str, Any]], Any]
    snapshot: Callable[[Any, Sequence[int]], dict[str, Any]]
    max_decisions: Callable[[Any, int], int]
    decisions: tuple[str, ...]
    per_seat: tuple[str, ...] = ()
    seat_refs: tuple[str, ...] = ()
    matches: bool = False
    deals: bool = False
    deck: Callable[[Any], Sequence[str]] = field(default=lambda rules: tuple(rules.deck))
    family_of: Callable[[Any, str], str] | None = None
    family_points: Callable[[Any], int] = field(default=lambda rules: 1)
    check_sizes: Callable[[Any], list[int]] = field(
        default=lambda rules: default_check_sizes(rules.min_players, rules.max_players)
    )
    bench: bool = True
