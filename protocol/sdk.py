"""The Python bot SDK for card-referee (protocol v1).

Write a bot in a few lines::

    from protocol.sdk import Bot, Ask

    class MyBot(Bot):
        name = "MyBot"

        def ask(self, view):            # ask games: whom to ask for what
            return view.random_ask(self.rng)

        def play(self, view):           # chickens: which card to play
            return view.options[0]

        def take(self, view):           # chickens: which noble to take
            return view.options[-1]

    if __name__ == "__main__":
        MyBot().run()

What the SDK does for you:

* framing: one JSON object per line on stdout, flushed at once; lines from the
  referee are read from stdin;
* the handshake (``hello`` with protocol 1 and your bot's ``name``/``version``);
* the session loop: many games in one process (``start`` ... ``end``, again and
  again); it returns from :meth:`Bot.run` on ``bye`` or when stdin closes (EOF);
* turn ids: every reply echoes the id of the ``turn`` it answers, automatically;
* ``error`` messages from the referee are logged to stderr (and passed to
  :meth:`Bot.on_error`);
* ``print()`` is safe: while :meth:`Bot.run` is running, ``sys.stdout`` points
  at stderr, so debug prints never corrupt the protocol stream;
* state tracking: a :class:`GameView` follows every event (hand, counts, laid
  families, the public history) and is refreshed from every ``turn``.

Errors: if your ``ask``/``play``/``take`` raises an exception or returns
something unusable, the SDK prints the traceback to stderr and answers with a
random legal move instead, so one bug does not lose you the game (but fix it:
the log shows it). A line from the referee that is not JSON, or a message the
SDK cannot use, is logged to stderr and skipped. A referee ``hello`` with another protocol version is logged
and answered with ours (the referee then refuses the bot with a clear message).

Dependencies: the standard library only, and as little of it as will do (a bot's imports are paid
at every start). You may copy this single file next to your bot (``from sdk import Bot``).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterable

TYPE_CHECKING = False  # (what typing.TYPE_CHECKING is at run time; type checkers take it as True)
if TYPE_CHECKING:  # annotations only: importing typing costs a bot about 3 ms of CPU at every start
    from typing import Any, TextIO

# JSON starts with the standard json module (its C accelerator) and moves to msgspec's, when it is
# installed, as the second game of the process starts (:func:`_faster_json`, before that game's
# first turn is read): a bot pays for its imports at every start, and msgspec's import (about 20 ms
# of CPU, with typing_extensions, inspect, uuid and decimal) costs more than it saves on one game's
# few kilobytes, while a process that plays many games gains 2-4 us a line. A process that plays one
# game (per-game mode: ``end`` then ``bye``) never imports it. For the same reason traceback is
# imported only when there is one to print, and the two records are plain classes (dataclasses
# imports inspect).


def _json_loads(line: bytes) -> Any:
    return json.loads(line)


def _json_dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


_loads: Callable[[bytes], Any] = _json_loads
_dumps: Callable[[Any], bytes] = _json_dumps


def _faster_json() -> None:
    """From now on msgspec's JSON decoder and encoder, if msgspec can be imported (else nothing
    changes). Both read and write the same JSON as the json module."""
    global _loads, _dumps
    try:
        import msgspec
    except ImportError:
        return
    _loads = msgspec.json.Decoder().decode
    _dumps = msgspec.json.Encoder().encode


def _trace() -> str:
    """The exception being handled, as Python prints it."""
    import traceback

    return traceback.format_exc()


PROTOCOL_VERSION = 1

__all__ = ["Ask", "Bot", "GameView", "PROTOCOL_VERSION", "log"]


def log(*parts: Any) -> None:
    """Print a debug line to stderr (the referee keeps a bounded copy in the game log)."""
    print(*parts, file=sys.stderr, flush=True)


#: the games that do not speak the ask messages, by ``start.rules.game`` (the SDK's one table)
_STYLES = {"chickens": "chickens"}


class Ask:
    """An ask: ``Ask(target=2, card="A3")`` in card mode, ``Ask(target=2, family="Q")``
    in family mode. ``please`` defaults to True (the polite ask); it is only put on
    the wire when the variant has the politeness rule. ``please=False`` there is a
    legal but rude ask: nothing moves and the turn goes to the asked seat."""

    __slots__ = ("target", "card", "family", "please")
    target: int
    card: str | None
    family: str | None
    please: bool

    def __init__(self, target: int, card: str | None = None, family: str | None = None, please: bool = True) -> None:
        for name, value in zip(self.__slots__, (target, card, family, please), strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: an Ask is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: an Ask is frozen")

    def _key(self) -> tuple[Any, ...]:
        return (self.target, self.card, self.family, self.please)

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if type(other) is Ask else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Ask(target={self.target!r}, card={self.card!r}, family={self.family!r}, please={self.please!r})"


#: GameView's fields and their defaults (a list or dict default is a fresh one per view)
_VIEW_FIELDS: dict[str, Any] = {
    "game": "",
    "variant": "",
    "rules": dict,
    "seat": 0,
    "seats": list,
    "dealer": 0,
    "clock": dict,
    "hand": list,
    "counts": list,
    "laid": list,
    "history": list,
    "decide": None,
    "turn_id": None,
    "options": None,
    "targets": None,
    "centre": list,
    "scores": list,
    "round": None,
    "left_ms": None,
    "result": None,
}


class GameView:
    """Everything your bot knows about the current game, kept up to date by the SDK.

    Set at ``start``: ``game`` (id), ``variant`` (name), ``rules`` (the full rule
    parameters, a dict), ``seat`` (yours), ``seats`` (bot names per seat), ``n``
    (number of seats), ``dealer``, ``clock``.

    Kept current from events and refreshed from each ``turn``: ``hand`` (your
    cards), ``counts`` (cards per seat), ``laid`` (per seat: families laid, or in
    chickens the nobles taken this round), ``history`` (every event of this game,
    as the dicts the referee sent, in order; ``faults`` are in there too).

    Set by each ``turn``: ``decide`` (``"ask"``, ``"play"`` or ``"take"``),
    ``turn_id``, ``options`` (what you may ask for / play / take now),
    ``targets`` (seats you may ask), ``left_ms`` (clock), and for chickens
    ``centre``, ``scores``, ``round``.

    History helpers: :meth:`events`, :attr:`asks`, :attr:`misses`, :attr:`moves`
    (``(card, from, to)``), :attr:`draws`, :attr:`reveals`, :attr:`takes`.

    Rules helpers: :meth:`family_of`, :meth:`cards_of`, :meth:`legal_asks`,
    :meth:`random_ask`, :attr:`ask_mode`, :attr:`families`, :attr:`members`.
    """

    game: str
    variant: str
    rules: dict[str, Any]
    seat: int
    seats: list[str]
    dealer: int
    clock: dict[str, Any]
    hand: list[str]
    counts: list[int]
    laid: list[list[str]]
    history: list[dict[str, Any]]
    decide: str | None
    turn_id: int | None
    options: list[str] | None
    targets: list[int] | None
    centre: list[str]
    scores: list[int]
    round: int | None
    left_ms: int | None
    #: the ``end`` message once the game is over (scores, ranks, reason: complete, stalled or aborted)
    result: dict[str, Any] | None

    def __init__(self, **fields: Any) -> None:
        unknown = fields.keys() - _VIEW_FIELDS.keys()
        if unknown:
            raise TypeError(f"GameView() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
        for name, default in _VIEW_FIELDS.items():
            setattr(self, name, fields[name] if name in fields else default() if callable(default) else default)
        self._family: dict[str, str] = {}

    def __repr__(self) -> str:
        return "GameView(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in _VIEW_FIELDS) + ")"

    def __eq__(self, other: object) -> bool:
        if type(other) is not GameView:
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in _VIEW_FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq

    # -- rules helpers ------------------------------------------------------

    @property
    def n(self) -> int:
        """Number of seats."""
        return len(self.seats)

    @property
    def kind(self) -> str:
        """The messages the game speaks: ``"chickens"`` (play and take) for chickens, ``"ask"``
        (asks; deal, ask, draw and laid events) for every other game. The referee registers each
        game with its style; tests/rules/test_registry.py checks this against every registered
        game, so a new game needs no change here."""
        return _STYLES.get(str(self.rules.get("game")), "ask")

    @property
    def families(self) -> list[str]:
        """Family names in deck order (ask games)."""
        return list(self.rules.get("families", []))

    @property
    def members(self) -> list[str]:
        """Member names in deck order (ask games)."""
        return list(self.rules.get("members", []))

    @property
    def ask_mode(self) -> str:
        """``"card"`` (ask for one exact card) or ``"family"`` (ask for a whole family)."""
        return str(self.rules.get("ask", "card"))

    @property
    def polite(self) -> bool:
        """True when the variant has the politeness rule (asks must say please)."""
        return bool(self.rules.get("please", False))

    def deck(self) -> list[str]:
        """Every card of the variant in canonical order (ask games)."""
        return [f + m for f in self.families for m in self.members]

    def family_of(self, card: str) -> str:
        """The family of a card (``"A3" -> "A"``, ``"10S" -> "10"``).

        Raises ``KeyError`` for a card that is not in the deck.
        """
        if not self._family:
            self._family = {f + m: f for f in self.families for m in self.members}
        return self._family[card]

    def cards_of(self, family: str) -> list[str]:
        """The cards of a family, in member order (``"A" -> ["A1","A2","A3","A4"]``)."""
        return [family + m for m in self.members]

    def laid_families(self) -> set[str]:
        """Every family laid by any seat so far."""
        return {f for seat_laid in self.laid for f in seat_laid}

    def my_families(self) -> list[str]:
        """Families of which you hold at least one card, in deck order."""
        held = {self.family_of(c) for c in self.hand}
        return [f for f in self.families if f in held]

    # -- the public history -----------------------------------------------------

    def events(self, kind: str) -> list[dict[str, Any]]:
        """Every event of one kind so far (``"ask"``, ``"laid"``, ``"draw"``, ``"reveal"``, ...)."""
        return [ev for ev in self.history if ev.get("kind") == kind]

    @property
    def asks(self) -> list[dict[str, Any]]:
        """Every ask so far: ``seat`` asked ``target`` for ``card`` (or ``family``); ``cards`` moved."""
        return self.events("ask")

    @property
    def misses(self) -> list[dict[str, Any]]:
        """Polite asks that moved nothing: the target lacked that card (family mode: that family)."""
        return [ev for ev in self.events("ask") if not ev.get("cards") and not ev.get("rude")]

    @property
    def moves(self) -> list[tuple[str, int, int]]:
        """Every card that moved by an ask, as ``(card, from_seat, to_seat)``."""
        return [(c, ev["target"], ev["seat"]) for ev in self.events("ask") for c in ev.get("cards") or []]

    @property
    def draws(self) -> list[dict[str, Any]]:
        """Every draw from the stock (``seat``; ``card`` only in your own draws)."""
        return self.events("draw")

    @property
    def reveals(self) -> list[dict[str, Any]]:
        """Chickens: every reveal (``plays`` per seat, ``centre``)."""
        return self.events("reveal")

    @property
    def takes(self) -> list[dict[str, Any]]:
        """Chickens: every take (``seat``, ``card``, ``centre``)."""
        return self.events("take")

    # -- legal asks ----------------------------------------------------------

    def ask_targets(self) -> list[int]:
        """Seats you may ask now: ``turn.targets`` if the referee sent it, else
        every other seat that holds cards."""
        if self.targets is not None:
            return list(self.targets)
        return [s for s in range(self.n) if s != self.seat and self.counts[s] > 0]

    def ask_options(self) -> list[str]:
        """What you may ask for now: cards (card mode) or families (family mode).

        ``turn.options`` if the referee sent it; otherwise computed from the rules
        and your hand (card mode: every card of a family you hold that you do not
        hold yourself; family mode: every family you hold).
        """
        if self.options is not None:
            return list(self.options)
        return self.compute_ask_options()

    def compute_ask_options(self) -> list[str]:
        """:meth:`ask_options` computed from the rules and hand alone."""
        fams = self.my_families()
        if self.ask_mode == "family":
            return fams
        mine = set(self.hand)
        return [c for f in fams for c in self.cards_of(f) if c not in mine]

    def legal_asks(self) -> list[Ask]:
        """Every legal (polite) ask now."""
        if self.ask_mode == "family":
            return [Ask(target=t, family=o) for t in self.ask_targets() for o in self.ask_options()]
        return [Ask(target=t, card=o) for t in self.ask_targets() for o in self.ask_options()]

    def random_ask(self, rng: random.Random | None = None) -> Ask:
        """A uniformly random legal (polite) ask. Raises ``IndexError`` if there is none."""
        pick: random.Random | Any = rng or random  # the module's shared generator when none is given
        targets = self.ask_targets()
        options = self.ask_options()
        if not targets or not options:
            raise IndexError("no legal ask: no target seat or nothing to ask for")
        t = pick.choice(targets)
        o = pick.choice(options)
        return Ask(target=t, family=o) if self.ask_mode == "family" else Ask(target=t, card=o)

    def play_options(self) -> list[str]:
        """Chickens: what you may play or take now (``turn.options``; else your
        hand for ``play`` and the nobles in the centre for ``take``)."""
        if self.options is not None:
            return list(self.options)
        source = self.hand if self.decide == "play" else self.centre
        return list(dict.fromkeys(source))

    # -- state tracking (called by the SDK) -----------------------------------

    def _apply_event(self, ev: dict[str, Any]) -> None:
        """Follow one event. Unknown kinds and fields are kept in ``history`` only."""
        self.history.append(ev)
        kind = ev.get("kind")
        try:
            if kind == "deal":
                if ev.get("counts") is not None:
                    self.counts = list(ev["counts"])
                if ev.get("laid") is not None:
                    self.laid = [list(x) for x in ev["laid"]]
                    for f in self.laid[self.seat] if self.seat < len(self.laid) else []:
                        self._drop_family(f)
            elif kind == "ask":
                cards = ev.get("cards") or []
                s, t = ev["seat"], ev["target"]
                if cards:
                    self.counts[s] += len(cards)
                    self.counts[t] -= len(cards)
                    if t == self.seat:
                        self.hand = [c for c in self.hand if c not in cards]
                    if s == self.seat:
                        self.hand = self._sorted(self.hand + [c for c in cards if c not in self.hand])
            elif kind == "laid" and self.kind == "ask":
                s, f = ev["seat"], ev["family"]
                self.laid[s].append(f)
                self.counts[s] -= len(self.members)
                if s == self.seat:
                    self._drop_family(f)
            elif kind == "draw":
                s = ev["seat"]
                self.counts[s] += 1
                if s == self.seat and ev.get("card") and ev["card"] not in self.hand:
                    # (the start hand may already hold a card drawn before the first decision)
                    self.hand = self._sorted(self.hand + [ev["card"]])
            elif kind == "reveal":
                self.centre = list(ev.get("centre") or [])
                plays = ev.get("plays") or []
                for s, _card in enumerate(plays):
                    if s < len(self.counts):
                        self.counts[s] -= 1
                if self.seat < len(plays) and plays[self.seat] in self.hand:
                    self.hand.remove(plays[self.seat])
            elif kind == "take":
                self.centre = list(ev.get("centre") or [])
                s = ev["seat"]
                self.laid[s].append(ev["card"])
                values = self.rules.get("cards") or {}
                if isinstance(values, dict) and s < len(self.scores):
                    self.scores[s] += int(values.get(ev["card"], 0))
            elif kind == "round":
                # a chickens round begins: every seat holds every card again
                if ev.get("scores") is not None:
                    self.scores = list(ev["scores"])
                self.round = ev.get("round", self.round)
                cards = list(self.rules.get("cards") or [])
                if cards:
                    self.hand = cards
                    self.counts = [len(cards)] * self.n
                self.laid = [[] for _ in range(self.n)]
                self.centre = []
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            # the next turn carries the authoritative state; keep going
            log(f"sdk: could not follow event {ev!r}: {exc!r}")

    def _drop_family(self, family: str) -> None:
        self.hand = [c for c in self.hand if self._family_or_none(c) != family]

    def _family_or_none(self, card: str) -> str | None:
        try:
            return self.family_of(card)
        except KeyError:
            return None

    def _sorted(self, cards: Iterable[str]) -> list[str]:
        order = {c: i for i, c in enumerate(self.deck())}
        return sorted(cards, key=lambda c: order.get(c, len(order)))

    def _apply_turn(self, msg: dict[str, Any]) -> None:
        self.decide = msg.get("decide")
        self.turn_id = msg.get("id")
        if msg.get("hand") is not None:
            self.hand = list(msg["hand"])
        if msg.get("counts") is not None:
            self.counts = list(msg["counts"])
        if msg.get("laid") is not None:
            self.laid = [list(x) for x in msg["laid"]]
        self.options = list(msg["options"]) if msg.get("options") is not None else None
        self.targets = list(msg["targets"]) if msg.get("targets") is not None else None
        if msg.get("centre") is not None:
            self.centre = list(msg["centre"])
        if msg.get("scores") is not None:
            self.scores = list(msg["scores"])
        if msg.get("round") is not None:
            self.round = msg["round"]
        clock = msg.get("clock") or {}
        self.left_ms = clock.get("left_ms") if isinstance(clock, dict) else None


class Bot:
    """Subclass this, set ``name`` (and ``version``), implement the decisions.

    Decisions (called with the current :class:`GameView`):

    * :meth:`ask` (ask games) returns an :class:`Ask`;
    * :meth:`play` (chickens) returns a card name from ``view.options``;
    * :meth:`take` (chickens) returns a noble name from ``view.options``.

    Optional hooks: :meth:`on_start`, :meth:`on_event`, :meth:`on_end`,
    :meth:`on_error`. ``self.view`` is the current game's view (``None``
    between games); ``self.rng`` is a :class:`random.Random` you may use
    (seeded with ``seed`` if you pass one to the constructor).
    """

    name: str = "PythonBot"
    version: str | None = None
    _started = False  # a game has started in this process (a class default: subclasses may skip __init__)

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)
        self.view: GameView | None = None
        self._out: TextIO | Any = None

    # -- decisions: override these -------------------------------------------

    def ask(self, view: GameView) -> Ask:
        """Return your ask. Default: a random legal ask."""
        return view.random_ask(self.rng)

    def play(self, view: GameView) -> str:
        """Return the card to play (chickens). Default: a random option."""
        return self.rng.choice(view.play_options())

    def take(self, view: GameView) -> str:
        """Return the noble to take (chickens). Default: a random option."""
        return self.rng.choice(view.play_options())

    # -- hooks ----------------------------------------------------------------

    def on_start(self, view: GameView) -> None:
        """A new game begins (``view`` holds rules, seat, seats and your hand)."""

    def on_event(self, view: GameView, event: dict[str, Any]) -> None:
        """An event arrived (already applied to ``view`` and appended to ``view.history``)."""

    def on_end(self, view: GameView, result: dict[str, Any]) -> None:
        """The game ended; ``result`` is the ``end`` message (scores, ranks, reason).

        ``result["reason"]`` is ``"complete"``, ``"stalled"`` (an ask game ended by
        the stalemate rule: ``rules["stall"]`` asks in a row moved no card; scored
        as it stands, a result like any other) or ``"aborted"`` (no result)."""

    def on_error(self, message: dict[str, Any]) -> None:
        """The referee reported a fault of yours (already logged to stderr)."""

    # -- the session loop -------------------------------------------------------

    def run(self, stdin: Any = None, stdout: Any = None) -> int:
        """Play until ``bye`` or end of input; return 0.

        Reads protocol lines from ``stdin`` (default: the process's stdin) and
        writes replies to ``stdout`` (default: the process's stdout). While it
        runs, ``sys.stdout`` is redirected to stderr so that ``print()`` in your
        code cannot corrupt the protocol. A KeyboardInterrupt ends the loop.
        """
        inp = stdin if stdin is not None else sys.stdin.buffer
        out = stdout if stdout is not None else sys.stdout.buffer
        saved = sys.stdout
        sys.stdout = sys.stderr
        self._out = out
        try:
            while True:
                line = inp.readline()
                if not line:
                    return 0  # EOF: the referee is gone
                if isinstance(line, str):
                    line = line.encode()
                if not line.strip():
                    continue
                try:
                    msg = _loads(line)
                except Exception as exc:
                    log(f"sdk: ignoring a line that is not JSON: {line[:200]!r} ({exc})")
                    continue
                if not isinstance(msg, dict):
                    log(f"sdk: ignoring a line that is not a JSON object: {line[:200]!r}")
                    continue
                try:
                    if self._handle(msg) is False:
                        return 0
                except Exception:  # a message the SDK cannot use: say so, keep going
                    log(f"sdk: could not handle {line[:200]!r}:\n{_trace()}")
        except KeyboardInterrupt:
            return 0
        finally:
            sys.stdout = saved

    def _send(self, obj: dict[str, Any]) -> None:
        data = _dumps(obj) + b"\n"
        out: Any = self._out  # a binary or a text stream
        try:
            out.write(data)
        except TypeError:  # a text stream
            out.write(data.decode())
        out.flush()

    def _handle(self, msg: dict[str, Any]) -> bool:
        """Handle one referee message; False means stop (``bye``)."""
        kind = msg.get("type")
        if kind == "hello":
            if msg.get("protocol") != PROTOCOL_VERSION:
                log(f"sdk: the referee speaks protocol {msg.get('protocol')}, this SDK speaks {PROTOCOL_VERSION}")
            reply: dict[str, Any] = {"type": "hello", "protocol": PROTOCOL_VERSION, "name": self.name}
            if self.version is not None:
                reply["version"] = str(self.version)
            self._send(reply)
        elif kind == "start":
            if _loads is _json_loads and self._started:  # a second game: this process plays many
                _faster_json()
            self._started = True
            self.view = GameView(
                game=msg.get("game", ""),
                variant=msg.get("variant", ""),
                rules=dict(msg.get("rules") or {}),
                seat=int(msg.get("seat", 0)),
                seats=list(msg.get("seats") or []),
                dealer=int(msg.get("dealer", 0)),
                clock=dict(msg.get("clock") or {}),
                hand=list(msg.get("hand") or []),
            )
            n = len(self.view.seats)
            self.view.counts = [0] * n
            self.view.laid = [[] for _ in range(n)]
            self.view.scores = [0] * n
            self._call(self.on_start, self.view)
        elif kind == "event":
            if self.view is not None and msg.get("game") in (None, self.view.game):
                self.view._apply_event(msg)
                self._call(self.on_event, self.view, msg)
        elif kind == "turn":
            self._answer(msg)
        elif kind == "end":
            if self.view is not None:
                self.view.result = msg
                self._call(self.on_end, self.view, msg)
            self.view = None
        elif kind == "error":
            log(f"referee error ({msg.get('fault')}, turn id {msg.get('id')}): {msg.get('detail')}")
            self._call(self.on_error, msg)
        elif kind == "bye":
            return False
        else:
            log(f"sdk: ignoring unknown message type {kind!r}")
        return True

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception:
            log(f"sdk: your {fn.__name__}() raised:\n{_trace()}")
            return None

    def _answer(self, msg: dict[str, Any]) -> None:
        if self.view is None or (msg.get("game") not in (None, self.view.game)):
            # a turn without a start: build a minimal view from the turn alone
            self.view = GameView(game=msg.get("game", ""))
            n = len(msg.get("counts") or [])
            self.view.seats = [f"seat{i}" for i in range(n)]
        view = self.view
        view._apply_turn(msg)
        try:
            reply = self._reply(view, msg)
        except Exception:  # even the fallback failed: say why, send nothing (the referee times the turn out)
            log(f"sdk: cannot answer turn {msg.get('id')}:\n{_trace()}")
            return
        if reply is not None:
            self._send(reply)

    def _reply(self, view: GameView, msg: dict[str, Any]) -> dict[str, Any] | None:
        decide = msg.get("decide")
        reply: dict[str, Any] = {"type": decide, "id": msg.get("id")}
        if decide == "ask":
            choice = self._decide(self.ask, view)
            if not isinstance(choice, Ask) or (choice.card is None and choice.family is None):
                if choice is not None:
                    log(
                        f"sdk: ask() must return an Ask(target=..., card=... or family=...), got {choice!r}; "
                        "answering with a random legal ask"
                    )
                choice = view.random_ask(self.rng)
            reply["target"] = int(choice.target)
            if choice.family is not None:
                reply["family"] = choice.family
            else:
                reply["card"] = choice.card
            if view.polite:
                reply["please"] = bool(choice.please)
        elif decide in ("play", "take"):
            fn = self.play if decide == "play" else self.take
            choice = self._decide(fn, view)
            options = view.play_options()
            if not isinstance(choice, str) or (options and choice not in options):
                if choice is not None:
                    log(f"sdk: {decide}() returned {choice!r}, not one of {options}; answering with a random option")
                choice = self.rng.choice(options)
            reply["card"] = choice
        else:
            log(f"sdk: unknown decision {decide!r}; not answering")
            return None
        return reply

    def _decide(self, fn: Callable[[GameView], Any], view: GameView) -> Any:
        try:
            return fn(view)
        except Exception:
            log(f"sdk: your {fn.__name__}() raised; answering with a random legal move instead:\n{_trace()}")
            return None


if __name__ == "__main__":
    # `python3 protocol/sdk.py` runs the SDK's default bot (uniformly random legal moves);
    # `referee check-bot` uses it as the instant opponent in the other seats.
    class InstantBot(Bot):
        name = "InstantBot"
        version = "1"

    sys.exit(InstantBot(int(sys.argv[1]) if len(sys.argv) > 1 else None).run())
