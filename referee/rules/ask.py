"""The ask games: Happy Families, its Jaques tradition, Authors, Kwartet, and custom variants.

One engine with rule parameters (see ``docs/RULES.md`` part A):

* :class:`AskRules` - the rules record (deck shape, ask mode, miss rule,
  politeness, stock, first player, table sizes). :data:`ASK_PRESETS` holds the
  four named variants; :meth:`AskRules.from_params` builds custom ones and
  rejects every invalid combination with a :class:`RulesError` that says what
  to change.
* :class:`AskGame` - one game in progress (a :class:`GameState`).

Pure Python: no I/O, no trio. Nothing here blocks or awaits, so cancellation
never interrupts a half-applied action: :meth:`AskGame.apply` either applies
an action completely or raises :class:`IllegalAction` and changes nothing.

Internals (for speed): a card is the small int ``family * M + member``; each
seat's holding is one member bitmask per family; name <-> index tables are
built once per rules record. :meth:`AskGame.random_action` draws uniformly
over the legal actions without listing them (it counts targets x options x
politeness choices, draws one index and decodes it); :meth:`AskGame.legal_actions`
lists the actions in exactly that index order, so
``random_action(seat, rng) == legal_actions(seat)[Rng(same state).below(len)]``.
"""

from __future__ import annotations

import difflib
import json
import secrets
from bisect import insort
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from typing import Annotated, Any, Literal, cast, get_args

import msgspec

from .base import Ask, Deal, Event, GameState, IllegalAction, RulesError
from .rng import Rng, derive

__all__ = ["ASK_PRESETS", "AskGame", "AskParams", "AskRules"]

_ASK_MODES = ("card", "family")
_MISS_RULES = ("asked", "next")
_FIRST_RULES = ("left", "dealer")
#: the stalemate rule's default (RULES.md rule 10): a hand ends after this many asks in a row that move no card
DEFAULT_STALL = 100


def _must(description: str, **constraints: Any) -> Any:
    """A parameter's constraints and its wording (what it must be: ``'stall' must be ...``)."""
    return msgspec.Meta(description=description, **constraints)


