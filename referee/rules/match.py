"""Matches of several hands: ``single``, ``fixed`` (N hands, totals add) and
``race`` (hands until a seat reaches a target total).

Pure bookkeeping: no I/O, no trio. The runtime drives a :class:`Match` like
this::

    match = Match(rules, players, fmt, seed)
    while (hand := match.next_hand()) is not None:
        game = match.new_game(hand)         # hand.seats[i] plays the hand's seat i
        ... play game ...
        match.record(game.scores())          # per hand seat
    match.scores(), match.ranks(), match.win_shares()

Rules of the bookkeeping (``docs/RULES.md``):

* Hand ``h`` (0-based) uses seed ``derive(seed, f"hand:{h}")``, except a
  ``single`` match, whose one hand is exactly the plain game of ``seed`` (same
  seed, same dealer).
* The first hand's dealer is ``dealer`` if given, else ``Rng(seed).below(players)``
  (the dealer a plain game of ``seed`` would have). The deal passes one seat
  clockwise each hand: hand ``h``'s dealer is match seat ``(first + h) % players``;
  in a tie-break hand where that seat does not play, the next playing seat
  clockwise from it deals.
* ``fixed``: ``hands`` hands; totals add.
* ``race``: hands until some seat's total reaches ``target``.
* Ties (both kinds, seed 002: "I pareggi vengono risolti con una mano
  aggiuntiva giocata solo dai giocatori a pari merito"): when the match would
  end (``fixed``: after its ``hands`` hands; ``race``: in the hand in which
  a seat reaches the target) and several seats share the best total, only
  those seats play further tie-break hands (a smaller table, seats
  renumbered in clockwise order, even below the variant's minimum size),
  one at a time, until one of them leads; a seat that falls behind in a
  tie-break hand drops out of the next. The cap: after ``max_hands`` hands
  in all (tie-break hands included; a ``fixed`` match always plays its
  ``hands``, so its cap is ``max(max_hands, hands)``) the match stops and
  the seats with the best total share the win.

Errors: invalid formats and misuse (recording without a pending hand, a score
list of the wrong length) raise :class:`RulesError` with a clear message and
change nothing. Nothing here awaits, so cancellation can only happen between
calls; a hand that was handed out but never recorded is simply handed out
again by the next :meth:`Match.next_hand`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from .base import GameState, RulesError, ranks_from_scores, win_shares
from .registry import kind_of
from .rng import Rng, derive

__all__ = ["HandSpec", "Match", "MatchFormat"]

_KINDS = ("single", "fixed", "race")


class MatchFormat(msgspec.Struct, frozen=True):
    """How many hands a match has: ``kind`` ``"single"``, ``"fixed"`` (``hands``)
    or ``"race"`` (``target``); ``max_hands`` caps the hands in all, tie-break
    hands included (see :attr:`cap`). The one definition of the shape: the
    log header's ``match`` is its :meth:`to_json`.

    Raises :class:`RulesError` for an unknown kind or out-of-range numbers
    (built directly, a Struct checks no types: ``__post_init__`` does).
    """

    kind: Literal["single", "fixed", "race"] = "single"
    hands: int = 1
    target: int = 0
    max_hands: int = 50

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise RulesError(f"unknown match kind {self.kind!r}; use single, fixed or race")
        for key in ("hands", "target", "max_hands"):
            v = getattr(self, key)
            if not isinstance(v, int) or isinstance(v, bool):
                raise RulesError(f"match {key} must be a whole number, not {v!r}")
        if self.kind == "single" and self.hands != 1:
            raise RulesError('a single match has exactly 1 hand; use kind = "fixed" for several')
        if self.kind == "fixed" and self.hands < 1:
            raise RulesError(f"a fixed match needs at least 1 hand, not {self.hands}")
        if self.kind == "race" and self.target < 1:
            raise RulesError(f"a race match needs a target total of at least 1, not {self.target}")
        if self.max_hands < 1:
            raise RulesError(f"max_hands must be at least 1, not {self.max_hands}")

    @classmethod
    def from_params(cls, params: str | Mapping[str, Any] | None) -> MatchFormat:
        """From ``"single"``/``None`` or a mapping such as ``{"kind": "race", "target": 10}``."""
        if params is None or params == "single":
            return cls()
        if isinstance(params, str):
            raise RulesError(f'unknown match format {params!r}; use "single" or a table with kind, hands, target')
        unknown = set(params) - {"kind", "hands", "target", "max_hands"}
        if unknown:
            raise RulesError(
                f"unknown match key(s) {', '.join(sorted(unknown))}; allowed: kind, hands, target, max_hands"
            )
        return cls(**{k: v for k, v in params.items() if v is not None})

    @property
    def cap(self) -> int:
        """The most hands the match can last, tie-break hands included:
        ``max_hands``, but never fewer than a fixed match's ``hands``."""
        return max(self.max_hands, self.hands) if self.kind == "fixed" else self.max_hands

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


