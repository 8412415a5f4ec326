"""Go Fish with the rules of OpenSpiel's ``go_fish`` (one rules module, registered in one line).

The rules (OpenSpiel ``open_spiel/games/go_fish/go_fish.cc``, the referee's names in brackets):

* A deck of ``ranks`` x ``suits`` cards [``families`` x ``members``; the preset: 13 ranks
  ``2``..``A`` x suits ``S H D C``, cards ``2S``..``AC``], 2-10 players. Each seat is dealt
  ``initial_cards`` (OpenSpiel's -1 [``null``]: 7 at two seats, 5 otherwise) and the rest is the
  stock [OpenSpiel's pool].
* The deal: the deck is shuffled with the seeded generator (``dealer = rng.below(n)`` first, then
  the canonical deck is shuffled with ``rng.shuffle``, exactly as in the ask games); starting left
  of the dealer, each seat in turn takes cards from the top until it holds ``initial_cards``
  [OpenSpiel deals to player 0 first, then 1, ...: the seat left of the dealer is its player 0].
  A book (every suit of a rank) completed during the deal is laid at once, so that seat is dealt
  on until it holds ``initial_cards`` again (except the last seat once its hand is full: its
  book's cards are not replaced). What is left is the stock, its top dealt next.
* The seat left of the dealer asks first. On its turn a seat asks another seat that holds cards
  for a rank [a family] of which it holds at least one card.
* Hit: the target hands over all its cards of that rank; the asker asks again.
* Miss: "go fish": the asker draws the top stock card; if it is of the rank asked for, the asker
  asks again, else the turn passes to the next seat clockwise. With an empty stock the turn passes
  at once.
* A book is laid at once when completed (by a hit, a draw or the deal) and scores 1.
* A seat whose turn comes with no cards draws one card if the stock has any
  (``ask_after_empty_draw``, default true: then it asks; false: the turn passes on), else the turn
  passes to the next seat that holds cards. A seat that holds cards when nobody else does passes
  the turn to the next seat, which draws.
* The game ends when every card is in a book (or, with ``end_on_first_out``, as soon as a seat has
  no cards after laying a book). ``most_books_wins`` (default true): score = books, the most books
  win (equal best share the win); false (only with ``end_on_first_out``): the seat that went out
  scores 1, the others 0.
* Where OpenSpiel's game gets stuck, the referee goes on: OpenSpiel applies the empty-hand rules
  after every move but not after its deal, so when the deal leaves the first seat's hand empty
  or leaves cards in its hand only (possible only with a deck so small that a whole hand can be
  books) its first player has no legal action. The referee applies the same rules there too.
* One addition the referee needs and OpenSpiel does not have: the stalemate rule of the ask games
  (RULES.md rule 10): after ``stall`` asks in a row that move no card (a miss with an empty stock)
  the hand ends at once, scored as it stands (``end.reason`` ``"stalled"``). OpenSpiel's game only
  states a maximum length; the referee's bots could otherwise ask in circles forever.

On the wire it is an ask-style game (PROTOCOL.md): ``ask`` turns whose ``options`` are the ranks it
may ask for, ``ask`` replies naming a ``family`` (a rank), and ``deal``/``ask``/``draw``/``laid``
events. ``tests/rules/test_go_fish_oracle.py`` plays it against ``pyspiel``'s ``go_fish`` action
for action. Pure Python: no I/O.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from protocol.messages import RulesWireBase

from .base import Ask, Deal, Event, GameState, IllegalAction, RulesError
from .kind import GameKind, deck_decisions, default_check_sizes
from .rng import Rng, derive

__all__ = ["GO_FISH_PRESETS", "GoFishGame", "GoFishRules", "GoFishRulesWire", "KIND"]

_RANK_NAMES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
_SUIT_NAMES = ("S", "H", "D", "C")
DEFAULT_STALL = 100


class GoFishRulesWire(RulesWireBase, tag="go-fish", kw_only=True):
    """``start.rules`` of Go Fish: ``families`` are the ranks, ``members`` the suits;
    ``initial_cards`` null means OpenSpiel's default (7 at two seats, 5 otherwise)."""

    families: list[str]
    members: list[str]
    ask: Literal["family"]
    initial_cards: int | None
    ask_after_empty_draw: bool
    end_on_first_out: bool
    most_books_wins: bool
    stall: int


