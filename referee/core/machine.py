"""The hand machine: the referee's protocol logic for one game or match, without I/O.

In the manner of h11 and wsproto, :class:`HandMachine` never touches a pipe,
a clock or a file. Whoever owns the bots drives it:

* :func:`referee.runtime.game.play_game` drives it with trio and real bot
  processes;
* :func:`referee.runtime.replay.replay` drives it with the inputs recorded in
  a game log and compares what it emits with the log;
* the game viewer (:mod:`referee.view`) drives it through replay to draw frames;
* ``tests/core/test_machine.py`` drives it with scripted inputs.

What the machine says (read after every input):

* :attr:`HandMachine.writes` (read-only) - lines due to be written now, as
  ``(seat, data, timeout_s)``; the driver takes them (:meth:`take_writes`, the
  one way to), writes them, feeds a write that failed (``WriteFailed``) and
  then ``WRITTEN`` (while :attr:`barrier` is set, at the end of a hand, the
  machine waits for that);
* :attr:`HandMachine.waits` - the decisions awaited now (:class:`Wait`: seat,
  turn id, decision, time limit; :meth:`awaiting` for one seat); one for a
  sequential decision, several for a simultaneous chickens ``play``;
* :attr:`HandMachine.playing` - False once every hand is over; then
  :meth:`close` writes the tail of the log and returns the result.

What the machine is told: one entry point, :meth:`feed`, with one of the
closed union of Structs of :mod:`referee.core.inputs` (a reply, a line too
long, a timeout, a crash, a failed write, a closed pipe, a stale line, a bot
dead at the start - fed before :meth:`start` - and ``WRITTEN``). The inputs
that concern one seat's own wait return bytes to write to that seat at once
(an ``error`` message), or None. Every input but a reply is logged as it comes
(the sink's ``input``: a game log's ``input`` record), so a log holds every
input; a ``WRITTEN`` only when it ends a hand (the others change nothing).
The log sink and the observer are given at construction.

The machine applies the rules, turns every bot failure into a fault (the
``error`` to the bot, the public ``fault`` event, the seeded fallback for the
rest of the game), retries, the time bank, the stalemate and ``max_decisions``
backstops, and the end of each hand and of the match. Every log record goes
to its sink (:class:`Sink`), in an order that depends only on the inputs: two
runs with the same bots give the same records apart from measured times.

Simultaneous decisions (chickens ``play``): every turn is written at once, in
seat order; replies are judged as they arrive (a retry ``error`` goes out at
once) but their records, faults and fault events take effect in seat order
once every seat has answered or faulted (the seat's inputs logged among them,
in the order they came). The plays are then applied in seat order, so nobody's
choice is applied or revealed early and fallback draws stay deterministic.
(Version 1 logs recorded them as they arrived: replay's legacy module has a
machine that records so, by overriding :meth:`_defer`.)

Errors: the constructor raises ``ValueError`` for a seat count or
``seat_clocks`` length that does not match the game, or a bad clock. Nothing
else raises for bot behaviour; an engine failure ends the game "aborted"
("internal error: ..."). Nothing here awaits, so cancellation can only happen
between calls; after a cancelled driver :meth:`close` with ``interrupted``
writes an ``aborted`` footer.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import msgspec

from protocol.encode import EventEncoder, TurnEncoder, end_line, error_line, start_clock, start_line
from protocol.messages import BOT_DECODER, PROTOCOL_VERSION, REPLY_FOR_DECISION
from referee.rules import IllegalAction, Rng, ranks_from_scores
from referee.rules.match import Match, MatchFormat
from referee.rules.registry import action_json

from .decode import decode_line
from .errors import (
    BotCrashed,
    BotError,
    BotIllegal,
    BotMalformed,
    BotStale,
    BotTimeout,
    Problem,
    public_fault_detail,
    retry_note,
    wrong_reply,
)
from .inputs import (
    Crash,
    DeadAtStart,
    Input,
    PipeClosed,
    Reply,
    StaleLine,
    Timeout,
    TooLong,
    WriteFailed,
    Written,
    dead_at_start_detail,
)
from .records import LOG_KIND, LOG_VERSION
from .spec import ClockSpec, FaultPolicy, FaultRecord, GameResult, GameSpec, ThinkStats

__all__ = ["HandMachine", "Sink", "Wait", "action_json", "share_wins"]

_RETRYABLE = ("malformed", "illegal")
_NL = b"\n"
#: what one game logs of one seat's stale lines (a timed-out bot's late output, noise that
#: changes nothing after the first): at most this many lines and bytes; the rest is counted
#: (``stale_dropped`` in the seat's stderr record), so a flood cannot fill the disk
STALE_LOG_LINES = 32
STALE_LOG_BYTES = 32 * 1024
#: a fault's ``error`` to the bot is written at once, waiting at most this long
ERROR_WRITE_S = 0.5


class Sink(Protocol):
    """Where the machine's log records go (the game log, replay's comparison,
    the viewer). ``t`` and the file format are the sink's business."""

    def record(self, rec: dict[str, Any]) -> None: ...
    def timed(self, key: str, value: Any) -> None: ...
    def out(self, seat: int, lines: list[bytes]) -> None: ...
    def inbound(
        self, seat: int, raw: bytes, ms: float, ok: bool, lineno: int | None = None, long: bool = False
    ) -> None: ...
    def act_raw(
        self, seat: int, turn_id: int, decide: str, raw: bytes, ms: float, wall_ms: float | None = None
    ) -> None: ...
    def input(self, event: Input) -> None: ...


class Observer(Protocol):
    """Optional hooks for a viewer: called after the machine changed the game."""

    def hand_started(self, machine: HandMachine) -> None: ...
    def applied(
        self,
        machine: HandMachine,
        seat: int,
        decide: str,
        action: Any,
        events: list[dict[str, Any]],
        fallback: bool,
        ms: float | None,
    ) -> None: ...
    def faulted(self, machine: HandMachine, rec: FaultRecord) -> None: ...
    def retried(self, machine: HandMachine, seat: int, fault: str, detail: str, left: int) -> None: ...
    def hand_ended(
        self, machine: HandMachine, scores: list[Any], ranks: list[int], reason: str, detail: str | None
    ) -> None: ...


