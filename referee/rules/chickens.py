"""Chickens ("Nobody but Us Chickens" on ordinary cards): rules part B.

Pure Python: no I/O, no trio, no randomness of its own (every seat holds the
same cards, so there is nothing to deal; ``seed`` only seeds the fallback
player, ``Rng(derive(seed, "fallback"))``, exactly as in the ask games).

The game in one paragraph (docs/RULES.md tells it in full): 3-6 seats, as many
rounds as seats, 8 turns per round. Every round each seat holds ``robber``,
``pickpocket``, ``police`` and the nobles ``jack-black`` (-1), ``jack-red``
(+1), ``queen`` (+2), ``king`` (+2), ``ace`` (+4). In a turn all seats play
one card at the same time, hidden; the reveal puts the played nobles in the
centre, then the takers (police, or robbers and pickpockets) take nobles one
at a time, each take being a decision of the taking seat.

How the engine drives this through :class:`~referee.rules.base.GameState`:

* ``decision() == "play"``: ``pending()`` is every seat that has not yet
  submitted its card this turn. ``apply`` stores the hidden card and returns
  ``[]`` until the last seat's card arrives; that call returns the ``reveal``
  event and everything that follows automatically (the end of the turn, the
  next ``round`` event).
* ``decision() == "take"``: ``pending() == (taker,)``; ``apply`` returns the
  ``take`` event and whatever follows automatically.

Errors: an action that is not legal raises
:class:`~referee.rules.base.IllegalAction` with a reason a bot author
understands, and the state is left exactly as it was. A bad rules record or a
bad table size raises :class:`~referee.rules.base.RulesError`. Nothing here
blocks or awaits, so cancellation never interrupts a half-applied action.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .base import Deal, Event, GameState, IllegalAction, Play, RulesError, Take
from .rng import Rng, derive

#: the eight cards of a chickens hand, in canonical order
CARDS: tuple[str, ...] = ("robber", "pickpocket", "police", "jack-black", "jack-red", "queen", "king", "ace")
#: value of each card (only nobles score)
CARD_VALUES: dict[str, int] = {
    "robber": 0,
    "pickpocket": 0,
    "police": 0,
    "jack-black": -1,
    "jack-red": 1,
    "queen": 2,
    "king": 2,
    "ace": 4,
}
#: the nobles, in canonical order
NOBLES: tuple[str, ...] = ("jack-black", "jack-red", "queen", "king", "ace")

_ROBBER, _PICKPOCKET, _POLICE = 0, 1, 2
_FIRST_NOBLE = 3
_INDEX: dict[str, int] = {c: i for i, c in enumerate(CARDS)}
_VALUES: tuple[int, ...] = tuple(CARD_VALUES[c] for c in CARDS)
_FULL_HAND = (1 << len(CARDS)) - 1
_TURNS_PER_ROUND = len(CARDS)
_WIRE_KEYS = ("game", "name", "rounds", "cards", "nobles", "players")


@dataclass(frozen=True, slots=True)
class ChickensRules:
    """The chickens rules record. There is one chickens variant; its wire form
    (:meth:`to_wire`) carries the card values so a bot can read them."""

    name: str = "chickens"
    kind: str = "chickens"
    min_players: int = 3
    max_players: int = 6

    def to_wire(self, players: int | None = None) -> dict[str, Any]:
        """The protocol's ``start.rules`` for a table of ``players`` (``rounds`` is
        then that number); without ``players``, the variant's rules record
        (``rounds`` null: one round per player), as in the game log header."""
        return {
            "game": "chickens",
            "name": self.name,
            "rounds": players,
            "cards": dict(CARD_VALUES),
            "nobles": list(NOBLES),
            "players": [self.min_players, self.max_players],
        }

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> ChickensRules:
        """Build from ``{"game": "chickens"}`` or the full wire form.

        Chickens has no custom parameters: ``name`` may be any non-empty label
        (a league may call its chickens variant "chickens-6p"); every other key
        given must have the value of the wire form. Raises :class:`RulesError`
        naming the bad key.
        """
        if not isinstance(params, Mapping):
            raise RulesError('chickens rules must be a table such as {"game": "chickens"}')
        unknown = sorted(set(params) - set(_WIRE_KEYS))
        if unknown:
            raise RulesError(
                f"unknown chickens parameter(s): {', '.join(unknown)}; chickens has no custom "
                f"parameters (allowed keys, all with their fixed values: {', '.join(_WIRE_KEYS)})"
            )
        name = params.get("name", "chickens")
        if not isinstance(name, str) or not name.strip():
            raise RulesError(f"chickens name must be a non-empty string, not {name!r}")
        if "game" in params and params["game"] != "chickens":
            raise RulesError(f'game must be "chickens" for chickens rules, not {params["game"]!r}')
        want = cls(name=name).to_wire()
        for key in _WIRE_KEYS:
            if key not in params or key in ("name", "game"):
                continue
            got = params[key]
            if key == "players" and isinstance(got, (list, tuple)):
                got = list(got)
            if key == "nobles" and isinstance(got, tuple):
                got = list(got)
            if key == "rounds" and got is not None:
                raise RulesError(
                    f"chickens rounds must be null (one round per player), not {got!r}: "
                    "chickens always plays as many rounds as there are players"
                )
            if key == "cards" and got != want["cards"]:
                raise RulesError(
                    "chickens cards must be exactly robber 0, pickpocket 0, police 0, "
                    f"jack-black -1, jack-red 1, queen 2, king 2, ace 4; got {got!r}"
                )
            if not _same(got, want[key]):
                raise RulesError(f"chickens {key} must be {want[key]!r}, not {got!r}")
        return cls(name=name)

    def new_game(self, players: int, *, seed: int | None = None, deal: Deal | None = None) -> ChickensGame:
        """A fresh game for ``players`` seats.

        Raises :class:`RulesError` for a table size outside 3-6 or when a deal
        is given (chickens has no deal). ``seed`` only seeds the fallback
        player (:meth:`ChickensGame.fallback_rng`); the game itself has no
        randomness. ``None`` picks a fresh random seed (kept in ``game.seed``).
        """
        if isinstance(players, bool) or not isinstance(players, int):
            raise RulesError(f"the number of players must be an integer, not {players!r}")
        if not self.min_players <= players <= self.max_players:
            raise RulesError(f"chickens is played by {self.min_players} to {self.max_players} players, not {players}")
        if deal is not None:
            raise RulesError("chickens has no deal: every seat holds the same 8 cards each round; remove the deal")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise RulesError(f"a seed must be a whole number, not {seed!r}")
        return ChickensGame(self, players, seed=seed)


def _same(a: Any, b: Any) -> bool:
    """Equality that does not treat ``True`` as ``1`` (so ``players: [true, 6]`` is rejected)."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