class _Params(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A config's Go Fish parameters (also accepts its own ``to_wire()`` form)."""

    game: Literal["go-fish"] = "go-fish"
    name: str = "go-fish"
    families: int | list[str] = 13
    members: int | list[str] = 4
    ask: Literal["family"] = "family"
    players: int | tuple[int, int] = (2, 10)
    initial_cards: int | None = None
    ask_after_empty_draw: bool = True
    end_on_first_out: bool = False
    most_books_wins: bool = True
    stall: int = DEFAULT_STALL


def _names(value: int | list[str], what: str, standard: tuple[str, ...], name: str) -> tuple[str, ...]:
    if isinstance(value, int):
        if not 1 <= value <= len(standard):
            raise RulesError(
                f"variant {name!r}: '{what}' as a count must be 1..{len(standard)} ({', '.join(standard)}); "
                f"give a list of names for other decks, not {value}"
            )
        return standard[:value]
    return tuple(value)


@dataclass(frozen=True)
class GoFishRules:
    """The rules record of a Go Fish variant (OpenSpiel's parameters; see the module docstring)."""

    name: str = "go-fish"
    families: tuple[str, ...] = _RANK_NAMES
    members: tuple[str, ...] = _SUIT_NAMES
    min_players: int = 2
    max_players: int = 10
    initial_cards: int | None = None
    ask_after_empty_draw: bool = True
    end_on_first_out: bool = False
    most_books_wins: bool = True
    stall: int = DEFAULT_STALL

    def __post_init__(self) -> None:
        name = self.name
        fams, mems = self.families, self.members
        if not fams or len(set(fams)) != len(fams) or not all(isinstance(f, str) and f for f in fams):
            raise RulesError(f"variant {name!r}: 'families' (the ranks) must be distinct non-empty names")
        if len(mems) < 2 or len(set(mems)) != len(mems) or not all(isinstance(m, str) and m for m in mems):
            raise RulesError(f"variant {name!r}: 'members' (the suits) must be at least 2 distinct non-empty names")
        cards = [f + m for f in fams for m in mems]
        if len(set(cards)) != len(cards):
            raise RulesError(f"variant {name!r}: rank and suit names make ambiguous card names; rename them")
        if not 2 <= self.min_players <= self.max_players <= 10:
            raise RulesError(
                f"variant {name!r}: 'players' must be [min, max] with 2 <= min <= max <= 10 (OpenSpiel's limits), "
                f"not [{self.min_players}, {self.max_players}]"
            )
        if self.initial_cards is not None and self.initial_cards < 1:
            raise RulesError(
                f"variant {name!r}: 'initial_cards' must be at least 1 (or left out: 7 at 2 seats, else 5)"
            )
        for n in (self.min_players, self.max_players):
            if n * self.hand_size(n) > len(cards):
                raise RulesError(
                    f"variant {name!r}: {n} players with {self.hand_size(n)} cards each need "
                    f"{n * self.hand_size(n)} cards, the deck has {len(cards)}; deal fewer cards or add ranks"
                )
        if self.stall < 1:
            raise RulesError(f"variant {name!r}: 'stall' must be at least 1 (default {DEFAULT_STALL})")
        if not self.most_books_wins and not self.end_on_first_out:
            raise RulesError(
                f"variant {name!r}: most_books_wins = false scores the seat that goes out first, which needs "
                "end_on_first_out = true"
            )
        object.__setattr__(self, "_cards", tuple(cards))
        object.__setattr__(self, "_index", {c: i for i, c in enumerate(cards)})
        object.__setattr__(self, "_rank", {f: i for i, f in enumerate(fams)})

    @property
    def kind(self) -> str:
        return "go-fish"

    @property
    def deck(self) -> tuple[str, ...]:
        """Every card name in canonical order (ranks in order, suits in order)."""
        cards: tuple[str, ...] = self.__dict__["_cards"]
        return cards

    def hand_size(self, players: int) -> int:
        """Cards dealt to each seat (OpenSpiel: ``initial_cards``, -1 meaning 7 at two seats, else 5)."""
        if self.initial_cards is not None:
            return self.initial_cards
        return 7 if players == 2 else 5

    def family_of(self, card: str) -> str:
        """The rank of a card (``"10S" -> "10"``); ``KeyError`` for a card not in the deck."""
        index: dict[str, int] = self.__dict__["_index"]
        return self.families[index[card] // len(self.members)]

    def to_wire(self, players: int | None = None) -> dict[str, Any]:
        return {
            "game": "go-fish",
            "name": self.name,
            "families": list(self.families),
            "members": list(self.members),
            "ask": "family",
            "players": [self.min_players, self.max_players],
            "initial_cards": self.initial_cards,
            "ask_after_empty_draw": self.ask_after_empty_draw,
            "end_on_first_out": self.end_on_first_out,
            "most_books_wins": self.most_books_wins,
            "stall": self.stall,
        }

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> GoFishRules:
        """A variant from a config's parameters: ``name``, ``families`` (the ranks: names or a
        count, 13 = ``2``..``A``), ``members`` (the suits: names or a count, 4 = ``S H D C``),
        ``players`` (``[min, max]`` or one number, within 2..10), ``initial_cards``,
        ``ask_after_empty_draw``, ``end_on_first_out``, ``most_books_wins``, ``stall``.
        Raises :class:`RulesError`."""
        if not isinstance(params, Mapping):
            raise RulesError(f"a variant must be a preset name or a table of parameters, not {type(params).__name__}")
        try:
            p = msgspec.convert(dict(params), _Params)
        except msgspec.ValidationError as exc:
            raise RulesError(f"Go Fish variant {params.get('name', 'go-fish')!r}: {exc}") from None
        lo, hi = (p.players, p.players) if isinstance(p.players, int) else p.players
        rules = cls(
            name=p.name,
            families=_names(p.families, "families", _RANK_NAMES, p.name),
            members=_names(p.members, "members", _SUIT_NAMES, p.name),
            min_players=lo,
            max_players=hi,
            initial_cards=p.initial_cards,
            ask_after_empty_draw=p.ask_after_empty_draw,
            end_on_first_out=p.end_on_first_out,
            most_books_wins=p.most_books_wins,
            stall=p.stall,
        )
        preset = GO_FISH_PRESETS.get(rules.name)
        if preset is not None and rules != preset:
            raise RulesError(
                f"the name {rules.name!r} belongs to a built-in variant, but these rules differ from it; "
                "give your custom variant a name of its own"
            )
        return rules

    @classmethod
    def from_record(cls, wire: Mapping[str, Any]) -> GoFishRules:
        """The rules as a game log header records them (its ``to_wire()`` form)."""
        try:
            msgspec.convert(dict(wire), GoFishRulesWire)
        except msgspec.ValidationError as exc:
            raise RulesError(f"not a rules record of Go Fish ({exc})") from None
        lo, hi = wire["players"]
        return cls(
            name=wire["name"],
            families=tuple(wire["families"]),
            members=tuple(wire["members"]),
            min_players=lo,
            max_players=hi,
            initial_cards=wire["initial_cards"],
            ask_after_empty_draw=wire["ask_after_empty_draw"],
            end_on_first_out=wire["end_on_first_out"],
            most_books_wins=wire["most_books_wins"],
            stall=wire["stall"],
        )

    def new_game(self, players: int, *, seed: int | None = None, deal: Deal | None = None) -> GoFishGame:
        """A game for ``players`` seats, dealt from ``seed`` (``None``: a fresh random seed) or
        from an explicit ``deal`` (hands as dealt, books in them are laid at once; the stock top
        first). Raises :class:`RulesError`."""
        if isinstance(players, bool) or not isinstance(players, int):
            raise RulesError(f"the number of players must be a whole number, not {players!r}")
        if not self.min_players <= players <= self.max_players:
            raise RulesError(f"{self.name} is for {self.min_players}-{self.max_players} players, not {players}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise RulesError(f"a seed must be a whole number, not {seed!r}")
        return GoFishGame(self, players, seed=seed, deal=deal)


GO_FISH_PRESETS: dict[str, GoFishRules] = {"go-fish": GoFishRules()}


class GoFishGame(GameState):
    """One Go Fish game in progress. Public: ``n``, ``seed``, ``dealer``."""

    def __init__(self, rules: GoFishRules, n: int, *, seed: int | None = None, deal: Deal | None = None) -> None:
        self._rules = rules
        self.n = n
        R, S = len(rules.families), len(rules.members)
        self._S = S
        self._full = (1 << S) - 1
        self._held = [[0] * R for _ in range(n)]  # per seat, per rank: a bitmask of suits
        self._count = [0] * n
        self._books: list[list[int]] = [[] for _ in range(n)]  # ranks laid, in order
        self._turn = -1
        self._over = False
        self._stalled = False
        self._first_out = -1
        self._idle = 0
        events: list[Event] = []
        k = rules.hand_size(n)
        if deal is not None:
            self.seed = 0 if seed is None else seed
            hands, stock = self._check_deal(deal)
            self.dealer = deal.dealer
            self._stock = stock[::-1]  # pop() takes the top card
            for s, h in enumerate(hands):
                for c in h:
                    self._add(s, c)
            for s in range(n):  # books straight from the deal (listed by the deal event)
                for r in range(R):
                    self._check_book(s, r, None)
        else:
            self.seed = secrets.randbits(63) if seed is None else seed
            rng = Rng(self.seed)
            self.dealer = rng.below(n)
            order = list(range(R * S))
            rng.shuffle(order)
            self._stock = order[::-1]
            # OpenSpiel's deal: player 0 (left of the dealer) is dealt until it holds k cards, then
            # player 1...; a book completed on the way is laid at once (its seat is dealt on), except
            # on the last seat's k-th card, which ends the deal
            for p in range(n):
                s = (self.dealer + 1 + p) % n
                while self._count[s] < k and self._stock and not self._over:
                    before = self._count[s]
                    c = self._stock.pop()
                    self._add(s, c)
                    self._check_book(s, c // S, None)
                    if p == n - 1 and before + 1 == k:
                        break
        dealt = [self.hand(s) for s in range(n)]
        self._dealt = dealt
        deal_event: Event = {"kind": "deal", "counts": list(self._count), "laid": self.laid(), "first": None}
        events.append(deal_event)
        if not self._over:
            self._turn = (self.dealer + 1) % n
            # OpenSpiel does not check this after its deal (its game then has no legal action, a dead
            # end reachable only with tiny decks): a first seat that cannot ask draws or passes on
            self._check_empty_ask(events)
        deal_event["first"] = self.turn
        self._initial = events

    # ------------------------------------------------------------------ the interface

    @property
    def rules(self) -> GoFishRules:
        return self._rules

    def fallback_rng(self) -> Rng:
        return Rng(derive(self.seed, "fallback"))

    def initial_events(self) -> list[Event]:
        return [
            {k: ([list(x) for x in v] if k == "laid" else list(v)) if isinstance(v, list) else v for k, v in e.items()}
            for e in self._initial
        ]

    def pending(self) -> tuple[int, ...]:
        return (self._turn,) if not self._over else ()

    @property
    def terminal(self) -> bool:
        return self._over

    @property
    def turn(self) -> int | None:
        return None if self._over else self._turn

    @property
    def end_reason(self) -> str:
        return "stalled" if self._stalled else "complete"

    def decision(self) -> str:
        return "ask"

    def hand(self, seat: int) -> list[str]:
        deck, S = self._rules.deck, self._S
        return [deck[r * S + m] for r, h in enumerate(self._held[seat]) if h for m in range(S) if h >> m & 1]

    def dealt_hand(self, seat: int) -> list[str]:
        return list(self._dealt[seat])

    def counts(self) -> list[int]:
        return list(self._count)

    def laid(self) -> list[list[str]]:
        fams = self._rules.families
        return [[fams[r] for r in books] for books in self._books]

    def stock_size(self) -> int:
        return len(self._stock)

    def stock(self) -> list[str]:
        """The stock's cards, top first (for tests and the oracle)."""
        deck = self._rules.deck
        return [deck[c] for c in reversed(self._stock)]

    def scores(self) -> list[int]:
        if self._rules.most_books_wins:
            return [len(b) for b in self._books]
        return [1 if s == self._first_out else 0 for s in range(self.n)]

    def view(self, seat: int) -> dict[str, Any]:
        mine = seat == self.turn
        return {
            "hand": self.hand(seat),
            "counts": list(self._count),
            "laid": self.laid(),
            "options": self._options(seat) if mine else [],
            "targets": self._targets(seat) if mine else [],
        }

    def legal_actions(self, seat: int) -> list[Any]:
        if seat != self.turn:
            return []
        return [Ask(target=t, family=f) for t in self._targets(seat) for f in self._options(seat)]

    def random_action(self, seat: int, rng: Rng) -> Any:
        """``legal_actions(seat)[rng.below(len)]``, without listing them."""
        if seat != self.turn:
            raise IllegalAction(self._not_your_turn(seat))
        targets, options = self._targets(seat), self._options(seat)
        t, o = divmod(rng.below(len(targets) * len(options)), len(options))
        return Ask(target=targets[t], family=options[o])

    def apply(self, seat: int, action: Any) -> list[Event]:
        """Apply ``seat``'s ask; return the ``ask`` event and the ``laid``/``draw`` events it
        caused (``next`` in the ask event: the seat to ask after them, ``None`` at the end)."""
        if seat != self.turn:
            raise IllegalAction(self._not_your_turn(seat))
        target = getattr(action, "target", None)
        family = getattr(action, "family", None)
        card = getattr(action, "card", None)
        please = getattr(action, "please", False)
        n = self.n
        if type(target) is not int:
            raise IllegalAction(f"'target' must be a seat number (0..{n - 1}), not {target!r}")
        if not 0 <= target < n:
            raise IllegalAction(f"there is no seat {target}: seats are 0..{n - 1}")
        if target == seat:
            raise IllegalAction("you cannot ask yourself: ask another seat that holds cards")
        if not self._count[target]:
            raise IllegalAction(f"seat {target} has no cards")
        if card is not None:
            raise IllegalAction(f"in Go Fish you ask for a rank: name a 'family' (e.g. {self._rules.families[0]!r})")
        r = self._rules.__dict__["_rank"].get(family) if type(family) is str else None
        if r is None:
            raise IllegalAction(f"unknown rank {family!r}: 'family' must be one of {', '.join(self._rules.families)}")
        if not self._held[seat][r]:
            if any(r in b for b in self._books):
                raise IllegalAction(f"rank {family} is already laid as a book")
            raise IllegalAction(f"you hold no card of rank {family}, so you may not ask for it")
        if please is not None and please is not True and please is not False:
            raise IllegalAction(f"'please' must be true or false, not {please!r}")
        # legal from here on
        event: Event = {
            "kind": "ask",
            "seat": seat,
            "target": target,
            "family": family,
            "please": bool(please),
            "cards": [],
            "rude": False,
            "next": None,
        }
        events = [event]
        advance = False
        taken = self._held[target][r]
        if taken:
            self._idle = 0
            S = self._S
            deck = self._rules.deck
            event["cards"] = [deck[r * S + m] for m in range(S) if taken >> m & 1]
            self._held[target][r] = 0
            k = len(event["cards"])
            self._count[target] -= k
            self._held[seat][r] |= taken
            self._count[seat] += k
            self._check_book(seat, r, events)
        elif self._stock:  # go fish
            c = self._draw(seat, events)
            advance = c // self._S != r
        else:
            advance = True
            self._idle += 1
            if self._idle >= self._rules.stall:
                self._over = self._stalled = True
        if not self._over:
            if advance:
                self._turn = (self._turn + 1) % n
            self._check_empty_ask(events)
        event["next"] = self.turn
        return events

    # ------------------------------------------------------------------ internals (OpenSpiel's names)

    def _options(self, seat: int) -> list[str]:
        fams = self._rules.families
        return [fams[r] for r, h in enumerate(self._held[seat]) if h]

    def _targets(self, seat: int) -> list[int]:
        return [t for t in range(self.n) if t != seat and self._count[t]]

    def _not_your_turn(self, seat: int) -> str:
        if self._over:
            return "the game is over"
        return f"it is not your turn: seat {self._turn} is to ask"

    def _add(self, seat: int, c: int) -> None:
        self._held[seat][c // self._S] |= 1 << (c % self._S)
        self._count[seat] += 1

    def _draw(self, seat: int, events: list[Event]) -> int:
        """``seat`` draws the top stock card (and lays a book it completes); returns the card."""
        self._idle = 0
        c = self._stock.pop()
        self._add(seat, c)
        events.append({"kind": "draw", "seat": seat, "card": self._rules.deck[c]})
        self._check_book(seat, c // self._S, events)
        return c

    def _check_book(self, seat: int, r: int, events: list[Event] | None) -> bool:
        """OpenSpiel's ``CheckBook``: lay ``seat``'s book of rank ``r`` if complete; end the game
        when a seat goes out (``end_on_first_out``) or no card is left outside the books."""
        if self._held[seat][r] != self._full:
            return False
        self._held[seat][r] = 0
        self._count[seat] -= self._S
        self._books[seat].append(r)
        if events is not None:
            events.append({"kind": "laid", "seat": seat, "family": self._rules.families[r]})
        if not self._count[seat] and self._rules.end_on_first_out:
            self._first_out = seat
            self._over = True
        elif not self._stock and not any(self._count):
            self._over = True
        return True

    def _check_empty_ask(self, events: list[Event]) -> None:
        """OpenSpiel's ``CheckEmptyAsk`` and the draws it leads to: a seat to ask with no cards
        draws (then asks, with ``ask_after_empty_draw``) or is passed over; a seat with cards that
        nobody else holds passes the turn to the next seat, which draws."""
        n = self.n
        while not self._over:
            s = self._turn
            if not self._count[s]:
                if not self._stock:
                    while True:
                        s = (s + 1) % n
                        if self._count[s]:
                            break
                        if s == self._turn:  # pragma: no cover - the game would be over
                            raise AssertionError("nobody holds cards in a game that goes on")
                    self._turn = s
                    return
            elif any(self._count[t] for t in range(n) if t != s):
                return
            else:
                s = self._turn = (s + 1) % n
            self._draw(s, events)
            if not self._over and not self._rules.ask_after_empty_draw:
                self._turn = (s + 1) % n

    def _check_deal(self, deal: Deal | Any) -> tuple[list[list[int]], list[int]]:
        rules, n = self._rules, self.n
        if not isinstance(deal, Deal):
            deal = Deal.from_json(deal)
        if isinstance(deal.dealer, bool) or not isinstance(deal.dealer, int) or not 0 <= deal.dealer < n:
            raise RulesError(f"deal: dealer {deal.dealer!r} is not a seat of this {n}-seat table (0..{n - 1})")
        if len(deal.hands) != n:
            raise RulesError(f"deal: {len(deal.hands)} hands given for {n} seats; give one hand per seat")
        index: dict[str, int] = rules.__dict__["_index"]
        seen: dict[str, str] = {}
        out: list[list[int]] = []
        for where, cards in [*((f"seat {s}'s hand", h) for s, h in enumerate(deal.hands)), ("the stock", deal.stock)]:
            got: list[int] = []
            for c in cards:
                if not isinstance(c, str) or c not in index:
                    raise RulesError(
                        f"deal: unknown card {c!r} in {where}; {rules.name} cards look like {rules.deck[0]!r}"
                    )
                if c in seen:
                    raise RulesError(f"deal: card {c} appears twice ({seen[c]} and {where})")
                seen[c] = where
                got.append(index[c])
            out.append(got)
        if len(seen) != len(rules.deck):
            missing = [c for c in rules.deck if c not in seen]
            raise RulesError(f"deal: {len(missing)} card(s) missing: {', '.join(missing[:12])}")
        stock = out.pop()
        return out, stock


def _snapshot(state: GoFishGame, pending: Sequence[int]) -> dict[str, Any]:
    return {
        "laid": state.laid(),
        "scores": state.scores(),
        "turn": pending[0] if pending else None,
        "stock": state.stock_size(),
        "dealer": state.dealer,
    }


KIND = GameKind(
    game="go-fish",
    style="ask",
    rules_type=GoFishRules,
    wire=GoFishRulesWire,
    presets=GO_FISH_PRESETS,
    from_params=GoFishRules.from_params,
    from_record=GoFishRules.from_record,
    snapshot=_snapshot,
    max_decisions=lambda rules, players: deck_decisions(len(rules.deck), players),
    decisions=("ask",),
    per_seat=("laid", "scores"),
    seat_refs=("turn", "dealer"),
    deals=True,
    family_of=lambda rules, card: rules.family_of(card),
    # check-bot: 2, 4 and 6 seats (up to 10 would start 9 instant bots)
    check_sizes=lambda rules: default_check_sizes(rules.min_players, rules.max_players, cap=6),
)