def share_wins(scores: Sequence[float], forfeits: Sequence[int]) -> list[float]:
    """Forfeited seats get 0; the best score among the others shares one win."""
    bad = set(forfeits)
    ok = [s for i, s in enumerate(scores) if i not in bad]
    if not ok:
        return [0.0] * len(scores)
    best = max(ok)
    k = sum(1 for i, s in enumerate(scores) if i not in bad and s == best)
    return [1.0 / k if i not in bad and s == best else 0.0 for i, s in enumerate(scores)]


class Wait:
    """A decision awaited from one seat: ``seat`` (match seat), ``turn_id``,
    ``decide``, ``limit_ms`` (this decision's limit: ``move_ms``, or less with a
    bank) and the seat's ``clock``."""

    __slots__ = ("seat", "turn_id", "decide", "limit_ms", "clock")

    def __init__(self, seat: int, turn_id: int, decide: str, limit_ms: float, clock: ClockSpec) -> None:
        self.seat = seat
        self.turn_id = turn_id
        self.decide = decide
        self.limit_ms = limit_ms
        self.clock = clock

    def __repr__(self) -> str:
        return f"Wait(seat={self.seat}, turn_id={self.turn_id}, decide={self.decide!r}, limit_ms={self.limit_ms})"


class _Seat:
    """A match seat and what the machine keeps about it."""

    __slots__ = (
        "index",
        "name",
        "clock",
        "faulted",
        "think",
        "out",
        "out_size",
        "hs",
        "bank_left",
        "in_hand",
        "writable",
        "next_id",
        "stale_recorded",
        "stale_logged",
        "stale_dropped",
        "timed_out_turn",
        "wait",
        "retries",
        "write_s",
    )

    def __init__(self, index: int, name: str, clock: ClockSpec, first_id: int) -> None:
        self.index = index
        self.name = name
        self.clock = clock
        self.faulted = False
        self.think = ThinkStats()
        self.out: list[bytes] = []
        self.out_size = 0
        self.hs = index
        self.bank_left = 0.0
        self.in_hand = False
        self.writable = True
        self.next_id = first_id
        self.stale_recorded = False
        self.stale_logged = [0, 0]  # stale lines, bytes logged
        self.stale_dropped = [0, 0]  # stale lines, bytes not logged (over STALE_LOG_LINES/BYTES)
        self.timed_out_turn: int | None = None
        self.wait: Wait | None = None
        self.retries = 0
        self.write_s = clock.ceiling_ms() / 1000 + 0.5  # a write to it may wait this long


class _Outcome:
    """A seat's answer to a simultaneous decision, kept until every seat has answered."""

    __slots__ = ("action", "turn_id", "ms", "raw", "wall", "fault", "records")

    def __init__(self) -> None:
        self.action: Any = None
        self.turn_id = 0
        self.ms = 0.0
        self.raw = b""
        self.wall: float | None = None
        self.fault: BotError | None = None
        self.records: list[Callable[[], None]] = []


class _Abort(Exception):
    """The game cannot go on (set-up failure, engine failure, a backstop)."""


