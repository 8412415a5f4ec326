"""The shape every rules engine has (in the spirit of OpenSpiel's ``State``).

Rules engines are pure Python: no I/O, no trio, no processes, no files. The
runtime drives any engine through this interface only:

* :meth:`GameState.pending` - the seats whose decision is awaited now: one
  seat, or every seat at once for a simultaneous chickens ``play``; empty when
  the game is over.
* :meth:`GameState.decision` - the kind of the pending decision: ``"ask"``,
  ``"play"`` or ``"take"``.
* :meth:`GameState.legal_actions` / :meth:`GameState.random_action` - what a
  seat may do now; the random one is uniform over the legal ones.
* :meth:`GameState.apply` - apply one seat's action, return the public events
  it produced (possibly none, for a hidden simultaneous play), or raise
  :class:`IllegalAction` saying why in words a bot author understands.
* :meth:`GameState.view` - a seat's private view (what a ``turn`` carries).
* :meth:`GameState.scores` / :meth:`GameState.ranks` - the result, and
  :attr:`GameState.end_reason` - ``"complete"``, or ``"stalled"`` for an ask
  game ended by the stalemate rule (RULES.md rule 10).

Events are plain dicts whose keys are the protocol's event field names
(``{"kind": "ask", "seat": 0, ...}``). An event may carry information private
to one seat (a drawn card); :func:`event_for_seat` redacts it for the others.

Actions are duck-typed: an ask is any object with ``target``, ``card``,
``family`` and ``please`` attributes; a play or take is any object with a
``card`` attribute. The small dataclasses below serve tests, the fallback
player and the benchmark; the runtime passes decoded protocol messages, which
have the same attribute names, straight through.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .rng import Rng, derive

Event = dict[str, Any]


class RulesError(ValueError):
    """A rules record (variant definition) or a deal is invalid.

    The message says what is wrong and how to fix it, e.g.
    ``"custom variant 'tiny': 7 players need at least 7 cards, the deck has 6"``.
    """


class IllegalAction(Exception):
    """An action that the rules do not allow now.

    ``reason`` is a sentence a bot author understands, e.g.
    ``"you asked seat 2 for A3 but you hold A3 yourself"``.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Ask:
    target: int
    card: str | None = None
    family: str | None = None
    please: bool = False


@dataclass(frozen=True, slots=True)
class Play:
    card: str


@dataclass(frozen=True, slots=True)
class Take:
    card: str


class GameState(ABC):
    """One game in progress. Subclasses: ``AskGame``, ``ChickensGame``."""

    #: number of seats
    n: int
    #: the game's seed (the fallback player's generator derives from it)
    seed: int = 0
    #: the dealer's seat (the ``start`` message's ``dealer``; 0 for a game without one)
    dealer: int = 0
    #: an optional fast path: ``turn_fields(seat)``, the JSON fields of the seat's ``turn`` already
    #: encoded (byte-equal to encoding :meth:`view`); ``None`` for an engine without one
    turn_fields: Callable[[int], bytes] | None = None

    @property
    @abstractmethod
    def rules(self) -> Any:
        """The variant's rules record (has ``name`` and ``to_wire()``)."""

    @abstractmethod
    def initial_events(self) -> list[Event]:
        """Events produced before the first decision (the ``deal`` event, ...)."""

    @abstractmethod
    def pending(self) -> tuple[int, ...]:
        """Seats whose decision is awaited now; ``()`` once the game is over."""

    @abstractmethod
    def decision(self) -> str:
        """The kind of the pending decision: ``"ask"``, ``"play"`` or ``"take"``."""

    @property
    def terminal(self) -> bool:
        return not self.pending()

    def fallback_rng(self) -> Rng:
        """The fallback player's generator: ``Rng(derive(seed, "fallback"))``."""
        return Rng(derive(self.seed, "fallback"))

    @property
    def end_reason(self) -> str:
        """Why the game ended: ``"complete"`` (played to its end by the rules),
        or ``"stalled"`` (an ask game ended by the stalemate rule: scored as it
        stands). Meaningful once :attr:`terminal`; ``"complete"`` before."""
        return "complete"

    @abstractmethod
    def legal_actions(self, seat: int) -> list[Any]:
        """Every legal action of ``seat`` now (empty if it is not to decide)."""

    @abstractmethod
    def random_action(self, seat: int, rng: Rng) -> Any:
        """A uniformly random legal action of ``seat`` (the fallback player)."""

    @abstractmethod
    def apply(self, seat: int, action: Any) -> list[Event]:
        """Apply ``seat``'s action; return the events it produced.

        Raises :class:`IllegalAction` (and changes nothing) if the action is
        not legal now.
        """

    @abstractmethod
    def view(self, seat: int) -> dict[str, Any]:
        """``seat``'s private view: ``hand``, ``counts``, ``laid`` and, per game,
        ``centre``, ``options``, ``scores``... Never another seat's cards."""

    @abstractmethod
    def hand(self, seat: int) -> list[str]:
        """The cards ``seat`` holds now, in canonical deck order."""

    def dealt_hand(self, seat: int) -> list[str]:
        """The cards ``seat`` was dealt (the ``start`` message's ``hand``), in
        canonical deck order: its hand before any of :meth:`initial_events`
        (a game whose first events draw cards overrides this)."""
        return self.hand(seat)

    @abstractmethod
    def scores(self) -> list[int]:
        """Scores per seat (final once the game is over)."""

    def ranks(self) -> list[int]:
        """Competition ranks from :meth:`scores` (1-based, ties share a rank)."""
        return ranks_from_scores(self.scores())