class AskParams(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A config's parameters of an ask variant (RULES.md part A, tournaments/README.md): the one
    list of them, with their types, constraints and wording. ``None`` (not given): from ``base``
    (default: happy-families). :meth:`AskRules.from_params` checks them key by key (each key's
    ``description`` words its error) and resolves them; :meth:`AskRules.to_wire`'s form is
    accepted too (``players`` as ``[min, max]``)."""

    name: Annotated[str, _must("a non-empty string", min_length=1)] | None = None
    base: Annotated[str, _must('the name of a built-in ask variant (e.g. "kwartet")')] | None = None
    game: Annotated[Literal["ask"], _must('"ask" for an ask variant')] = "ask"
    families: Annotated[int | list[str], _must('a list of names (e.g. ["A", "B"]) or a count')] | None = None
    members: Annotated[int | list[str], _must('a list of names (e.g. ["1", "2"]) or a count')] | None = None
    ask: Annotated[Literal["card", "family"], _must('"card" or "family"')] | None = None
    miss: Annotated[Literal["asked", "next"], _must('"asked" or "next"')] | None = None
    please: Annotated[bool, _must("true or false")] | None = None
    stock: Annotated[int, _must("a whole number of cards, 0 or more", ge=0)] | None = None
    first: Annotated[Literal["left", "dealer"], _must('"left" or "dealer"')] | None = None
    players: Annotated[int | tuple[int, int], _must("[min, max] (e.g. [3, 6]) or one number")] | None = None
    stall: Annotated[int, _must(f"a whole number of asks, at least 1 (default {DEFAULT_STALL})", ge=1)] | None = None
    family_points: Annotated[int, _must("a whole number of points, at least 1 (default 1)", ge=1)] | None = None


#: what a parameter's error adds after the value (why it matters)
_WHY = {"stall": "the hand ends after that many asks in a row that move no card"}
#: parameters worded without the variant's name (it may be the name that is wrong)
_UNNAMED = ("name", "base", "game")


def _meta(tp: Any) -> msgspec.Meta:
    """The :class:`msgspec.Meta` of a parameter's type (``Annotated[...] | None``)."""
    args = get_args(tp)
    metas = [a for a in args if isinstance(a, msgspec.Meta)]
    if metas:
        return metas[0]
    return _meta(args[0])  # the Annotated member of ``... | None``  # pragma: no cover - every AskParams field has one


def _check_params(params: Mapping[str, Any]) -> AskParams:
    """``params`` as :class:`AskParams`, checked key by key: the first bad key's error says what
    it must be (its ``description``), never msgspec's own sentence."""
    fields = {f.name: f for f in msgspec.structs.fields(AskParams)}
    unknown = [k for k in params if k not in fields]
    if unknown:
        raise RulesError(
            f"unknown variant parameter(s) {', '.join(repr(k) for k in unknown)}; allowed: {', '.join(fields)}"
        )
    try:
        return msgspec.convert(dict(params), AskParams)
    except msgspec.ValidationError:
        pass
    name = params.get("name")
    who = f"variant {name!r}: " if isinstance(name, str) and name else "variant "
    for key, f in fields.items():
        if key not in params:
            continue
        try:
            msgspec.convert(params[key], f.type)
        except msgspec.ValidationError:
            meta = _meta(f.type)
            prefix = "variant parameter " if key in _UNNAMED else who
            why = f": {_WHY[key]}" if key in _WHY else ""
            raise RulesError(f"{prefix}'{key}' must be {meta.description}, not {params[key]!r}{why}") from None
    raise RulesError(f"not the parameters of an ask variant: {dict(params)!r}")  # pragma: no cover


class _Tables:
    """Name <-> index maps and bitmask tables of one rules record (built once)."""

    __slots__ = (
        "F",
        "M",
        "D",
        "full",
        "card_names",
        "card_index",
        "card_fam",
        "card_bit",
        "family_names",
        "nmiss",
        "missing",
        "card_mode",
        "please",
        "miss_next",
        "first_dealer",
        "stock",
        "stall",
        "ask_cache",
        "held_names",
        "rules",
        "family_json",
        "held_json",
        "missing_json",
        "ints",
        "others",
        "asked",
    )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_Tables, (self.rules,))

    def __copy__(self) -> _Tables:
        return self

    def __deepcopy__(self, memo: Any) -> _Tables:
        return self

    def __init__(self, rules: AskRules) -> None:
        self.rules = rules
        F = len(rules.families)
        M = len(rules.members)
        self.F = F
        self.M = M
        self.D = F * M
        self.full = (1 << M) - 1
        self.card_names = tuple(f + m for f in rules.families for m in rules.members)
        self.card_index = {name: i for i, name in enumerate(self.card_names)}
        self.card_fam = tuple(i // M for i in range(self.D))
        self.card_bit = tuple(1 << (i % M) for i in range(self.D))
        self.family_names = tuple(rules.families)
        self.card_mode = rules.ask == "card"
        # what an ask may name in this mode: card -> (its family, its bit), or family -> (it, all members)
        self.asked: dict[str, tuple[int, int]] = (
            {c: (self.card_fam[i], self.card_bit[i]) for i, c in enumerate(self.card_names)}
            if self.card_mode
            else {name: (i, self.full) for i, name in enumerate(rules.families)}
        )
        self.please = rules.please
        self.miss_next = rules.miss == "next"
        self.first_dealer = rules.first == "dealer"
        self.stock = rules.stock
        # no stalemate rule (stall None: how games of log version 1 were played): never reached
        self.stall = rules.stall if rules.stall is not None else 1 << 62
        # held_names[f][mask]: the card names of family f in a member bitmask (filled on first use)
        names = self.card_names
        self.held_names: list[Any] = [
            _LazyMaskTable(lambda h, base=f * M: tuple(names[base + m] for m in range(M) if h >> m & 1))
            for f in range(F)
        ]

        # pre-encoded JSON fragments for turn_fields(): a family's name, and the comma-separated
        # names of the members held (held_json) or missing (missing_json) in a member bitmask
        def enc(name: str) -> bytes:  # the same bytes as msgspec's JSON encoder (checked by the tests)
            return json.dumps(name, ensure_ascii=False).encode()

        self.family_json = tuple(enc(f) for f in rules.families)
        card_json = tuple(enc(c) for c in names)
        self.held_json: list[Any] = [
            _LazyMaskTable(lambda h, base=f * M: b",".join([card_json[base + m] for m in range(M) if h >> m & 1]))
            for f in range(F)
        ]
        self.missing_json: list[Any] = [
            _LazyMaskTable(lambda h, base=f * M: b",".join([card_json[base + m] for m in range(M) if not h >> m & 1]))
            for f in range(F)
        ]
        # card counts and seat numbers as JSON; others[(n, seat)]: every seat of n but seat
        self.ints: Any = _LazyMaskTable(lambda i: b"%d" % i)
        self.others: Any = _LazyMaskTable(lambda key: b",".join([b"%d" % s for s in range(key[0]) if s != key[1]]))
        # random_action's Ask objects, built once: index (target * D + card) * 2 + please
        # (family mode: (target * F + family) * 2 + please)
        self.ask_cache: list[Ask | None] = [None] * (rules.max_players * (self.D if self.card_mode else F) * 2)
        # per member bitmask: the member indices missing (in order) and their number
        if M <= 12:
            self.missing: Any = [tuple(m for m in range(M) if not h >> m & 1) for h in range(1 << M)]
            self.nmiss: Any = [len(x) for x in self.missing]
        else:  # large families: fill lazily
            self.missing = _LazyMaskTable(lambda h: tuple(m for m in range(M) if not h >> m & 1))
            self.nmiss = _LazyMaskTable(lambda h: M - bin(h).count("1"))


class _LazyMaskTable(dict[int, Any]):
    """A dict that computes missing entries on first use."""

    def __init__(self, fn: Any) -> None:
        super().__init__()
        self._fn = fn

    def __missing__(self, h: int) -> Any:
        value = self[h] = self._fn(h)
        return value


def _tables(rules: AskRules) -> _Tables:
    """The lookup tables ``AskRules.__post_init__`` attaches (not a dataclass field)."""
    return cast(_Tables, rules.__dict__["_t"])


@dataclass(frozen=True)
class AskRules:
    """The rules record of one ask variant (preset or custom).

    Construction validates everything and raises :class:`RulesError` with a
    message naming the problem (no families, fewer than 2 members, duplicated
    or ambiguous card names, bad ``ask``/``miss``/``first`` values, bad table
    sizes, a stock that leaves too few cards to deal, a ``stall`` below 1...).

    ``stall`` is the stalemate rule (RULES.md rule 10): after that many asks
    in a row that move no card (misses and rude asks; a hit or a draw from
    the stock resets the count) the hand ends at once, scored as it stands.
    """

    name: str
    families: tuple[str, ...]
    members: tuple[str, ...]
    ask: str = "card"
    miss: str = "asked"
    please: bool = False
    stock: int = 0
    first: str = "left"
    min_players: int = 2
    max_players: int = 6
    #: the stalemate rule; None only for rules rebuilt from a version 1 game log (no such rule then)
    stall: int | None = DEFAULT_STALL
    #: what one laid family scores (RULES.md: a custom variant may set it; the presets keep 1)
    family_points: int = 1

    def __post_init__(self) -> None:
        for key in ("families", "members"):
            value = getattr(self, key)
            if isinstance(value, str) or not isinstance(value, (list, tuple)):
                raise RulesError(f"variant {self.name!r}: '{key}' must be a list of names, not {value!r}")
            object.__setattr__(self, key, tuple(value))
        _validate(self)
        # not a dataclass field: the lookup tables are derived, never compared, copied or pickled
        object.__setattr__(self, "_t", _Tables(self))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (AskRules, tuple(getattr(self, f.name) for f in dataclass_fields(self)))

    @property
    def kind(self) -> str:
        return "ask"

    @property
    def deck(self) -> tuple[str, ...]:
        """Every card name, in canonical order (families in order, members in order)."""
        return _tables(self).card_names

    def to_wire(self, players: int | None = None) -> dict[str, Any]:
        """The protocol's ``start.rules`` form (also the game log header's rules);
        the same for every table size (``players`` is accepted for the common
        rules-record interface and ignored)."""
        return {
            "game": "ask",
            "name": self.name,
            "families": list(self.families),
            "members": list(self.members),
            "ask": self.ask,
            "miss": self.miss,
            "please": self.please,
            "stock": self.stock,
            "first": self.first,
            "players": [self.min_players, self.max_players],
            **({"stall": self.stall} if self.stall is not None else {}),
            **({"family_points": self.family_points} if self.family_points != 1 else {}),
        }

    @classmethod
    def from_record(cls, wire: Mapping[str, Any]) -> AskRules:
        """The rules exactly as a game log's header records them (its ``to_wire()``
        form), without the checks a config gets against the presets: a log
        written before a preset changed (version 1: no stalemate rule, the Jaques
        tradition's first player) replays with the rules it was played with. A
        record without ``stall`` has no stalemate rule. Raises :class:`RulesError`."""
        try:
            lo, hi = wire["players"]
            return cls(
                name=wire["name"],
                families=tuple(wire["families"]),
                members=tuple(wire["members"]),
                ask=wire["ask"],
                miss=wire["miss"],
                please=wire["please"],
                stock=wire["stock"],
                first=wire.get("first", "left"),
                min_players=lo,
                max_players=hi,
                stall=wire.get("stall"),
                family_points=wire.get("family_points", 1),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise RulesError(f"not a rules record of an ask variant ({exc})") from None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> AskRules:
        """Build a (custom) variant from a parameter mapping: the keys of
        :class:`AskParams` (``families`` and ``members`` as names or a count: A, B,
        C... and 1, 2, 3...; ``players`` as ``[min, max]`` or one number). Missing
        keys come from ``base`` (default: happy-families). Without ``name`` the
        variant is called after its base if it equals it, else ``"custom"``. Raises
        :class:`RulesError` for unknown keys, wrong types and invalid combinations.
        """
        if not isinstance(params, Mapping):
            raise RulesError(f"a variant must be a preset name or a table of parameters, not {type(params).__name__}")
        p = _check_params(params)
        base = _base(p.base)
        # without a name: the base's name if nothing differs from it, else "custom"
        given: dict[str, Any] = {
            "name": p.name,
            "families": None if p.families is None else _names(p.families, "families", _letters),
            "members": None if p.members is None else _names(p.members, "members", _numbers),
            "ask": p.ask,
            "miss": p.miss,
            "please": p.please,
            "stock": p.stock,
            "first": p.first,
            "stall": p.stall,
            "family_points": p.family_points,
        }
        if p.players is not None:
            given["min_players"], given["max_players"] = (
                (p.players, p.players) if isinstance(p.players, int) else p.players
            )
        kw = {f.name: getattr(base, f.name) for f in dataclass_fields(cls)}
        kw.update((k, v) for k, v in given.items() if v is not None)
        if p.name is None and any(kw[k] != getattr(base, k) for k in kw):
            kw["name"] = "custom"
        rules = cls(**kw)
        name = rules.name
        preset = ASK_PRESETS.get(name) if name != "chickens" else None
        if name == "chickens" or (preset is not None and rules != preset):
            raise RulesError(
                f"the name {name!r} belongs to a built-in variant, but these rules differ from it; "
                "give your custom variant a name of its own"
            )
        return rules

    def new_game(
        self,
        players: int,
        *,
        seed: int | None = None,
        deal: Deal | None = None,
        dealer: int | None = None,
        tiebreak: bool = False,
    ) -> AskGame:
        """Start a game for ``players`` seats.

        With ``deal`` the hands, stock and dealer are given (``seed`` then only
        seeds the fallback player; default 0). Otherwise the deal comes from
        ``seed`` (a fresh random seed when ``None``; see :attr:`AskGame.seed`).
        ``dealer`` (seeded deals only; used by matches, where the deal passes
        clockwise) replaces the dealer drawn from the seed; the shuffle is the
        same either way. A match hand may be a tie-break hand, played by the
        tied seats only even below the variant's minimum table size: so with
        ``dealer`` given (or ``tiebreak=True``) any table of 2 or more seats
        up to the maximum is allowed.

        Raises :class:`RulesError` for a table size outside the variant's range
        or an invalid deal (wrong number of hands, unknown, duplicated or
        missing cards, wrong stock size, dealer out of range).
        """
        if not _is_int(players):
            raise RulesError(f"the number of players must be a whole number, not {players!r}")
        lo = 2 if tiebreak or dealer is not None else self.min_players
        if not lo <= players <= self.max_players:
            raise RulesError(f"{self.name} is for {lo}-{self.max_players} players, not {players}")
        if dealer is not None:
            if deal is not None:
                raise RulesError("give either an explicit deal (which names its dealer) or a dealer, not both")
            if not _is_int(dealer) or not 0 <= dealer < players:
                raise RulesError(f"dealer {dealer!r} is not a seat of this {players}-seat table (0..{players - 1})")
        return AskGame(self, players, seed=seed, deal=deal, dealer=dealer)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _letters(k: int) -> list[str]:
    if k > 26:
        raise RulesError(f"'families' as a count gives names A..Z, so at most 26; list the {k} names instead")
    return [chr(ord("A") + i) for i in range(k)]


def _numbers(k: int) -> list[str]:
    return [str(i + 1) for i in range(k)]


def _base(name: str | None) -> AskRules:
    """The preset a custom variant starts from (``base``; default happy-families)."""
    if name is None:
        return ASK_PRESETS["happy-families"]
    if name not in ASK_PRESETS:
        close = difflib.get_close_matches(name, ASK_PRESETS, n=1, cutoff=0.6)
        raise RulesError(
            f"unknown base variant {name!r}; 'base' must be one of {', '.join(ASK_PRESETS)}"
            + (f" (did you mean '{close[0]}'?)" if close else "")
        )
    return ASK_PRESETS[name]


#: size limits of a custom variant (a deck is dealt, shuffled and logged in full:
#: these keep a typo like ``members = 1000000000`` from eating the machine)
MAX_FAMILIES = 100
MAX_MEMBERS = 26
MAX_DECK = 520
MAX_PLAYERS = 16
_NAME_LIMITS = {"families": MAX_FAMILIES, "members": MAX_MEMBERS}


def _names(value: Any, key: str, make: Any) -> tuple[str, ...]:
    if _is_int(value):
        if value < 0:
            raise RulesError(f"'{key}' must be a list of names or a positive count, not {value}")
        if value > _NAME_LIMITS[key]:
            raise RulesError(f"'{key}' = {value} is too many; at most {_NAME_LIMITS[key]} {key} are supported")
        return tuple(make(value))
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise RulesError(f'\'{key}\' must be a list of names (e.g. ["A", "B"]) or a count, not {value!r}')


def _validate(r: AskRules) -> None:
    who = f"variant {r.name!r}"
    if not isinstance(r.name, str) or not r.name:
        raise RulesError("a variant needs a non-empty 'name'")
    if not r.families:
        raise RulesError(f"{who}: no families; give at least one family name")
    if len(r.members) < 2:
        raise RulesError(
            f"{who}: each family needs at least 2 members, got {len(r.members)}; give 'members' as 2 or more names"
        )
    for key, names in (("families", r.families), ("members", r.members)):
        if len(names) > _NAME_LIMITS[key]:
            raise RulesError(f"{who}: {len(names)} {key} is too many; at most {_NAME_LIMITS[key]} are supported")
        for x in names:
            if not isinstance(x, str) or not x or x != x.strip():
                raise RulesError(f"{who}: {key} names must be non-empty strings without spaces around, got {x!r}")
        dup = sorted({x for x in names if names.count(x) > 1})
        if dup:
            raise RulesError(f"{who}: {key} name(s) {', '.join(dup)} appear more than once")
    seen: dict[str, tuple[str, str]] = {}
    for f in r.families:
        for m in r.members:
            card = f + m
            if card in seen:
                f0, m0 = seen[card]
                raise RulesError(
                    f"{who}: card name {card!r} is ambiguous (family {f0!r} + member {m0!r} and family {f!r} + "
                    f"member {m!r}); rename families or members so every card name is unique"
                )
            seen[card] = (f, m)
    if r.ask not in _ASK_MODES:
        raise RulesError(f'{who}: \'ask\' must be "card" or "family", not {r.ask!r}')
    if r.miss not in _MISS_RULES:
        raise RulesError(f'{who}: \'miss\' must be "asked" or "next", not {r.miss!r}')
    if r.first not in _FIRST_RULES:
        raise RulesError(f'{who}: \'first\' must be "left" or "dealer", not {r.first!r}')
    if not isinstance(r.please, bool):
        raise RulesError(f"{who}: 'please' must be true or false, not {r.please!r}")
    if r.stall is not None and (not _is_int(r.stall) or r.stall < 1):
        raise RulesError(
            f"{who}: 'stall' must be a whole number of asks, at least 1 (default {DEFAULT_STALL}), not {r.stall!r}: "
            "the hand ends after that many asks in a row that move no card"
        )
    deck = len(r.families) * len(r.members)
    if deck > MAX_DECK:
        raise RulesError(
            f"{who}: a deck of {len(r.families)} families x {len(r.members)} members = {deck} cards is too big; "
            f"at most {MAX_DECK} cards are supported"
        )
    if not _is_int(r.family_points) or r.family_points < 1:
        raise RulesError(f"{who}: 'family_points' must be a whole number, at least 1, not {r.family_points!r}")
    if not _is_int(r.stock) or r.stock < 0:
        raise RulesError(f"{who}: 'stock' must be 0 or more cards, not {r.stock!r}")
    if r.stock >= deck:
        raise RulesError(f"{who}: stock {r.stock} leaves no card to deal from a deck of {deck}; use at most {deck - 1}")
    if not _is_int(r.min_players) or not _is_int(r.max_players):
        raise RulesError(f"{who}: player counts must be whole numbers")
    if r.min_players < 2:
        raise RulesError(f"{who}: at least 2 players are needed, not {r.min_players}")
    if r.max_players < r.min_players:
        raise RulesError(f"{who}: players [{r.min_players}, {r.max_players}]: the maximum is below the minimum")
    if r.max_players > MAX_PLAYERS:
        raise RulesError(f"{who}: at most {MAX_PLAYERS} players are supported, not {r.max_players}")
    dealt = deck - r.stock
    if r.min_players > dealt:
        raise RulesError(
            f"{who}: stock {r.stock} leaves only {dealt} card(s) to deal from a deck of {deck}, fewer than "
            f"the {r.min_players} players; use a stock of at most {deck - r.max_players}"
        )
    if r.max_players > dealt:
        raise RulesError(
            f"{who}: {r.max_players} players need at least {r.max_players} dealt cards, but the deck deals only "
            f"{dealt} ({deck} cards, stock {r.stock}); set players = [{r.min_players}, {dealt}] or enlarge the deck"
        )


_HF_FAMILIES = tuple("ABCDEFGHIJK")
_HF_MEMBERS = ("1", "2", "3", "4")
_SUITS = ("S", "H", "D", "C")

#: the preset ask variants of RULES.md part A, by name
ASK_PRESETS: dict[str, AskRules] = {
    "happy-families": AskRules(
        name="happy-families",
        families=_HF_FAMILIES,
        members=_HF_MEMBERS,
        ask="card",
        miss="asked",
        please=False,
        stock=0,
        first="left",
        min_players=2,
        max_players=6,
    ),
    "happy-families-jaques": AskRules(
        name="happy-families-jaques",
        families=_HF_FAMILIES,
        members=_HF_MEMBERS,
        ask="card",
        miss="next",
        please=True,
        stock=0,
        first="dealer",
        min_players=2,
        max_players=6,
    ),
    "authors": AskRules(
        name="authors",
        families=("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"),
        members=_SUITS,
        ask="family",
        miss="next",
        please=False,
        stock=0,
        first="left",
        min_players=3,
        max_players=6,
    ),
    "kwartet": AskRules(
        name="kwartet",
        families=("7", "8", "9", "10", "J", "Q", "K", "A"),
        members=_SUITS,
        ask="card",
        miss="asked",
        please=False,
        stock=0,
        first="left",
        min_players=3,
        max_players=6,
    ),
}

_PLEASE_BOTH = (True, False)
_PLEASE_ONE = (False,)


class AskGame(GameState):
    """One ask game in progress. Create it with :meth:`AskRules.new_game`.

    Public attributes: ``n`` (seats), ``seed`` (the game's seed: the deal's, or
    the fallback's for an explicit deal), ``dealer``, ``turn`` (the seat to
    ask, ``None`` at the end). The fallback player's generator is
    :meth:`fallback_rng`. Public figures: :meth:`counts`, :meth:`laid`,
    :meth:`stock_size`.

    The ``deal`` event's ``counts`` are the hand sizes after the families
    laid straight from the deal; its ``first`` names the seat to ask after
    any draws that follow it (``None`` if the deal already ended the game).

    Turn passing (see ``docs/RULES.md``): when the
    turn passes to a seat with an empty hand it draws one card if the stock
    has any, otherwise it is passed over clockwise; an active seat that holds
    cards while no other seat does draws instead of asking. Automatic draws
    and lays are events of the ``apply`` call that caused them (or of
    :meth:`initial_events`).

    The game ends when every family is laid, or by the stalemate rule: when
    ``rules.stall`` asks in a row have moved no card (:attr:`idle`), the ask
    that reached the count ends the hand (its event's ``next`` is ``None``,
    :meth:`pending` is empty, :attr:`end_reason` is ``"stalled"``); the
    scores are the families laid so far.
    """

    __slots__ = (
        "_rules",
        "_t",
        "n",
        "seed",
        "dealer",
        "_held",
        "_counts",
        "_fams",
        "_nonempty",
        "_owner",
        "_laid_by",
        "_nlaid",
        "_stock",
        "_turn",
        "_initial",
        "_laid_json",
        "_idle",
        "_dealt",
    )

    def __init__(
        self,
        rules: AskRules,
        players: int,
        *,
        seed: int | None = None,
        deal: Deal | None = None,
        dealer: int | None = None,
    ) -> None:
        t = _tables(rules)
        n = players
        self._rules = rules
        self._t = t
        self.n = n
        self._held = [[0] * t.F for _ in range(n)]
        self._counts = [0] * n
        self._fams: list[list[int]] = [[] for _ in range(n)]  # per seat: families held, ascending
        self._nonempty = 0
        self._owner = [-1] * t.F
        self._laid_by: list[list[int]] = [[] for _ in range(n)]
        self._nlaid = 0
        self._laid_json: tuple[int, bytes] = (-1, b"")  # turn_fields' cache: (_nlaid, encoded laid)
        self._turn = -1
        self._idle = 0  # asks in a row that moved no card (the stalemate rule)
        if seed is not None and not _is_int(seed):
            raise RulesError(f"a seed must be a whole number, not {seed!r}")
        if deal is not None:
            hands, stock_top_first, dealer = _check_deal(rules, n, deal)
            self.seed = 0 if seed is None else seed
        else:
            if seed is None:
                seed = secrets.randbits(63)
            self.seed = seed
            rng = Rng(seed)
            drawn = rng.below(n)
            if dealer is None:
                dealer = drawn
            deck = _shuffled_deck(rng, t.D)
            dealt = t.D - t.stock
            # card i of the shuffled deck goes to seat (dealer + 1 + i) % n
            hands = [deck[(s - dealer - 1) % n : dealt : n] for s in range(n)]
            stock_top_first = deck[dealt:]
        self.dealer = dealer
        self._stock = stock_top_first[::-1]  # pop() takes the top card
        held = self._held
        counts = self._counts
        fams = self._fams
        card_fam = t.card_fam
        card_bit = t.card_bit
        for s, cards in enumerate(hands):
            hs = held[s]
            for c in cards:
                hs[card_fam[c]] |= card_bit[c]
            counts[s] = len(cards)
            fams[s] = [f for f, h in enumerate(hs) if h]
            if cards:
                self._nonempty += 1
        # families complete straight from the deal (no laid events: the deal event lists them)
        full = t.full
        for s in range(n):
            hs = held[s]
            if full in hs:
                for f in range(t.F):
                    if hs[f] == full:
                        self._lay(s, f)
        deal_event: Event = {
            "kind": "deal",
            "counts": list(counts),
            "laid": [[t.family_names[f] for f in laid] for laid in self._laid_by],
            "first": None,
        }
        events: list[Event] = [deal_event]
        # with a stock the first seat may draw (and lay) before any decision: keep the dealt hands
        self._dealt = [self.hand(s) for s in range(n)] if self._stock else None
        self._pass_to(dealer if t.first_dealer else (dealer + 1) % n, events)
        deal_event["first"] = self._turn if self._turn >= 0 else None
        self._initial = events

    # ------------------------------------------------------------------ interface

    @property
    def rules(self) -> AskRules:
        return self._rules

    def clone(self) -> AskGame:
        """An independent copy of this game (for search and tests)."""
        g = object.__new__(AskGame)
        g._rules = self._rules
        g._t = self._t
        g.n = self.n
        g.seed = self.seed
        g.dealer = self.dealer
        g._held = [list(h) for h in self._held]
        g._counts = list(self._counts)
        g._fams = [list(x) for x in self._fams]
        g._nonempty = self._nonempty
        g._owner = list(self._owner)
        g._laid_by = [list(x) for x in self._laid_by]
        g._nlaid = self._nlaid
        g._laid_json = self._laid_json
        g._stock = list(self._stock)
        g._turn = self._turn
        g._idle = self._idle
        g._initial = self._initial
        g._dealt = self._dealt
        return g

    def fallback_rng(self) -> Rng:
        """The fallback player's generator: ``Rng(derive(seed, "fallback"))``."""
        return Rng(derive(self.seed, "fallback"))

    def initial_events(self) -> list[Event]:
        """The ``deal`` event, then any draws/lays before the first decision (copies)."""
        return [
            {k: ([list(x) for x in v] if k == "laid" else list(v)) if isinstance(v, list) else v for k, v in e.items()}
            for e in self._initial
        ]

    def pending(self) -> tuple[int, ...]:
        return (self._turn,) if self._turn >= 0 else ()

    @property
    def terminal(self) -> bool:
        return self._turn < 0

    @property
    def turn(self) -> int | None:
        """The seat to ask now, ``None`` once the game is over."""
        return self._turn if self._turn >= 0 else None

    @property
    def end_reason(self) -> str:
        """``"stalled"`` once the stalemate rule ended the hand (``idle``
        reached ``rules.stall`` with families still in play), else
        ``"complete"``."""
        return "stalled" if self._turn < 0 and self._nlaid < self._t.F else "complete"

    @property
    def idle(self) -> int:
        """Asks in a row that moved no card so far (misses and rude asks; a hit
        or a draw from the stock resets it). The hand ends when it reaches
        ``rules.stall``."""
        return self._idle

    def decision(self) -> str:
        return "ask"

    def hand(self, seat: int) -> list[str]:
        held_names = self._t.held_names
        out: list[str] = []
        for f, h in enumerate(self._held[seat]):
            if h:
                out += held_names[f][h]
        return out

    def dealt_hand(self, seat: int) -> list[str]:
        dealt = self._dealt
        return list(dealt[seat]) if dealt is not None else self.hand(seat)

    def counts(self) -> list[int]:
        """Cards held per seat (public)."""
        return list(self._counts)

    def laid(self) -> list[list[str]]:
        """Family names laid per seat, in the order laid (public)."""
        names = self._t.family_names
        return [[names[f] for f in fams] for fams in self._laid_by]

    def stock_size(self) -> int:
        return len(self._stock)

    def scores(self) -> list[int]:
        points = self._rules.family_points
        return [len(fams) * points for fams in self._laid_by]

    def view(self, seat: int) -> dict[str, Any]:
        """``seat``'s private view: ``hand``, ``counts``, ``laid``, ``options``
        and ``targets`` (the last two empty unless ``seat`` is to ask)."""
        if seat == self._turn:
            options = self._options(seat)
            targets = self._targets(seat)
        else:
            options, targets = [], []
        return {
            "hand": self.hand(seat),
            "counts": list(self._counts),
            "laid": self.laid(),
            "options": options,
            "targets": targets,
        }

    def turn_fields(self, seat: int) -> bytes:
        """``view(seat)`` already encoded: exactly ``msgspec.json.encode(view(seat))[1:-1]``
        (the object's members without the braces), built from pre-encoded
        per-family fragments instead of lists of names - the runtime's turn
        line is made of it. Pure; raises ``IndexError`` for a seat outside the table."""
        t = self._t
        hs = self._held[seat]
        fams = self._fams[seat]
        counts = self._counts
        laid = self._laid_json
        if laid[0] != self._nlaid:  # laid families change rarely: re-encode only then
            fj = t.family_json
            laid = self._laid_json = (
                self._nlaid,
                b",".join([b"[" + b",".join([fj[f] for f in fs]) + b"]" for fs in self._laid_by]),
            )
        hj = t.held_json
        if seat == self._turn:
            hand = []
            opts = []
            if t.card_mode:
                mj = t.missing_json
                for f in fams:
                    h = hs[f]
                    hand.append(hj[f][h])
                    opts.append(mj[f][h])  # never empty: a complete family is laid at once
            else:
                fj = t.family_json
                for f in fams:
                    hand.append(hj[f][hs[f]])
                    opts.append(fj[f])
            n = self.n
            if self._nonempty == n:
                targets = t.others[n, seat]
            else:
                ints = t.ints
                targets = b",".join([ints[s] for s in range(n) if s != seat and counts[s]])
            return b'"hand":[%b],"counts":[%b],"laid":[%b],"options":[%b],"targets":[%b]' % (
                b",".join(hand),
                b",".join(map(t.ints.__getitem__, counts)),
                laid[1],
                b",".join(opts),
                targets,
            )
        return b'"hand":[%b],"counts":[%b],"laid":[%b],"options":[],"targets":[]' % (
            b",".join([hj[f][hs[f]] for f in fams]),
            b",".join(map(t.ints.__getitem__, counts)),
            laid[1],
        )

    def _targets(self, seat: int) -> list[int]:
        counts = self._counts
        return [s for s in range(self.n) if s != seat and counts[s]]

    def _options(self, seat: int) -> list[str]:
        t = self._t
        hs = self._held[seat]
        if not t.card_mode:
            return [t.family_names[f] for f in range(t.F) if hs[f]]
        names = t.card_names
        M = t.M
        out: list[str] = []
        for f in range(t.F):
            h = hs[f]
            if h:
                base = f * M
                out.extend(names[base + m] for m in t.missing[h])
        return out

    def legal_actions(self, seat: int) -> list[Ask]:
        """Every legal ask of ``seat``, ordered by target, then option (canonical
        order), then ``please`` (True before False when politeness applies).
        Empty if ``seat`` is not to ask."""
        if seat != self._turn or self._turn < 0:
            return []
        t = self._t
        pls = _PLEASE_BOTH if t.please else _PLEASE_ONE
        opts = self._options(seat)
        if t.card_mode:
            return [Ask(tg, c, None, p) for tg in self._targets(seat) for c in opts for p in pls]
        return [Ask(tg, None, fam, p) for tg in self._targets(seat) for fam in opts for p in pls]

    def random_action(self, seat: int, rng: Rng) -> Ask:
        """A uniformly random legal ask of ``seat``: one ``rng.below(count)``
        draw decoded into ``legal_actions(seat)[index]`` without listing them.

        Raises :class:`IllegalAction` if ``seat`` is not to ask.
        """
        if seat != self._turn or seat < 0:
            raise IllegalAction(self._not_your_turn(seat))
        t = self._t
        counts = self._counts
        fams = self._fams[seat]
        card_mode = t.card_mode
        if card_mode:
            nopts = t.M * len(fams) - counts[seat]
        else:
            nopts = len(fams)
        total = (self._nonempty - 1) * nopts
        if t.please:
            total *= 2
        if type(rng) is Rng and 1 < total < _NLIMITS:
            # rng.below(total): rng.draw with the limit from the table, inlined (see rng.draw)
            limit = _LIMITS[total]
            state = rng.state
            while True:
                state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
                z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
                z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
                z ^= z >> 31
                if z < limit:
                    break
            rng.state = state
            r = z % total
        else:
            r = rng.below(total)
        if t.please:
            please = 1 - (r & 1)
            r >>= 1
        else:
            please = 0
        ti = r // nopts
        o = r - ti * nopts
        n = self.n
        if self._nonempty == n:  # every seat holds cards (the common case)
            target = ti + (ti >= seat)
        else:
            target = 0
            for target in range(n):
                if target != seat and counts[target]:
                    if not ti:
                        break
                    ti -= 1
        if card_mode:
            hs = self._held[seat]
            nmiss = t.nmiss
            for f in fams:
                h = hs[f]
                k = nmiss[h]
                if o < k:
                    ci = f * t.M + t.missing[h][o]
                    key = ((target * t.D) + ci) * 2 + please
                    a: Ask | None = t.ask_cache[key]
                    if a is None:
                        a = t.ask_cache[key] = Ask(target, t.card_names[ci], None, bool(please))
                    return a
                o -= k
            raise AssertionError("option index out of range")  # unreachable: nopts counts these options
        f = fams[o]
        key = ((target * t.F) + f) * 2 + please
        a = t.ask_cache[key]
        if a is None:
            a = t.ask_cache[key] = Ask(target, None, t.family_names[f], bool(please))
        return a

    def apply(self, seat: int, action: Any) -> list[Event]:
        """Apply ``seat``'s ask: the ``ask`` event (its ``next``: the seat to ask after all, ``None`` once
        the game is over, see :attr:`end_reason`) and the ``laid``/``draw`` events it caused, in order.
        :class:`IllegalAction` (changing nothing), with a reason a bot author understands, if not legal."""
        if seat != self._turn or seat < 0:
            raise IllegalAction(self._not_your_turn(seat))
        try:
            target = action.target
            card = action.card
            family = action.family
            please = action.please
        except AttributeError:
            target, card, family, please = _ask_fields(action)
        counts = self._counts
        n = self.n
        if type(target) is not int or not 0 <= target < n or target == seat or not counts[target]:
            raise IllegalAction(_bad_target(seat, target, n))
        if please is not True and please is not False:
            please = _please_or_false(please)
        t = self._t
        held = self._held
        mine = held[seat]
        card_mode = t.card_mode
        if card_mode:
            name, other = card, family
        else:
            name, other = family, card
        found = t.asked.get(name) if type(name) is str and other is None else None
        if found is None:
            raise IllegalAction(_bad_ask(card_mode, name, other))
        f, want = found
        h = mine[f]
        if not h:
            raise IllegalAction(self._not_held(f))
        if card_mode and h & want:
            raise IllegalAction(f"you hold {card} yourself")
        # legal from here on: change the state
        rude = t.please and not please
        moved: Any = ()
        if rude:  # the turn passes to the target, nothing moves
            nxt = target
        else:
            theirs = held[target]
            th = theirs[f]
            take = th & want
            if take:  # hit: the named card (card mode) or every card of the family moves
                self._idle = 0
                moved = t.held_names[f][take]
                k = len(moved)
                theirs[f] = th = th ^ take
                counts[target] = c = counts[target] - k
                if not th:
                    self._fams[target].remove(f)
                    if not c:
                        self._nonempty -= 1
                mine[f] |= take
                counts[seat] += k
                nxt = seat  # asks again (once a family it lays leaves it cards: below)
            else:
                nxt = (seat + 1) % n if t.miss_next else target
        # two literal dicts (constant keys: the fastest to build), one line each way (fmt: off)
        # fmt: off
        if card_mode:
            event: Event = {"kind": "ask", "seat": seat, "target": target, "card": card, "please": please,
                            "cards": list(moved) if moved else [], "rude": rude, "next": None}
        else:
            event = {"kind": "ask", "seat": seat, "target": target, "family": family, "please": please,
                     "cards": list(moved) if moved else [], "rude": rude, "next": None}
        # fmt: on
        events = [event]
        if moved:
            if mine[f] == t.full:
                self._lay(seat, f)
                events.append({"kind": "laid", "seat": seat, "family": t.family_names[f]})
                if not counts[seat]:
                    nxt = (seat + 1) % n
        elif self._stock and not rude:  # a miss with a stock: a drawn card counts as moved, idle starts again
            self._draw(seat, events)
        else:  # rude, or a miss without a stock: nothing moved
            self._idle += 1
            if self._idle >= t.stall:
                self._turn = -1
                return events
        if counts[nxt] and self._nonempty >= 2 and self._nlaid < t.F:  # the common case
            self._turn = event["next"] = nxt
        else:
            self._pass_to(nxt, events)
            event["next"] = self._turn if self._turn >= 0 else None
        return events

    # ------------------------------------------------------------------ internals

    def _not_your_turn(self, seat: int) -> str:
        if self._turn < 0:
            return "the game is over"
        return f"it is not your turn: seat {self._turn} is to ask"

    def _not_held(self, f: int) -> str:
        """Why the asker may not ask for family ``f``: it holds none of it."""
        name = self._t.family_names[f]
        if self._owner[f] >= 0:
            return f"family {name} is already laid"
        return f"you hold no card of family {name}, so you may not ask for it"

    def _lay(self, seat: int, f: int) -> None:
        """Lay ``seat``'s complete family ``f`` (it holds all members)."""
        t = self._t
        self._held[seat][f] = 0
        c = self._counts[seat] - t.M
        self._counts[seat] = c
        self._fams[seat].remove(f)
        if not c:
            self._nonempty -= 1
        self._owner[f] = seat
        self._laid_by[seat].append(f)
        self._nlaid += 1

    def _draw(self, seat: int, events: list[Event]) -> None:
        """``seat`` draws the top stock card (and lays a family it completes)."""
        t = self._t
        self._idle = 0
        ci = self._stock.pop()
        f = t.card_fam[ci]
        hs = self._held[seat]
        h = hs[f]
        if not h:
            insort(self._fams[seat], f)
        c = self._counts[seat]
        if not c:
            self._nonempty += 1
        self._counts[seat] = c + 1
        h |= t.card_bit[ci]
        hs[f] = h
        events.append({"kind": "draw", "seat": seat, "card": t.card_names[ci]})
        if h == t.full:
            self._lay(seat, f)
            events.append({"kind": "laid", "seat": seat, "family": t.family_names[f]})

    def _pass_to(self, x: int, events: list[Event]) -> None:
        """Give the turn to seat ``x`` by the rules: an empty hand draws if the
        stock has cards, else is passed over clockwise; a seat that is the only
        one holding cards draws instead of asking. Sets ``_turn`` (-1 at the end)."""
        counts = self._counts
        F = self._t.F
        n = self.n
        while True:
            if self._nlaid == F:
                self._turn = -1
                return
            if counts[x]:
                if self._nonempty >= 2:
                    self._turn = x
                    return
                # x holds every card still in play outside the stock: it draws
                if not self._stock:  # pragma: no cover - impossible: x would hold complete families only
                    raise AssertionError("cards left in one hand only, with an empty stock")
                self._draw(x, events)
            elif self._stock:
                self._draw(x, events)
            else:
                x = (x + 1) % n


_NLIMITS = 4096
_LIMITS: list[int] = [0, 0] + [((1 << 64) // k) * k for k in range(2, _NLIMITS)]


def _ask_fields(action: Any) -> tuple[Any, Any, Any, Any]:
    """``(target, card, family, please)`` of an action that lacks some of them."""
    return (
        getattr(action, "target", None),
        getattr(action, "card", None),
        getattr(action, "family", None),
        getattr(action, "please", False),
    )


def _bad_target(seat: int, target: Any, n: int) -> str:
    """Why ``target`` cannot be asked by ``seat`` (called only when it cannot)."""
    if type(target) is not int:
        return f"'target' must be a seat number (0..{n - 1}), not {target!r}"
    if not 0 <= target < n:
        return f"there is no seat {target}: seats are 0..{n - 1}"
    if target == seat:
        return "you cannot ask yourself: ask another seat that holds cards"
    return f"seat {target} has no cards"


def _please_or_false(please: Any) -> bool:
    """A ``please`` that is neither true nor false: ``None`` counts as false, anything else is illegal."""
    if please is not None:
        raise IllegalAction(f"'please' must be true or false, not {please!r}")
    return False


def _bad_ask(card_mode: bool, name: Any, other: Any) -> str:
    """Why an ask naming ``name`` (the field of this mode: ``card`` or ``family``)
    and ``other`` (the other field) is refused: nothing, the wrong field, both, or
    an unknown name."""
    word, other_word, kind, eg = (
        ("card", "family", "exact cards", '"A3"') if card_mode else ("family", "card", "whole families", '"Q"')
    )
    if name is None:
        if other is not None:  # (the card mode's text gives an example)
            example = f" (e.g. {eg})" if card_mode else ""
            return f"this variant asks for {kind}: send '{word}'{example}, not '{other_word}'"
        return f"your ask names no {word}: send '{word}' (e.g. {eg})"
    if other is not None:
        return f"this variant asks for {kind}: send only '{word}', not '{other_word}'"
    return f"unknown {word} {name!r}"


def _shuffled_deck(rng: Rng, size: int) -> list[int]:
    """``list(range(size))`` shuffled exactly as ``rng.shuffle`` does (Fisher-Yates
    from the end with ``rng.below``), on the plain state with the limits table, for speed: deals are a large part
    of a short game. ``tests/rules/test_ask.py`` checks it against ``Rng.shuffle``."""
    if size >= len(_LIMITS):
        deck = list(range(size))
        rng.shuffle(deck)
        return deck
    deck = list(range(size))
    state = rng.state
    limits = _LIMITS
    for i in range(size - 1, 0, -1):
        k = i + 1
        limit = limits[k]
        while True:  # rng.draw(state, limit), inlined (see rng.draw)
            state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
            z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
            z ^= z >> 31
            if z < limit:
                break
        j = z % k
        deck[i], deck[j] = deck[j], deck[i]
    rng.state = state
    return deck


def _check_deal(rules: AskRules, n: int, deal: Any) -> tuple[list[list[int]], list[int], int]:
    """Validate an explicit deal; return (hands as card ints, stock top first, dealer)."""
    t = _tables(rules)
    if not isinstance(deal, Deal):
        deal = Deal.from_json(deal)
    if not _is_int(deal.dealer) or not 0 <= deal.dealer < n:
        raise RulesError(f"deal: dealer {deal.dealer!r} is not a seat of this {n}-seat table (0..{n - 1})")
    if len(deal.hands) != n:
        raise RulesError(f"deal: {len(deal.hands)} hands given for {n} seats; give one hand per seat")
    if len(deal.stock) != rules.stock:
        raise RulesError(
            f"deal: {rules.name} keeps {rules.stock} card(s) in the stock, the deal's stock has {len(deal.stock)}"
        )
    seen: dict[str, str] = {}
    hands: list[list[int]] = []
    for where, cards in [*((f"seat {s}'s hand", h) for s, h in enumerate(deal.hands)), ("the stock", deal.stock)]:
        out: list[int] = []
        for c in cards:
            ci = t.card_index.get(c) if isinstance(c, str) else None
            if ci is None:
                raise RulesError(
                    f"deal: unknown card {c!r} in {where}; {rules.name} cards look like {t.card_names[0]!r}"
                )
            if c in seen:
                raise RulesError(f"deal: card {c} appears twice ({seen[c]} and {where})")
            seen[c] = where
            out.append(ci)
        hands.append(out)
    if len(seen) != t.D:
        missing = [c for c in t.card_names if c not in seen]
        raise RulesError(
            f"deal: {len(missing)} card(s) missing: {', '.join(missing[:12])}{' ...' if len(missing) > 12 else ''}"
        )
    stock = hands.pop()
    return hands, stock, deal.dealer