SINGLE = MatchFormat()


@dataclass(frozen=True)
class HandSpec:
    """One hand to play: ``index`` (0-based), ``seats`` (the match seats that
    play, clockwise; the hand's seat ``i`` is match seat ``seats[i]``),
    ``dealer`` (in the hand's seat numbering), ``seed``, and ``tiebreak``."""

    index: int
    seats: tuple[int, ...]
    dealer: int
    seed: int
    tiebreak: bool = False


class Match:
    """The state of one match. See the module docstring for the rules.

    Raises :class:`RulesError` for a table size the variant does not allow,
    a dealer that is not a seat, or a several-hand format for chickens (a
    chickens game already plays one round per player).
    """

    def __init__(
        self,
        rules: Any,
        players: int,
        fmt: MatchFormat | None = None,
        seed: int = 0,
        dealer: int | None = None,
    ) -> None:
        fmt = SINGLE if fmt is None else fmt
        if (
            not isinstance(players, int)
            or isinstance(players, bool)
            or not (rules.min_players <= players <= rules.max_players)
        ):
            raise RulesError(f"{rules.name} is for {rules.min_players}-{rules.max_players} players, not {players!r}")
        if fmt.kind != "single" and not kind_of(rules).matches:
            raise RulesError(
                f"{fmt.kind} matches are for the ask variants; {rules.name} plays single games "
                "(a chickens game already has one round per player)"
                if rules.kind == "chickens"
                else f"{fmt.kind} matches are for the ask variants; {rules.name} plays single games"
            )
        if dealer is not None and (not isinstance(dealer, int) or not 0 <= dealer < players):
            raise RulesError(f"match dealer {dealer!r} is not a seat of this {players}-seat table")
        self.rules = rules
        self.players = players
        self.fmt = fmt
        self.seed = seed
        self.first_dealer = Rng(seed).below(players) if dealer is None else dealer
        self.totals: list[int] = [0] * players
        self.hands_played = 0
        self.finished = False
        self._seats: tuple[int, ...] = tuple(range(players))  # who plays the next hand
        self._tiebreak = False
        self._pending: HandSpec | None = None

    def next_hand(self) -> HandSpec | None:
        """The next hand to play, or ``None`` when the match is over.

        Calling it again before :meth:`record` returns the same hand.
        """
        if self.finished:
            return None
        if self._pending is not None:
            return self._pending
        h = self.hands_played
        seats = self._seats
        match_dealer = (self.first_dealer + h) % self.players
        while match_dealer not in seats:
            match_dealer = (match_dealer + 1) % self.players
        seed = self.seed if self.fmt.kind == "single" else derive(self.seed, f"hand:{h}")
        self._pending = HandSpec(h, seats, seats.index(match_dealer), seed, self._tiebreak)
        return self._pending

    def new_game(self, hand: HandSpec) -> GameState:
        """A fresh game for ``hand`` (its seed, its dealer, its table size)."""
        game: GameState
        if not kind_of(self.rules).matches:  # single games only: hand 0, dealt from the seed
            game = self.rules.new_game(len(hand.seats), seed=hand.seed)
        else:
            game = self.rules.new_game(len(hand.seats), seed=hand.seed, dealer=hand.dealer, tiebreak=hand.tiebreak)
        return game

    def record(self, hand_scores: Sequence[int]) -> None:
        """Record the pending hand's scores (one per hand seat) and decide what
        comes next. Raises :class:`RulesError` without a pending hand or for a
        score list of the wrong length."""
        hand = self._pending
        if hand is None:
            raise RulesError("no hand is pending: call next_hand() before record()")
        if len(hand_scores) != len(hand.seats):
            raise RulesError(f"hand {hand.index} has {len(hand.seats)} seats but {len(hand_scores)} scores were given")
        for i, s in enumerate(hand.seats):
            self.totals[s] += hand_scores[i]
        self._pending = None
        self.hands_played += 1
        fmt = self.fmt
        if fmt.kind == "single":
            self.finished = True
            return
        playing = hand.seats
        best = max(self.totals[s] for s in playing)
        # would the match end now? (a tie-break hand is only played once it would)
        due = hand.tiebreak or (self.hands_played >= fmt.hands if fmt.kind == "fixed" else best >= fmt.target)
        if due:
            leaders = tuple(s for s in playing if self.totals[s] == best)
            if len(leaders) == 1:
                self.finished = True
            else:  # only the tied seats play on
                self._seats = leaders
                self._tiebreak = True
        if self.hands_played >= fmt.cap:
            self.finished = True

    def scores(self) -> list[int]:
        """Totals per match seat."""
        return list(self.totals)

    def ranks(self) -> list[int]:
        """Competition ranks of the totals (1-based, ties share)."""
        return ranks_from_scores(self.totals)

    def win_shares(self) -> list[float]:
        """1/k of a win to each of the k seats with the best total."""
        return win_shares(self.totals)