def ranks_from_scores(scores: Sequence[float]) -> list[int]:
    """``[3, 2, 2, 1] -> [1, 2, 2, 4]``: higher is better, ties share a rank."""
    return [1 + sum(1 for other in scores if other > s) for s in scores]


def win_shares(scores: Sequence[float]) -> list[float]:
    """Each of the k seats with the best score gets 1/k of a win, others 0."""
    best = max(scores)
    k = sum(1 for s in scores if s == best)
    return [1.0 / k if s == best else 0.0 for s in scores]


def event_for_seat(event: Event, seat: int) -> Event:
    """The copy of ``event`` that ``seat`` may see.

    A ``draw`` event's ``card`` is private to the drawer; every other key of
    every event is public.
    """
    if event.get("kind") == "draw" and "card" in event and event.get("seat") != seat:
        return {k: v for k, v in event.items() if k != "card"}
    return event


@dataclass(frozen=True, slots=True)
class Deal:
    """An explicit deal: ``hands[seat]`` are the cards dealt to each seat,
    ``dealer`` the dealer's seat and ``stock`` the undealt cards, top first.

    Ask games only; chickens has no deal (every seat holds the same cards).
    """

    dealer: int
    hands: tuple[tuple[str, ...], ...]
    stock: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: Any) -> Deal:
        """Build from ``{"dealer": 0, "hands": [[...], ...], "stock": [...]}``.

        Raises :class:`RulesError` naming the bad field.
        """
        if not isinstance(data, dict):
            raise RulesError("a deal must be a JSON object with 'dealer', 'hands' and optional 'stock'")
        unknown = set(data) - {"dealer", "hands", "stock"}
        if unknown:
            raise RulesError(f"unknown key(s) in deal: {', '.join(sorted(unknown))}; expected dealer, hands, stock")
        dealer = data.get("dealer")
        if not isinstance(dealer, int) or isinstance(dealer, bool):
            raise RulesError("deal.dealer must be a seat number (an integer)")
        hands = data.get("hands")
        if not isinstance(hands, list) or not all(
            isinstance(h, list) and all(isinstance(c, str) for c in h) for h in hands
        ):
            raise RulesError('deal.hands must be a list of card-name lists, one per seat, e.g. [["A1","A2"],["A3"]]')
        stock = data.get("stock", [])
        if not isinstance(stock, list) or not all(isinstance(c, str) for c in stock):
            raise RulesError("deal.stock must be a list of card names, top card first")
        return cls(dealer=dealer, hands=tuple(tuple(h) for h in hands), stock=tuple(stock))

    def to_json(self) -> dict[str, Any]:
        return {"dealer": self.dealer, "hands": [list(h) for h in self.hands], "stock": list(self.stock)}

    def dealing_rule_problem(self) -> str | None:
        """Why these hand sizes cannot come from the dealing rule (RULES.md rule 1:
        one card at a time clockwise from the dealer's left, so hands differ by
        at most one card and the seats dealt last, the dealer among them, get
        the short hands), or ``None`` when they can. Pure; a deal that is
        invalid anyway (no hands, a dealer out of range) gives ``None``: the
        rules engine refuses it with its own message."""
        n = len(self.hands)
        if n == 0 or not isinstance(self.dealer, int) or not 0 <= self.dealer < n:
            return None
        sizes = [len(h) for h in self.hands]
        listed = ", ".join(f"seat {s}: {k}" for s, k in enumerate(sizes))
        lo, hi = min(sizes), max(sizes)
        if hi - lo > 1:
            return (
                f"the hands differ by more than one card ({listed}); dealing one card at a time gives "
                "hands that differ by at most one"
            )
        order = [(self.dealer + 1 + k) % n for k in range(n)]  # the dealer is dealt last
        if sizes[self.dealer] == hi and lo < hi:
            short = [s for s in range(n) if sizes[s] == lo]
            return (
                f"the dealer (seat {self.dealer}) holds a long hand of {hi} cards while seat"
                f"{'s' if len(short) > 1 else ''} {', '.join(map(str, short))} hold{'' if len(short) > 1 else 's'} "
                f"{lo}; dealing starts left of the dealer, so the dealer, dealt last, gets a short hand"
            )
        for a, b in zip(order, order[1:], strict=False):
            if sizes[a] < sizes[b]:
                return (
                    f"seat {b} holds {sizes[b]} cards but seat {a}, dealt before it (clockwise from the "
                    f"dealer's left), holds only {sizes[a]}; the short hands go to the seats dealt last"
                )
        return None