class HandMachine:
    """One game or match, as a protocol state machine (see the module docstring).

    ``names[i]`` is match seat ``i``'s bot; ``first_ids[i]`` the first turn id
    to use for it (turn ids increase per bot connection, so a reused session
    continues its own numbering). ``sink`` receives the log records (None:
    no log); ``observer`` is told about every change of the game.
    """

    def __init__(
        self,
        spec: GameSpec,
        names: Sequence[str],
        *,
        first_ids: Sequence[int] | None = None,
        sink: Sink | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.validate(spec, len(names))
        clocks = [spec.clock_for(i) for i in range(spec.players)]
        self.spec = spec
        self.rules = spec.rules
        self.policy: FaultPolicy = spec.policy
        self._sink = sink
        self._observer = observer
        ids = first_ids if first_ids is not None else [1] * spec.players
        self.seats = [_Seat(i, names[i], clocks[i], ids[i]) for i in range(spec.players)]
        self.faults: list[FaultRecord] = []
        self._writes: list[tuple[int, bytes, float]] = []
        self.waits: list[Wait] = []
        self.playing = True
        self.reason = "complete"
        self.detail: str | None = None
        self.scores: list[Any] = [0] * spec.players
        self.ranks: list[int] = [1] * spec.players
        fmt = spec.match
        self.match: Match | None = None
        if fmt is not None and getattr(fmt, "kind", "single") != "single":
            self.match_format: MatchFormat | None = fmt
        else:
            self.match_format = None
        # per hand
        self.gid = spec.game_id
        self._state: Any = None
        self.hand_seats: list[_Seat] = []
        self.seq = 0
        self.decisions_left = 0
        self._fallback: Rng | None = None
        self._events: EventEncoder | None = None
        self._turns: TurnEncoder | None = None
        self._fields: Callable[[int], bytes] | None = None
        self._barrier = False  # the machine waits for Written before it goes on (the end of a hand)
        self._ended: tuple[list[Any], list[int], str, str | None] | None = None
        self._simul: dict[int, _Outcome] | None = None  # hand seat -> outcome, during a simultaneous decision
        self._stalled = False  # a hand ended by the stalemate rule
        self._last_refusal: tuple[int, str, str, str] | None = None
        self._decide = ""
        self._dead: dict[int, str] = {}  # match seat -> the detail of its crash fault (DeadAtStart)
        self._started = False

    # ------------------------------------------------------------------ what drivers read
    @property
    def writes(self) -> Sequence[tuple[int, bytes, float]]:
        """The writes due now, ``(seat, data, timeout_s)`` in order (read-only:
        :meth:`take_writes` takes them)."""
        return self._writes

    @property
    def barrier(self) -> bool:
        """Whether the machine waits for :data:`~referee.core.inputs.WRITTEN` before
        it goes on (the end of a hand: its ``end`` lines must be written first)."""
        return self._barrier

    @property
    def state(self) -> Any:
        """The hand's game state (the engine's; observers read it, nobody changes it)."""
        return self._state

    @property
    def last_refusal(self) -> tuple[int, str, str, str] | None:
        """The last reply refused: ``(seat, fault, detail, reason)``; ``reason`` is
        the detail without its line and turn (replay names it)."""
        return self._last_refusal

    def awaiting(self, seat: int) -> Wait | None:
        """The turn awaited from match seat ``seat`` now, or None."""
        return self.seats[seat].wait

    def faulted(self, seat: int) -> bool:
        """Whether match seat ``seat`` has a fault (the fallback plays it)."""
        return self.seats[seat].faulted

    def timed_out(self, seat: int) -> bool:
        """Whether match seat ``seat`` timed out (its later lines are stale)."""
        return self.seats[seat].timed_out_turn is not None

    @staticmethod
    def validate(spec: GameSpec, seats: int) -> None:
        """Raise ``ValueError`` if ``seats`` bots cannot play ``spec`` (a count that
        does not match, a ``seat_clocks`` list of the wrong length, a bad clock)."""
        if seats != spec.players:
            raise ValueError(f"play_game: {spec.players} players but {seats} bot sessions")
        if spec.seat_clocks is not None and len(spec.seat_clocks) != spec.players:
            raise ValueError(f"play_game: {len(spec.seat_clocks)} seat_clocks for {spec.players} bot sessions")
        spec.clock.validate()
        for i in range(spec.players):
            spec.clock_for(i).validate()

    # ------------------------------------------------------------------ the header
    def header(self, seats: list[dict[str, Any]], started: str | None, referee: str) -> dict[str, Any]:
        """The log's first line. ``seats[i]``: ``command``, ``hello`` and
        ``sandbox`` of match seat ``i`` (what the driver knows of the bots)."""
        spec = self.spec
        fmt = self.match_format
        return {
            "log": LOG_KIND,
            "log_version": LOG_VERSION,
            "protocol": PROTOCOL_VERSION,
            "referee": referee,
            "game": spec.game_id,
            "started": started,
            "variant": self.rules.name,
            "rules": self.rules.to_wire(),
            "players": spec.players,
            "seed": spec.seed,
            "deal": spec.deal.to_json() if spec.deal is not None else None,
            "match": fmt.to_json() if fmt is not None else None,
            "seats": [{"seat": s.index, "bot": s.name, **seats[s.index]} for s in self.seats],
            "clock": spec.clock.to_json(),
            "policy": self.policy.to_json(),
            "seat_clocks": ([s.clock.to_json() for s in self.seats] if spec.seat_clocks is not None else None),
        }

    # ------------------------------------------------------------------ start
    def start(self) -> None:
        """Begin the first hand. The seats fed :class:`DeadAtStart` before get a
        ``crash`` fault each as its ``start`` is due."""
        if self._started:
            raise RuntimeError("the hand machine has started already")
        self._started = True
        spec = self.spec
        try:
            if self.match_format is None:
                try:
                    state = self.rules.new_game(spec.players, seed=spec.seed, deal=spec.deal)
                except Exception as exc:
                    raise _Abort(f"cannot set up the game: {exc}") from exc
                self._log_rec(
                    {
                        "hand": {
                            "index": 1,
                            "game": spec.game_id,
                            "seats": list(range(spec.players)),
                            "dealer": state.dealer,
                            "seed": state.seed,
                            "deal": spec.deal.to_json() if spec.deal is not None else None,
                        }
                    }
                )
                self._begin_hand(spec.game_id, state, self.seats)
            else:
                if spec.deal is not None:
                    raise _Abort("a match deals its own hands from the seed; an explicit deal is for single games")
                try:
                    self.match = Match(
                        self.rules, spec.players, self.match_format, spec.seed if spec.seed is not None else 0
                    )
                except Exception as exc:
                    raise _Abort(f"cannot set up the match: {exc}") from exc
                self._next_hand()
        except _Abort as exc:
            self._abort_game(str(exc))

    def _next_hand(self) -> None:
        match = self.match
        assert match is not None
        hand = match.next_hand()
        if hand is None:
            self._finish_play(match.scores(), match.ranks(), "stalled" if self._stalled else "complete", None)
            return
        gid = f"{self.spec.game_id}.h{hand.index + 1}"
        try:
            state = match.new_game(hand)
        except Exception as exc:
            raise _Abort(f"cannot set up hand {hand.index + 1}: {exc}") from exc
        self._log_rec(
            {
                "hand": {
                    "index": hand.index,
                    "game": gid,
                    "seats": list(hand.seats),
                    "dealer": state.dealer,
                    "seed": hand.seed,
                    "deal": None,
                    "tiebreak": hand.tiebreak,
                }
            }
        )
        self._begin_hand(gid, state, [self.seats[i] for i in hand.seats])

    def _begin_hand(self, gid: str, state: Any, seats: list[_Seat]) -> None:
        self.gid = gid
        self._state = state
        self._events = EventEncoder(gid)
        self._turns = TurnEncoder(gid)
        self._fields = state.turn_fields  # the engine's pre-encoded view, when it has one
        self.seq = 0
        self.hand_seats = seats
        self._fallback = None
        self.decisions_left = self.policy.max_decisions
        for s in self.seats:
            s.in_hand = False
        for hs, seat in enumerate(seats):
            seat.hs = hs
            seat.in_hand = True
            bank = seat.clock.bank_ms
            seat.bank_left = float(bank) if bank is not None else 0.0
        names = [s.name for s in seats]
        wire = self.rules.to_wire(len(seats))  # chickens: rounds = this table's size
        variant = self.rules.name
        dealer = state.dealer
        dead = self._dead
        for hs, seat in enumerate(seats):
            why = dead.pop(seat.index, None)
            if why is not None and not seat.faulted:
                self._fault_now(seat, BotCrashed(why, bot=seat.name, seat=seat.index))
            c = seat.clock
            self._queue(
                seat,
                start_line(
                    gid,
                    variant,
                    wire,
                    hs,
                    names,
                    dealer,
                    state.dealt_hand(hs),
                    start_clock(c.move_ms, c.bank_ms, c.mode),
                ),
            )
        if self._observer is not None:
            self._observer.hand_started(self)
        try:
            self._enqueue_flush(state.initial_events())
        except Exception as exc:
            self._end_hand_failed(exc)
            return
        self._advance()

    # ------------------------------------------------------------------ the decision loop
    def _advance(self) -> None:
        """Ask for the next decision(s); apply fallbacks for faulted seats; end the hand when it is over."""
        state = self._state
        seats = self.hand_seats
        try:
            while True:
                pending = state.pending()
                if not pending:
                    reason = state.end_reason
                    self._end_hand(list(state.scores()), reason, None)
                    return
                self.decisions_left -= 1
                if self.decisions_left < 0:
                    self._end_hand(
                        None,
                        "aborted",
                        f"no end after {self.policy.max_decisions} decisions (FaultPolicy.max_decisions)",
                    )
                    return
                decide = state.decision()
                self._decide = decide
                if len(pending) == 1:
                    seat = seats[pending[0]]
                    if seat.faulted:
                        self._apply_fallback(seat, decide, self._enqueue_flush)
                        continue
                    self._send_turn(seat, decide)
                    return
                waiting = [seats[p] for p in pending if not seats[p].faulted]
                if not waiting:
                    events: list[dict[str, Any]] = []
                    for p in pending:
                        self._apply_fallback(seats[p], decide, events.extend)
                    self._enqueue_flush(events)
                    continue
                self._simul = {s.hs: _Outcome() for s in waiting}
                for seat in waiting:
                    self._send_turn(seat, decide)
                return
        except _Abort:
            raise
        except Exception as exc:  # an engine bug must not leave the bots hanging
            self._end_hand_failed(exc)

    def _send_turn(self, seat: _Seat, decide: str) -> None:
        """Queue ``seat``'s turn and hand its queue to the driver; await its reply."""
        tid = seat.next_id
        seat.next_id = tid + 1
        clock = seat.clock
        move_ms = clock.move_ms
        limit_ms = float(move_ms)
        if clock.bank_ms is not None:
            limit_ms = max(0.0, min(limit_ms, seat.bank_left))
            left = int(seat.bank_left)
        else:
            left = move_ms
        fields = self._fields
        hs = seat.hs
        body = fields(hs) if fields is not None else TurnEncoder.view_fields(self._state.view(hs))
        assert self._turns is not None
        lines = seat.out
        seat.out = []
        seat.out_size = 0
        if seat.writable:  # (else its pipe closed: the read will find its stdout closed)
            lines.append(self._turns.line(tid, decide, body, left, move_ms))
            if self._sink is not None:
                self._sink.out(seat.index, lines)
            lines.append(b"")
            self._writes.append((seat.index, _NL.join(lines), seat.write_s))
        wait = Wait(seat.index, tid, decide, limit_ms, clock)
        seat.wait = wait
        seat.retries = self.policy.retries
        self.waits.append(wait)

    # ------------------------------------------------------------------ inputs
    def take_writes(self) -> list[tuple[int, bytes, float]]:
        """The writes due now, ``(seat, data, timeout_s)`` in order; the driver
        writes them, feeds any failure (:class:`WriteFailed`), then :data:`WRITTEN`."""
        w = self._writes
        self._writes = []
        return w

    def feed(self, event: Input) -> bytes | None:
        """Tell the machine what happened (one :data:`~referee.core.inputs.Input`).

        Returns bytes to write to that seat at once (an ``error``: a retry or a
        fault) for the inputs that concern one seat's own wait (a reply, a line
        too long, a timeout, a stale line), else None. Raises ``RuntimeError``
        for an input the machine cannot take now (a reply from a seat whose
        turn is not awaited: a driver's bug, or a forged log in replay).
        Every input but a reply and ``written`` is logged as it comes."""
        if isinstance(event, Reply):
            return self._reply(event.seat, event.line, event.ms, event.wall_ms, event.lineno)
        if isinstance(event, Written):
            if self._barrier and not self._writes:
                self._log_input(event)  # only the `written` that ends a hand changes anything
            self._written()
            return None
        if not 0 <= event.seat < len(self.seats):
            raise RuntimeError(f"no seat {event.seat} in this game")
        if isinstance(event, StaleLine):
            return self._stale_line(event)
        self._log_input(event)
        if isinstance(event, TooLong):
            return self._too_long(event)
        if isinstance(event, Timeout):
            return self._timeout(event)
        if isinstance(event, Crash):
            self._crash(event)
        elif isinstance(event, WriteFailed):
            self._write_failed(event)
        elif isinstance(event, PipeClosed):
            self._pipe_closed(event.seat)
        elif isinstance(event, DeadAtStart):
            self._dead_at_start(event)
        else:  # pragma: no cover - the union is closed
            raise TypeError(f"not an input of the hand machine: {event!r}")
        return None

    def _log_input(self, event: Input) -> None:
        """Log an input (not a reply) as it comes; a seat's inputs during a simultaneous
        decision in order with its other records (which wait for the decision's end)."""
        sink = self._sink
        if sink is not None:
            if isinstance(event, Written):
                sink.input(event)
            else:
                self._defer(self.seats[event.seat], lambda: sink.input(event))

    def _written(self) -> None:
        """The driver finished the writes it took (and fed any failure).
        Only needed while :attr:`barrier` is set (the end of a hand waits for it)."""
        if self._barrier and not self._writes:
            self._barrier = False
            try:
                self._after_end()
            except _Abort as exc:
                self._abort_game(str(exc))

    def _dead_at_start(self, ev: DeadAtStart) -> None:
        if self._started:
            raise RuntimeError("DeadAtStart is fed before start()")
        self._dead.setdefault(ev.seat, dead_at_start_detail(ev.death))
        self.seats[ev.seat].writable = False

    def _reply(
        self, seat_index: int, line: bytes, ms: float, wall_ms: float | None = None, lineno: int | None = None
    ) -> bytes | None:
        """Seat ``seat_index`` wrote ``line`` (without its newline) ``ms`` after
        its turn was written (its CPU time with the cpu clock; ``wall_ms`` the
        wall time then), within its deadline; ``lineno`` is the line's number in
        the bot's output. Returns bytes to write to that seat at once (an
        ``error``: a retry or a fault), or None."""
        seat = self.seats[seat_index]
        wait = seat.wait
        if wait is None:
            raise RuntimeError(f"seat {seat_index} has no turn awaiting a reply")
        tid = wait.turn_id
        try:
            msg = BOT_DECODER.decode(line)
        except (msgspec.DecodeError, RecursionError):
            msg = None
        if type(msg) is REPLY_FOR_DECISION[wait.decide] and msg.id == tid:  # type: ignore[union-attr]
            simul = self._simul
            if simul is not None:
                # a valid reply to a simultaneous decision: kept until every seat has answered
                try:
                    self._check(seat.hs, msg)
                except IllegalAction:
                    return self._judge(seat, wait, line, ms, wall_ms, lineno)
                except Exception as exc:
                    self._end_hand_failed(exc)
                    return None
                think = seat.think
                think.count += 1
                think.total_ms += ms
                if ms > think.max_ms:
                    think.max_ms = ms
                if wait.clock.bank_ms is not None:
                    seat.bank_left -= ms
                seat.wait = None
                self.waits.remove(wait)
                out = simul[seat.hs]
                out.action, out.turn_id, out.ms, out.raw, out.wall = msg, tid, ms, line, wall_ms
                if not self.waits:
                    self._maybe_complete()
                return None
            # the usual case: a sequential decision and a valid reply
            try:
                events = self._state.apply(seat.hs, msg)
            except IllegalAction:
                pass  # the general path below says why
            except Exception as exc:
                self._end_hand_failed(exc)
                return None
            else:
                think = seat.think
                think.count += 1
                think.total_ms += ms
                if ms > think.max_ms:
                    think.max_ms = ms
                if wait.clock.bank_ms is not None:
                    seat.bank_left -= ms
                seat.wait = None
                self.waits = []
                if self._sink is not None:  # the reply as received is the action record
                    self._sink.act_raw(seat.index, tid, wait.decide, line, ms, wall_ms)
                if self._observer is not None:
                    self._observer.applied(self, seat.index, wait.decide, msg, events, False, ms)
                self._enqueue_flush(events)
                self._advance()
                return None
        return self._judge(seat, wait, line, ms, wall_ms, lineno)

    def _judge(
        self, seat: _Seat, wait: Wait, line: bytes, ms: float, wall_ms: float | None, lineno: int | None
    ) -> bytes | None:
        """The general path of :meth:`reply`: decode errors, stale ids, wrong types,
        illegal actions, retries; and every reply to a simultaneous decision."""
        tid = wait.turn_id
        n = lineno if lineno is not None else 0
        err: BotError | None = None
        reason: str | None = None  # the detail without its line and turn
        result: Any = None
        ok = False
        msg: Any = None
        try:
            msg = decode_line(line, n, bot=seat.name, seat=seat.index, turn_id=tid)
        except BotMalformed as exc:
            err = exc
            prefix = f"line {n}: "
            reason = exc.detail[len(prefix) :] if exc.detail.startswith(prefix) else exc.detail
        else:
            ok = True
            mid = getattr(msg, "id", None)
            if mid is not None and mid != tid:
                reason = f"reply id {mid} is not the current turn's id {tid}" + (
                    " (an earlier turn's reply)" if mid < tid else " (no such turn yet)"
                )
                err = BotStale(
                    f"line {n}: {reason}",
                    bot=seat.name,
                    seat=seat.index,
                    turn_id=tid,
                )
            elif type(msg) is not REPLY_FOR_DECISION[wait.decide]:
                detail, problem = wrong_reply(tid, wait.decide, _tag(msg))
                reason = detail
                err = BotIllegal(f"line {n}: {detail}", bot=seat.name, seat=seat.index, turn_id=tid, problem=problem)
            else:
                try:
                    result = self._check(seat.hs, msg) if self._simul is not None else self._state.apply(seat.hs, msg)
                except IllegalAction as exc:
                    reason = exc.reason
                    err = BotIllegal(
                        f"line {n}: turn {tid}: {exc.reason}",
                        bot=seat.name,
                        seat=seat.index,
                        turn_id=tid,
                        problem=Problem("illegal"),
                    )
                except Exception as exc:
                    self._end_hand_failed(exc)
                    return None
        if err is None:
            seat.think.add(ms)
            if wait.clock.bank_ms is not None:
                seat.bank_left -= ms
            self._done_waiting(seat)
            if self._simul is not None:
                out = self._simul[seat.hs]
                out.action, out.turn_id, out.ms, out.raw, out.wall = msg, tid, ms, line, wall_ms
                self._maybe_complete()
                return None
            if self._sink is not None:
                self._sink.act_raw(seat.index, tid, wait.decide, line, ms, wall_ms)
            if self._observer is not None:
                self._observer.applied(self, seat.index, wait.decide, msg, result, False, ms)
            self._enqueue_flush(result)
            self._advance()
            return None
        log = self._sink
        if log is not None:
            self._defer(seat, lambda: log.inbound(seat.index, line, ms, ok, lineno))
        return self._refused(seat, wait, err, ms, reason)

    def _refused(self, seat: _Seat, wait: Wait, err: BotError, ms: float, reason: str | None = None) -> bytes | None:
        """A refused reply: forgiven (retry policy) while tries and time remain, else a fault."""
        self._last_refusal = (seat.index, err.fault, err.detail, reason if reason is not None else err.detail)
        if err.fault in _RETRYABLE and seat.retries > 0 and ms < wait.limit_ms:
            seat.retries -= 1
            left = seat.retries
            tid = wait.turn_id
            data = error_line(err.fault, err.detail + retry_note(left), self.gid, tid)
            log = self._sink
            fault, detail = err.fault, err.detail

            def record_retry() -> None:
                if log is not None:
                    log.timed("retry", {"seat": seat.index, "id": tid, "fault": fault, "detail": detail, "left": left})
                    log.out(seat.index, [data])
                if self._observer is not None:
                    self._observer.retried(self, seat.index, fault, detail, left)

            self._defer(seat, record_retry)
            return data + _NL
        return self._fail(seat, err, ms)

    def _timeout(self, ev: Timeout) -> bytes | None:
        """The seat did not answer its turn in time (``ms``: the time charged,
        when measured). Returns the ``error`` to write to it at once."""
        seat, wait = self._awaited(ev.seat)
        seat.timed_out_turn = wait.turn_id
        return self._fail(seat, BotTimeout(ev.detail, bot=seat.name, seat=seat.index, turn_id=wait.turn_id), ev.ms)

    def _crash(self, ev: Crash) -> None:
        """The seat's stdout closed (or its process ended) while its reply was awaited."""
        seat, wait = self._awaited(ev.seat)
        seat.writable = False
        seat.out = []
        seat.out_size = 0
        self._fail(seat, BotCrashed(ev.detail, bot=seat.name, seat=seat.index, turn_id=wait.turn_id), ev.ms)

    def _too_long(self, ev: TooLong) -> bytes | None:
        """The seat wrote a line longer than ``FaultPolicy.max_line``: a malformed
        reply (retried by the policy like any other)."""
        seat, wait = self._awaited(ev.seat)
        err = BotMalformed(ev.detail, bot=seat.name, seat=seat.index, turn_id=wait.turn_id, problem=Problem("too_long"))
        return self._refused(seat, wait, err, ev.ms)

    def _write_failed(self, ev: WriteFailed) -> None:
        """A write to the seat failed. A seat that has no fault yet gets one
        (without a turn id)."""
        seat = self.seats[ev.seat]
        self._pipe_closed(ev.seat)
        if seat.faulted or not self.playing:
            return
        kind = BotTimeout if ev.fault == "timeout" else BotCrashed
        err: BotError = kind(ev.detail, bot=seat.name, seat=seat.index)
        if seat.wait is not None:
            self._fail(seat, err, None)
        else:
            self._fault_now(seat, err)

    def _pipe_closed(self, seat_index: int) -> None:
        """Writes to the seat fail (its stdin is closed): queue nothing more for it."""
        seat = self.seats[seat_index]
        seat.writable = False
        seat.out = []
        seat.out_size = 0

    def _stale_line(self, ev: StaleLine) -> bytes | None:
        """A line a seat wrote after it timed out (read by the driver until the
        end of the game; ``ms`` since that turn was written). The first is a
        ``stale`` fault (logged; the bot gets the ``error`` returned here; no
        event to the other seats); later ones are logged and discarded, up to
        :data:`STALE_LOG_LINES` lines and :data:`STALE_LOG_BYTES` bytes per seat and
        game; those over it are only counted (the seat's stderr record says how many)."""
        seat = self.seats[ev.seat]
        if seat.timed_out_turn is None:
            raise RuntimeError(f"seat {ev.seat} did not time out: its line is not stale")
        line, lineno = ev.line, ev.lineno
        ms = round(ev.ms, 3)  # as the log records it, so that a replay words the detail alike (607.4996 is 607.5)
        log = self._sink
        logged = seat.stale_logged
        if logged[0] >= STALE_LOG_LINES or (logged[0] and logged[1] + len(line) > STALE_LOG_BYTES):
            seat.stale_dropped[0] += 1
            seat.stale_dropped[1] += len(line)
        else:
            logged[0] += 1
            logged[1] += len(line)
            self._log_input(ev)
        if seat.stale_recorded:
            return None
        seat.stale_recorded = True
        turn_id = seat.timed_out_turn
        got = ""
        try:
            msg = msgspec.json.decode(line)
            if isinstance(msg, dict) and "id" in msg:
                got = f" (id {msg['id']!r})"
        except (msgspec.DecodeError, RecursionError):
            pass
        detail = (
            f"line {lineno if lineno is not None else 0}{got} arrived {ms:.0f} ms after turn {turn_id} "
            f"was sent, after its timeout: discarded as stale"
        )
        rec = FaultRecord(seat.index, seat.name, "stale", detail, turn_id, self.gid)
        data = error_line("stale", detail, self.gid, turn_id) if seat.writable else None

        def record() -> None:
            self.faults.append(rec)
            if log is not None:
                log.timed("fault", rec.to_json())
                if data is not None:
                    self._log_stale_error(seat.index, data)

        self._defer(seat, record)
        return data + _NL if data is not None else None

    def _log_stale_error(self, seat: int, data: bytes) -> None:
        """Log the ``error`` written for a stale line (a hook: version 1 logs lack it)."""
        if self._sink is not None:
            self._sink.out(seat, [data])

    def _awaited(self, seat_index: int) -> tuple[_Seat, Wait]:
        seat = self.seats[seat_index]
        wait = seat.wait
        if wait is None:
            raise RuntimeError(f"seat {seat_index} has no turn awaiting a reply")
        return seat, wait

    # ------------------------------------------------------------------ faults
    def _fail(self, seat: _Seat, err: BotError, ms: float | None) -> bytes | None:
        """``seat``'s awaited decision ended in a fault: charge its time, record
        the fault and play the decision by the fallback. Returns the bytes to
        write to the seat at once (its pending lines and the ``error``)."""
        if ms is not None:
            seat.think.add(ms)
            if seat.clock.bank_ms is not None:
                seat.bank_left -= ms
        elif err.turn_id is not None:
            seat.think.count += 1  # measured by the driver but not in the log (a timeout, a crash)
        self._done_waiting(seat)
        lines, data = self._error_out(seat, err)
        if self._simul is not None:
            self._simul[seat.hs].fault = err
            self._defer(seat, lambda: self._fault_record(seat, err, lines))  # in seat order
            self._maybe_complete()
            return data
        self._fault_record(seat, err, lines)
        try:
            self._apply_fallback(seat, self._decide, self._enqueue_flush)
        except Exception as exc:
            self._end_hand_failed(exc)
            return data
        self._advance()
        return data

    def _fault_now(self, seat: _Seat, err: BotError) -> None:
        """A fault outside a decision (a failed write, a bot dead at the start):
        the ``error`` goes to the driver's writes."""
        lines, data = self._error_out(seat, err)
        self._fault_record(seat, err, lines)
        if data is not None:
            self._writes.append((seat.index, data, ERROR_WRITE_S))

    def _error_out(self, seat: _Seat, err: BotError) -> tuple[list[bytes] | None, bytes | None]:
        """The seat's pending lines and the fault's ``error``, as one write (not logged yet)."""
        if not seat.writable:
            return None, None
        seat.out.append(error_line(err.fault, err.detail, self.gid, err.turn_id))
        lines, seat.out, seat.out_size = seat.out, [], 0
        return lines, _NL.join(lines) + _NL

    def _fault_record(self, seat: _Seat, err: BotError, lines: list[bytes] | None) -> None:
        """Record ``err`` as ``seat``'s fault: the record, the write of its ``error``
        (``lines``), the public ``fault`` event to the table."""
        rec = FaultRecord(seat.index, seat.name, err.fault, err.detail, err.turn_id, self.gid)  # type: ignore[arg-type]
        rec.with_problem(err.problem)
        self.faults.append(rec)
        seat.faulted = True
        if self._sink is not None:
            self._sink.timed("fault", rec.to_json())
            if lines is not None:
                self._sink.out(seat.index, lines)
        if self._observer is not None:
            self._observer.faulted(self, rec)
        if seat.in_hand and self._state is not None:
            self._enqueue_flush(
                [{"kind": "fault", "seat": seat.hs, "fault": err.fault, "detail": public_fault_detail(err.fault)}]
            )

    def _defer(self, seat: _Seat, fn: Callable[[], None]) -> None:
        """Log now or, for a seat of a simultaneous decision, when it completes (in seat order)."""
        simul = self._simul
        if simul is not None and seat.in_hand and seat.hs in simul:
            simul[seat.hs].records.append(fn)
        else:
            fn()

    def _done_waiting(self, seat: _Seat) -> None:
        wait = seat.wait
        seat.wait = None
        if wait is not None and wait in self.waits:
            self.waits.remove(wait)

    # ------------------------------------------------------------------ simultaneous decisions
    def _check(self, hs: int, action: Any) -> Any:
        """Judge a simultaneous play without applying it (raises IllegalAction)."""
        state = self._state
        card = action.card
        for legal in state.legal_actions(hs):
            if legal.card == card:
                return action
        trial = copy.deepcopy(state)
        trial.apply(hs, action)  # raises IllegalAction with the engine's reason
        raise IllegalAction(f"{card!r} is not one of your options now")

    def _maybe_complete(self) -> None:
        """Once every seat of a simultaneous decision answered or faulted: its
        records and faults in seat order, then the plays applied in seat order."""
        simul = self._simul
        if simul is None or self.waits:
            return
        self._simul = None
        state = self._state
        decide = self._decide
        seats = self.hand_seats
        try:
            for hs in sorted(simul):
                for fn in simul[hs].records:
                    fn()
            events: list[dict[str, Any]] = []
            for hs in state.pending():
                seat = seats[hs]
                got = simul.get(hs)
                if got is not None and got.fault is None:
                    applied = state.apply(hs, got.action)
                    events.extend(applied)
                    if self._sink is not None:
                        self._sink.act_raw(seat.index, got.turn_id, decide, got.raw, got.ms, got.wall)
                    if self._observer is not None:
                        self._observer.applied(self, seat.index, decide, got.action, applied, False, got.ms)
                else:
                    self._apply_fallback(seat, decide, events.extend)
            self._enqueue_flush(events)
        except Exception as exc:
            self._end_hand_failed(exc)
            return
        self._advance()

    # ------------------------------------------------------------------ fallback, events, writes
    def fallback(self) -> Rng:
        """The hand's fallback generator (``state.fallback_rng()``), made on first use."""
        rng = self._fallback
        if rng is None:
            state = self._state
            rng = self._fallback = state.fallback_rng()
        return rng

    def _apply_fallback(self, seat: _Seat, decide: str, sink: Callable[[list[dict[str, Any]]], Any]) -> None:
        state = self._state
        action = state.random_action(seat.hs, self.fallback())
        events = state.apply(seat.hs, action)
        if self._sink is not None:
            self._sink.timed(
                "act",
                {
                    "seat": seat.index,
                    "id": None,
                    "decide": decide,
                    "action": action_json(decide, action),
                    "fallback": True,
                    "ms": 0.0,
                },
            )
        if self._observer is not None:
            self._observer.applied(self, seat.index, decide, action, events, True, None)
        sink(events)

    def _queue(self, seat: _Seat, line: bytes) -> None:
        if seat.writable:
            seat.out.append(line)
            seat.out_size += len(line)

    def _enqueue_flush(self, events: list[dict[str, Any]]) -> None:
        """Queue the event lines for every writable seat of the hand; hand to the
        driver the queues over ``FaultPolicy.event_buffer`` bytes."""
        if not events:
            return
        targets = [s for s in self.hand_seats if s.writable]
        enc = self._events
        assert enc is not None
        seq = self.seq
        for ev in events:
            seq += 1
            if ev["kind"] != "draw" or "card" not in ev:
                line = enc.line(seq, ev)
                n = len(line)
                for s in targets:
                    s.out.append(line)
                    s.out_size += n
            else:
                public, private = enc.draw_lines(seq, ev)
                who = ev.get("seat")
                for s in targets:
                    line = private if s.hs == who else public
                    s.out.append(line)
                    s.out_size += len(line)
        self.seq = seq
        limit = self.policy.event_buffer
        for s in targets:
            if s.out_size > limit:
                self._flush(s)

    def _flush(self, seat: _Seat) -> None:
        """Hand ``seat``'s queued lines to the driver as one write (and log them)."""
        lines = seat.out
        if not lines:
            return
        seat.out = []
        seat.out_size = 0
        if self._sink is not None:
            self._sink.out(seat.index, lines)
        lines.append(b"")
        self._writes.append((seat.index, _NL.join(lines), seat.write_s))

    # ------------------------------------------------------------------ the end of a hand
    def _end_hand_failed(self, exc: BaseException) -> None:
        self._end_hand(None, "aborted", f"internal error: {type(exc).__name__}: {exc}")

    def _end_hand(self, scores: list[Any] | None, reason: str, detail: str | None) -> None:
        """Send ``end`` to every seat of the hand; the hand_end record follows
        once the driver wrote them (:meth:`written`)."""
        seats = self.hand_seats
        n = len(seats)
        self.waits = []
        for s in seats:
            s.wait = None
        self._simul = None
        if scores is None:
            scores, ranks = [0] * n, [1] * n
        else:
            ranks = ranks_from_scores(scores)
        forfeits = [s.hs for s in seats if s.faulted]
        for seat in seats:
            self._queue(seat, end_line(self.gid, scores, ranks, reason, detail, forfeits))
        for seat in seats:
            self._flush(seat)
        self._ended = (scores, ranks, reason, detail)
        if self._observer is not None:
            self._observer.hand_ended(self, scores, ranks, reason, detail)
        self._barrier = True
        if not self._writes:
            self._written()

    def _after_end(self) -> None:
        ended = self._ended
        assert ended is not None
        self._ended = None
        scores, ranks, reason, detail = ended
        self._log_rec({"hand_end": {"game": self.gid, "scores": scores, "ranks": ranks, "reason": reason}})
        for s in self.hand_seats:
            s.in_hand = False
        if reason == "aborted":
            self._finish_play(None, None, "aborted", detail)
            return
        if reason == "stalled":
            self._stalled = True  # the game's reason is "stalled" when any of its hands stalled
        if self.match is None:
            self._finish_play(scores, ranks, reason, None)
            return
        self.match.record(scores)
        self._next_hand()

    def _abort_game(self, detail: str) -> None:
        self._finish_play(None, None, "aborted", detail)

    def _finish_play(self, scores: list[Any] | None, ranks: list[int] | None, reason: str, detail: str | None) -> None:
        n = self.spec.players
        if scores is None or ranks is None:
            scores, ranks = [0] * n, [1] * n
        self.scores = list(scores)
        self.ranks = list(ranks)
        self.reason = reason
        self.detail = detail
        self.playing = False
        self.waits = []

    # ------------------------------------------------------------------ the end of the game
    def close(
        self,
        stderr_tails: Sequence[str],
        *,
        interrupted: bool = False,
        log_capped: bool = False,
        log_path: str | None = None,
    ) -> GameResult:
        """Write the stderr records and the footer; return the result.
        ``interrupted``: the driver was cancelled (Ctrl-C): the game is "aborted"."""
        if interrupted:
            n = self.spec.players
            self.scores, self.ranks = [0] * n, [1] * n
            self.reason, self.detail = "aborted", "the referee was interrupted"
            self.playing = False
        forfeits = sorted({f.seat for f in self.faults})
        scores, ranks = self.scores, self.ranks
        if self._sink is not None:
            for s in self.seats:
                err: dict[str, Any] = {"seat": s.index, "bot": s.name, "tail": stderr_tails[s.index]}
                if s.stale_dropped[0]:
                    err["stale_dropped"] = {"lines": s.stale_dropped[0], "bytes": s.stale_dropped[1]}
                self._sink.record({"stderr": err})
            footer: dict[str, Any] = {
                "scores": scores,
                "ranks": ranks,
                "win_shares": share_wins(scores, forfeits),
                "forfeits": forfeits,
                "reason": self.reason,
                "detail": self.detail,
                "faults": [f.to_json() for f in self.faults],
                "think_ms": [s.think.to_json() for s in self.seats],
            }
            if log_capped:
                footer["log_capped"] = True
            self._sink.record({"footer": footer})
        return GameResult(
            game_id=self.spec.game_id,
            scores=list(scores),
            ranks=list(ranks),
            win_shares=share_wins(scores, forfeits),
            forfeits=forfeits,
            faults=list(self.faults),
            think_ms=[s.think for s in self.seats],
            log_path=log_path,
            reason=self.reason,  # type: ignore[arg-type]
            detail=self.detail,
            log_capped=log_capped,
        )

    def next_ids(self) -> list[int]:
        """The next turn id of every match seat (the driver keeps them per bot connection)."""
        return [s.next_id for s in self.seats]

    # ------------------------------------------------------------------ helpers
    def _log_rec(self, rec: dict[str, Any]) -> None:
        if self._sink is not None:
            self._sink.record(rec)


def _tag(msg: Any) -> str:
    cfg = getattr(type(msg), "__struct_config__", None)
    return str(cfg.tag) if cfg is not None and cfg.tag is not None else type(msg).__name__