class ChickensGame(GameState):
    """One chickens game. See the module docstring for the decision flow.

    Public attributes (read-only for callers): ``n``, ``seed`` (seeds the
    fallback player only), ``round`` (1-based),
    ``turn`` (1-8 within the round), ``leader``, ``commissioner``, ``dealer``
    (always 0, the round-1 leader; the protocol's ``start.dealer``).
    """

    def __init__(self, rules: ChickensRules, players: int, *, seed: int | None = None) -> None:
        self._rules = rules
        self.n = players
        self.seed = secrets.randbits(63) if seed is None else seed
        self.dealer = 0
        self.rounds = players
        self.round = 1
        self.turn = 1
        self.leader = 0
        self.commissioner = (0 - 1) % players
        # hands as bit masks over CARDS; a hidden play stays in the hand until the reveal
        self._hands: list[int] = [_FULL_HAND] * players
        self._plays: list[int] = [-1] * players  # hidden card index per seat this turn, -1 = not yet
        self._waiting = players  # seats that still have to play this turn
        self._centre: list[int] = [0] * len(CARDS)  # count per card index (nobles only)
        self._centre_size = 0
        self._taken: list[list[int]] = [[] for _ in range(players)]  # nobles taken this round
        self._totals: list[int] = [0] * players  # finished rounds
        self._round_pts: list[int] = [0] * players  # this round's takes so far
        # take phase: a finite queue of seats, then a cycle repeated while the centre is non-empty
        self._taker = -1
        self._queue: list[int] = []
        self._qpos = 0
        self._cycle: list[int] = []
        self._cpos = 0
        self._over = False

    # ------------------------------------------------------------------ interface

    @property
    def rules(self) -> ChickensRules:
        return self._rules

    def fallback_rng(self) -> Rng:
        """The fallback player's generator: ``Rng(derive(seed, "fallback"))``."""
        return Rng(derive(self.seed, "fallback"))

    def initial_events(self) -> list[Event]:
        """The ``round`` event of round 1 (leader 0, commissioner n-1, scores 0)."""
        n = self.n
        return [{"kind": "round", "round": 1, "leader": 0, "commissioner": n - 1, "scores": [0] * n}]

    def pending(self) -> tuple[int, ...]:
        """Play: every seat that has not submitted its card this turn. Take: the
        taker alone. ``()`` once the game is over."""
        if self._over:
            return ()
        if self._taker >= 0:
            return (self._taker,)
        plays = self._plays
        return tuple(s for s in range(self.n) if plays[s] < 0)

    def decision(self) -> str:
        """``"play"`` or ``"take"``; ``""`` once the game is over."""
        if self._over:
            return ""
        return "take" if self._taker >= 0 else "play"

    def legal_actions(self, seat: int) -> list[Any]:
        """Plays of every card in hand, or takes of every distinct noble in the
        centre (canonical order); ``[]`` if ``seat`` is not to decide now."""
        table = _TAKES if self._taker >= 0 else _PLAYS
        return [table[c] for c in self._options(seat)]

    def random_action(self, seat: int, rng: Rng) -> Any:
        """A uniformly random legal action (one ``rng.below`` draw over
        :meth:`legal_actions`). Raises :class:`IllegalAction` if ``seat`` has
        nothing to decide now."""
        options = self._options(seat)
        if not options:
            raise IllegalAction(self._not_yours(seat))
        card = options[rng.below(len(options))]
        return _TAKES[card] if self._taker >= 0 else _PLAYS[card]

    def apply(self, seat: int, action: Any) -> list[Event]:
        """Apply a play or a take of ``seat``; return the events it produced.

        A hidden play that is not the last of the turn returns ``[]``. Raises
        :class:`IllegalAction` (changing nothing) when the action is not legal.
        """
        if self._over:
            raise IllegalAction("the game is over; no more plays or takes")
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.n:
            raise IllegalAction(f"there is no seat {seat!r}; seats are 0 to {self.n - 1}")
        card = getattr(action, "card", None)
        if not isinstance(card, str):
            word = "take" if self._taker >= 0 else "play"
            raise IllegalAction(f'a {word} needs a card name, e.g. {{"card": "ace"}}; got {card!r}')
        idx = _INDEX.get(card)
        if self._taker >= 0:
            return self._apply_take(seat, card, idx)
        return self._apply_play(seat, card, idx)

    def view(self, seat: int) -> dict[str, Any]:
        """``seat``'s view: ``hand``, ``counts``, ``laid`` (nobles each seat took
        this round, in the order taken), ``centre``, ``options``, ``scores``,
        ``round``. Hidden plays of other seats are never shown; a seat's own
        hidden play stays in its hand until the reveal."""
        hands = self._hands
        return {
            "hand": _names(hands[seat]),
            "counts": [_popcount(h) for h in hands],
            "laid": [[CARDS[i] for i in t] for t in self._taken],
            "centre": self._centre_list(),
            "options": self._options(seat),
            "scores": self.scores(),
            "round": self.round,
        }

    def hand(self, seat: int) -> list[str]:
        """Cards ``seat`` holds this round (a hidden play counts until the reveal)."""
        return _names(self._hands[seat])

    def scores(self) -> list[int]:
        """Totals of finished rounds plus this round's takes so far."""
        return [t + r for t, r in zip(self._totals, self._round_pts, strict=True)]

    def centre(self) -> list[str]:
        """The nobles in the centre, canonical order with repeats."""
        return self._centre_list()

    # ------------------------------------------------------------------ internals

    def _options(self, seat: int) -> list[str]:
        if self._over or not 0 <= seat < self.n:
            return []
        if self._taker >= 0:
            if seat != self._taker:
                return []
            centre = self._centre
            return [CARDS[i] for i in range(_FIRST_NOBLE, len(CARDS)) if centre[i]]
        if self._plays[seat] >= 0:
            return []
        return _names(self._hands[seat])

    def _not_yours(self, seat: int) -> str:
        if self._over:
            return "the game is over; no more plays or takes"
        if self._taker >= 0:
            return f"it is not your decision: seat {self._taker} is taking"
        return "you already played this turn; wait for the reveal"

    def _apply_play(self, seat: int, card: str, idx: int | None) -> list[Event]:
        if self._plays[seat] >= 0:
            raise IllegalAction("you already played this turn; wait for the reveal")
        if idx is None:
            raise IllegalAction(f"{card!r} is not a chickens card; the cards are {', '.join(CARDS)}")
        if not self._hands[seat] >> idx & 1:
            raise IllegalAction(
                f"you already played {card} this round; your hand is {', '.join(_names(self._hands[seat]))}"
            )
        self._plays[seat] = idx
        self._waiting -= 1
        if self._waiting:
            return []
        return self._reveal()

    def _apply_take(self, seat: int, card: str, idx: int | None) -> list[Event]:
        if seat != self._taker:
            raise IllegalAction(f"it is not your decision: seat {self._taker} is taking")
        if idx is None or idx < _FIRST_NOBLE:
            what = f"{card!r} is not a chickens card" if idx is None else f"{card} is not a noble"
            raise IllegalAction(f"{what}; take one of the nobles in the centre: {', '.join(self._options(seat))}")
        if not self._centre[idx]:
            raise IllegalAction(f"{card} is not in the centre; take one of: {', '.join(self._options(seat))}")
        self._centre[idx] -= 1
        self._centre_size -= 1
        self._taken[seat].append(idx)
        self._round_pts[seat] += _VALUES[idx]
        events: list[Event] = [{"kind": "take", "seat": seat, "card": card, "centre": self._centre_list()}]
        self._next_taker(events)
        return events

    def _reveal(self) -> list[Event]:
        n = self.n
        plays = self._plays
        centre = self._centre
        hands = self._hands
        for s in range(n):
            i = plays[s]
            hands[s] &= ~(1 << i)
            if i >= _FIRST_NOBLE:
                centre[i] += 1
                self._centre_size += 1
        events: list[Event] = [{"kind": "reveal", "plays": [CARDS[i] for i in plays], "centre": self._centre_list()}]
        police = [s for s in _clockwise(self.commissioner, n) if plays[s] == _POLICE]
        robbers = [s for s in _clockwise(self.leader, n) if plays[s] == _ROBBER]
        pickpockets = [s for s in _clockwise(self.leader, n) if plays[s] == _PICKPOCKET]
        if police:
            if robbers or pickpockets:
                self._queue, self._cycle = [], police  # police take everything, round and round
            else:
                self._queue, self._cycle = [], []  # police alone: nothing is taken
        elif robbers:
            self._queue, self._cycle = robbers + pickpockets, robbers
        else:
            self._queue, self._cycle = pickpockets, []  # pickpockets alone: one each
        self._qpos = 0
        self._cpos = 0
        self._next_taker(events)
        return events

    def _next_taker(self, events: list[Event]) -> None:
        """Set the next taker, or end the turn (appending what follows)."""
        if self._centre_size:
            if self._qpos < len(self._queue):
                self._taker = self._queue[self._qpos]
                self._qpos += 1
                return
            if self._cycle:
                self._taker = self._cycle[self._cpos % len(self._cycle)]
                self._cpos += 1
                return
        self._taker = -1
        self._end_turn(events)

    def _end_turn(self, events: list[Event]) -> None:
        n = self.n
        self._plays = [-1] * n
        self._waiting = n
        if self.turn < _TURNS_PER_ROUND:
            self.turn += 1
            return
        # end of the round: leftover nobles are discarded, takes are banked
        self._centre = [0] * len(CARDS)
        self._centre_size = 0
        self._totals = self.scores()
        self._round_pts = [0] * n
        self._taken = [[] for _ in range(n)]
        if self.round >= self.rounds:
            self._over = True
            self._waiting = 0
            return
        self.round += 1
        self.turn = 1
        self.leader = (self.leader + 1) % n
        self.commissioner = (self.commissioner + 1) % n
        self._hands = [_FULL_HAND] * n
        events.append(self._round_event())

    def _round_event(self) -> Event:
        return {
            "kind": "round",
            "round": self.round,
            "leader": self.leader,
            "commissioner": self.commissioner,
            "scores": self.scores(),
        }

    def _centre_list(self) -> list[str]:
        out: list[str] = []
        centre = self._centre
        for i in range(_FIRST_NOBLE, len(CARDS)):
            k = centre[i]
            if k:
                out.extend([CARDS[i]] * k)
        return out


def _clockwise(start: int, n: int) -> list[int]:
    return [(start + k) % n for k in range(n)]


#: card names per hand bit mask, and their counts (all 256 masks, built once)
_MASK_NAMES: tuple[tuple[str, ...], ...] = tuple(
    tuple(CARDS[i] for i in range(len(CARDS)) if mask >> i & 1) for mask in range(1 << len(CARDS))
)
_MASK_COUNT: tuple[int, ...] = tuple(len(names) for names in _MASK_NAMES)
_PLAYS: dict[str, Play] = {c: Play(c) for c in CARDS}
_TAKES: dict[str, Take] = {c: Take(c) for c in NOBLES}


def _names(mask: int) -> list[str]:
    return list(_MASK_NAMES[mask])


def _popcount(mask: int) -> int:
    return _MASK_COUNT[mask]
