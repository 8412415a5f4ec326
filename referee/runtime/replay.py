"""Re-simulate a game log with the rules engine alone and prove it.

:func:`load_log` reads a log and checks the shape of every record (typed
msgspec Structs, strict); a missing, unreadable, corrupt or truncated file
raises ``UserError`` naming the line (``<log> line 7: ...``): the CLI prints
``error: ...`` and exits 2.

:func:`replay` then rebuilds the game from the header and the hand records
(seed or deal, match bookkeeping) and re-derives everything the referee sent:

* per seat, every message of the ``out`` records, in order: ``start``, every
  ``event`` (with its ``seq``; a ``draw`` card only in the drawer's copy),
  every ``turn`` (hand, counts, laid, options, targets/centre/scores/round,
  ``decide``, clock; turn ids must increase per seat) and ``end`` (scores,
  ranks, reason, forfeits). Messages that come from the runtime rather than
  the rules are checked against the log's own records: a ``fault`` event and
  the faulting bot's ``error`` against the ``fault`` record, a retry ``error``
  against the ``retry`` record (whose error must be the very next record).
  The turn clock's ``move_ms`` is the seat's; ``left_ms`` equals it without a
  bank, and with a bank starts at the bank and never grows (the exact figure
  depends on measured times). Only the order of the messages to one seat is
  checked, not how writes to different seats interleave. Nothing may be
  missing or extra, except that a faulted seat may miss the tail of its
  messages (its pipe may have closed: the log does not record when);
* every ``act``: the seat and decision the engine awaits, a bot's reply
  answering the id of the turn it was sent, a fallback action equal to
  ``state.random_action(seat, Rng(derive(seed, "fallback")))`` drawn in game
  order (decision order; seat order within a simultaneous chickens ``play``),
  and only for a seat that faulted;
* the header (protocol version, variant name vs rules, players vs seats and
  the variant's table size), each ``hand`` record (game id, seats, seed,
  dealer), each ``hand_end``, the ``stderr`` records (one per seat) and the
  footer (scores, ranks, win shares, forfeits, faults).

``out`` records are mandatory: a log without them cannot be proved and is
rejected. A log cut short by Ctrl-C (footer reason ``aborted``, detail "the
referee was interrupted") is verified up to the interruption
(``ReplayReport.interrupted``). The first difference stops the replay; the report's
``mismatches`` then holds one sentence naming the log line, e.g. ``line 57:
the referee's turn to seat 2 differs from the re-simulation: hand ...``.

Free fields (not provable, not checked): times (``t``, ``ms``, ``think_ms``),
stderr tails, the bots' commands and hellos, refused replies (``in``/``bad``).

No bots, no trio, no I/O besides reading the file. Pure function of the
file: never raises anything but ``UserError``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec

from protocol.messages import PROTOCOL_VERSION, AskReply, BotMessage, PlayReply, TakeReply
from referee.errors import UserError
from referee.rules import Deal, Rng, derive, event_for_seat, get_variant, ranks_from_scores

from .errors import public_fault_detail, retry_note
from .game import action_json, share_wins
from .gamelog import LOG_KIND, LOG_VERSION

FaultKind = Literal["timeout", "crash", "malformed", "illegal", "stale"]


# ----------------------------------------------------------------------------- record shapes


class _S(msgspec.Struct, kw_only=True):
    pass


class ClockJ(_S):
    move_ms: int
    bank_ms: int | None
    startup_ms: int
    mode: Literal["wall", "cpu"]
    wall_ceiling_ms: int | None
    grace_ms: int


class PolicyJ(_S):
    retries: int
    max_line: int
    event_buffer: int
    max_decisions: int


class SeatJ(_S):
    seat: int
    bot: str
    command: list[str] | str
    hello: dict[str, Any] | None


class Header(_S):
    log: str
    log_version: int
    protocol: int
    game: str
    variant: str
    rules: dict[str, Any]
    players: int
    seats: list[SeatJ]
    clock: ClockJ
    policy: PolicyJ
    referee: str
    seed: int | None
    deal: dict[str, Any] | None
    match: dict[str, Any] | None
    seat_clocks: list[ClockJ] | None


class HandJ(_S):
    index: int
    game: str
    seats: list[int]
    dealer: int
    seed: int | None
    deal: dict[str, Any] | None
    tiebreak: bool = False  # matches only


class HandRec(_S):
    hand: HandJ


class OutRec(_S):
    t: float
    to: int
    out: list[dict[str, Any]]


class ActJ(_S):
    seat: int
    id: int | None
    decide: Literal["ask", "play", "take"]
    fallback: bool
    action: dict[str, Any]
    ms: float


class ActRec(_S):
    t: float
    act: ActJ


class InRec(_S):
    t: float
    from_: int = msgspec.field(name="from")
    ms: float
    in_: Any = msgspec.field(name="in", default=None)
    bad: str | None = None


class FaultJ(_S):
    seat: int
    bot: str
    fault: FaultKind
    detail: str
    id: int | None
    game: str | None


class FaultRec(_S):
    t: float
    fault: FaultJ


class RetryJ(_S):
    seat: int
    id: int
    fault: FaultKind
    detail: str
    left: int


class RetryRec(_S):
    t: float
    retry: RetryJ


class HandEndJ(_S):
    game: str
    scores: list[float]
    ranks: list[int]
    reason: Literal["complete", "aborted"]
    index: int | None = None


class HandEndRec(_S):
    hand_end: HandEndJ


class StderrJ(_S):
    seat: int
    bot: str
    tail: str


class StderrRec(_S):
    stderr: StderrJ


class FooterJ(_S):
    scores: list[float]
    ranks: list[int]
    win_shares: list[float]
    forfeits: list[int]
    reason: Literal["complete", "aborted"]
    detail: str | None
    faults: list[FaultJ]
    think_ms: list[dict[str, Any]]


class FooterRec(_S):
    footer: FooterJ


#: the key that names a record's kind -> its Struct
_KINDS: dict[str, type] = {
    "hand": HandRec, "out": OutRec, "act": ActRec, "in": InRec, "bad": InRec, "fault": FaultRec,
    "retry": RetryRec, "hand_end": HandEndRec, "stderr": StderrRec, "footer": FooterRec,
}
_ORDER = ("out", "act", "fault", "hand", "hand_end", "in", "bad", "retry", "stderr", "footer")


@dataclass
class ReplayReport:
    header: dict[str, Any]
    footer: dict[str, Any]
    mismatches: list[str] = field(default_factory=list)
    transcript: list[str] = field(default_factory=list)
    actions: int = 0
    hands: int = 0
    faults: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        return not self.mismatches


class _Mismatch(Exception):
    """The log differs from the re-simulation (stops the replay)."""


# ----------------------------------------------------------------------------- loading


def load_log(path: str | Path) -> list[tuple[int, Any, dict[str, Any]]]:
    """Read a game log: ``[(line number, typed record, raw dict), ...]``, header first.

    Raises ``UserError`` if the file is missing or unreadable, a line is not a
    JSON object or not a known record of the right shape, the header is not a
    card-referee game log of this version, or the footer is missing (truncated).
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise UserError(f"log file {str(p)!r} not found") from None
    except IsADirectoryError:
        raise UserError(f"{p} is a folder, not a game log") from None
    except OSError as exc:
        raise UserError(f"cannot read log {str(p)!r}: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        raise UserError(f"{p} is empty; this is not a card-referee game log")
    out: list[tuple[int, Any, dict[str, Any]]] = []
    decode = msgspec.json.decode
    for i, line in enumerate(lines, 1):
        try:
            raw = decode(line)
        except (msgspec.DecodeError, RecursionError):
            what = "the last line is cut off" if i == len(lines) else "it is corrupt"
            raise UserError(f"{p} line {i} is not JSON ({what}); this log cannot be replayed") from None
        if not isinstance(raw, dict):
            raise UserError(f"{p} line {i} is not a JSON object; this is not a card-referee game log")
        if i == 1:
            if raw.get("log") != LOG_KIND:
                raise UserError(f"{p} line 1 is not a card-referee game log header")
            if raw.get("log_version") != LOG_VERSION:
                raise UserError(f"{p} line 1: log version {raw.get('log_version')!r}; this referee reads "
                                f"version {LOG_VERSION}")
            typ: type = Header
        else:
            kind = next((k for k in _ORDER if k in raw), None)
            if kind is None:
                raise UserError(f"{p} line {i}: not a known log record (keys {', '.join(sorted(raw)) or 'none'})")
            typ = _KINDS[kind]
        try:
            rec = msgspec.convert(raw, typ)
        except msgspec.ValidationError as exc:
            raise UserError(f"{p} line {i}: malformed {'header' if i == 1 else typ.__name__[:-3].lower()} "
                            f"record: {exc}") from None
        out.append((i, rec, raw))
    if not isinstance(out[-1][1], FooterRec):
        raise UserError(f"{p} is truncated: it has no footer (the referee stopped before the game ended)")
    for i, rec, _ in out[1:-1]:
        if isinstance(rec, FooterRec):
            raise UserError(f"{p} line {i}: a footer before the last line; this log is corrupt")
    return out


# ----------------------------------------------------------------------------- comparison


def _same(a: Any, b: Any) -> bool:
    """Deep equality that also tells ``1`` from ``1.0`` from ``true``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _diff(got: Any, want: Any) -> str:
    """A short description of the first difference between two messages."""
    if isinstance(got, dict) and isinstance(want, dict):
        for k in list(want) + [k for k in got if k not in want]:
            if k not in got:
                return f"{k} missing (the re-simulation has {_short(want[k])})"
            if k not in want:
                return f"unexpected field {k}: {_short(got[k])}"
            if not _same(got[k], want[k]):
                return f"{k} {_short(got[k])}, the re-simulation has {_short(want[k])}"
    return f"{_short(got)}, the re-simulation has {_short(want)}"


def _short(x: Any) -> str:
    s = msgspec.json.encode(x).decode()
    return s if len(s) <= 300 else s[:297] + "..."


def _what(msg: dict[str, Any]) -> str:
    t = msg.get("type")
    if t == "event":
        return f"{msg.get('kind')} event (seq {msg.get('seq')})"
    return f"{t}" if isinstance(t, str) else "message"


_REPLY = {"ask": AskReply, "play": PlayReply, "take": TakeReply}


# ----------------------------------------------------------------------------- the re-simulation


class _Sim:
    def __init__(self, header: Header, report: ReplayReport) -> None:
        self.h = header
        self.report = report
        self.line = 1
        try:
            self.rules = get_variant(header.rules)
        except Exception as exc:  # RulesError, or a parameter of the wrong type
            raise _Mismatch(f"line 1: the header's rules are not a valid variant: {exc}") from None
        n = header.players
        if header.variant != self.rules.name:
            self.fail(f"line 1: the header names variant {header.variant!r} but its rules are those of "
                      f"{self.rules.name!r}")
        if header.protocol != PROTOCOL_VERSION:
            self.fail(f"line 1: the log was written with protocol version {header.protocol}; this referee "
                      f"speaks protocol version {PROTOCOL_VERSION}")
        if len(header.seats) != n:
            self.fail(f"line 1: the header says {n} players but lists {len(header.seats)} seats")
        for i, s in enumerate(header.seats):
            if s.seat != i:
                self.fail(f"line 1: seats[{i}] is numbered {s.seat}, expected {i}")
        if not self.rules.min_players <= n <= self.rules.max_players:
            self.fail(f"line 1: {self.rules.name} is for {self.rules.min_players}-{self.rules.max_players} "
                      f"players, the header says {n}")
        if header.seat_clocks is not None and len(header.seat_clocks) != n:
            self.fail(f"line 1: {len(header.seat_clocks)} seat_clocks for {n} players")
        self.names = [s.bot for s in header.seats]
        self.clocks = list(header.seat_clocks) if header.seat_clocks is not None else [header.clock] * n
        self.wire = self.rules.to_wire()
        self.match: Any = None
        if header.match is not None:
            from referee.rules.match import Match, MatchFormat

            try:
                fmt = MatchFormat.from_params(header.match)
                if fmt.kind != "single":
                    self.match = Match(self.rules, n, fmt, header.seed if header.seed is not None else 0)
            except Exception as exc:
                self.fail(f"line 1: the header's match {header.match} is not valid: {exc}")
        # per match seat, across hands
        self.queue: list[deque[tuple[str, Any]]] = [deque() for _ in range(n)]
        self.retry_error: tuple[int, dict[str, Any], int] | None = None
        self.faulted: set[int] = set()
        self.fault_recs: list[dict[str, Any]] = []
        self.last_id = [0] * n
        self.turn_sent: list[int | None] = [None] * n
        # per hand
        self.state: Any = None
        self.gid = ""
        self.hseats: list[int] = []
        self.seat_of: dict[int, int] = {}
        self.seq = 0
        self.fb: Rng | None = None
        self.starting = False
        self.started: set[int] = set()
        self.point = False        # a decision point (turns) or the end is due but not queued yet
        self.batch: list[int] = []  # hand seats whose acts are awaited, in order
        self.batch_events: list[dict[str, Any]] = []
        self.decisions = 0
        self.hand_over = False
        self.hand_result: tuple[list[Any], list[int], str, str | None] | None = None
        self.hands = 0
        self.final: tuple[list[Any], list[int]] | None = None
        self.aborted: str | None = None
        self.bank_left: list[int | None] = [None] * n
        self.hand_end_seen = False

    def fail(self, text: str) -> None:
        raise _Mismatch(text)

    # ---------------------------------------------------------------- hands
    def hand(self, hj: HandJ, raw: dict[str, Any]) -> None:
        if self.state is not None and not self.hand_end_seen:
            self.fail(f"line {self.line}: a new hand starts before hand {self.gid} ended (no hand_end record)")
        if self.aborted is not None:
            self.fail(f"line {self.line}: a hand after the aborted hand {self.gid}")
        h = self.h
        n = h.players
        if any(s < 0 or s >= n for s in hj.seats) or len(set(hj.seats)) != len(hj.seats) or len(hj.seats) < 2:
            self.fail(f"line {self.line}: hand seats {hj.seats} are not distinct seats of this "
                      f"{n}-seat game")
        try:
            if self.match is not None:
                spec = self.match.next_hand()
                if spec is None:
                    self.fail(f"line {self.line}: a hand {hj.game} after the end of the match")
                want = {"index": spec.index, "game": f"{h.game}.h{spec.index + 1}", "seats": list(spec.seats),
                        "seed": spec.seed, "deal": None, "tiebreak": spec.tiebreak}
                state = self.match.new_game(spec)
            else:
                if self.hands:
                    self.fail(f"line {self.line}: a second hand in a single game")
                seed = h.seed if h.seed is not None else hj.seed
                deal = Deal.from_json(h.deal) if h.deal is not None else None
                state = self.rules.new_game(n, seed=seed, deal=deal)
                want = {"index": 1, "game": h.game, "seats": list(range(n)),
                        "seed": getattr(state, "seed", seed), "deal": h.deal, "tiebreak": False}
        except _Mismatch:
            raise
        except Exception as exc:
            self.fail(f"line {self.line}: the engine cannot rebuild hand {hj.game}: {exc}")
        want["dealer"] = getattr(state, "dealer", 0)
        if self.match is None:
            del want["tiebreak"]
        elif "tiebreak" not in raw["hand"]:
            self.fail(f"line {self.line}: the hand record of a match has no tiebreak field")
        for k, v in want.items():
            got = raw["hand"][k]
            if not _same(got, v):
                self.fail(f"line {self.line}: the hand record's {k} is {_short(got)}, the re-simulation "
                          f"has {_short(v)}")
        self.hands += 1
        self.report.hands = self.hands
        self.state = state
        self.gid = hj.game
        self.hseats = list(hj.seats)
        self.seat_of = {s: i for i, s in enumerate(hj.seats)}
        self.wire = self.rules.to_wire(len(self.hseats))  # start.rules for this table (chickens: rounds)
        self.seq = 0
        fr = getattr(state, "fallback_rng", None)
        self.fb = fr() if callable(fr) else Rng(derive(getattr(state, "seed", None) or 0, "fallback"))
        self.starting = True
        self.started = set()
        self.point = False
        self.batch = []
        self.batch_events = []
        self.decisions = 0
        self.hand_over = False
        self.hand_result = None
        self.hand_end_seen = False
        for s in self.hseats:
            c = self.clocks[s]
            self.bank_left[s] = c.bank_ms
            self.turn_sent[s] = None
        self.report.transcript.append(
            f"== {hj.game}: seats {', '.join(f'{i}={self.names[s]}' for i, s in enumerate(hj.seats))}, "
            f"dealer {want['dealer']}")

    def _start_msg(self, s: int) -> dict[str, Any]:
        c = self.clocks[s]
        clock: dict[str, Any] = {"move_ms": c.move_ms}
        if c.bank_ms is not None:
            clock["bank_ms"] = c.bank_ms
        if c.mode != "wall":
            clock["mode"] = c.mode
        hs = self.seat_of[s]
        return {"type": "start", "game": self.gid, "variant": self.rules.name, "rules": self.wire, "seat": hs,
                "seats": [self.names[x] for x in self.hseats], "dealer": getattr(self.state, "dealer", 0),
                "hand": self.state.hand(hs), "clock": clock}

    def _push_starts(self, upto: int) -> None:
        for hs in range(upto):
            s = self.hseats[hs]
            if s not in self.started:
                self.started.add(s)
                self.queue[s].append(("msg", self._start_msg(s)))

    def _broadcast(self, events: list[dict[str, Any]]) -> None:
        names = [self.names[s] for s in self.hseats]
        for ev in events:
            self.seq += 1
            for hs, s in enumerate(self.hseats):
                self.queue[s].append(("msg", {"type": "event", "game": self.gid, "seq": self.seq,
                                              **event_for_seat(ev, hs)}))
            if ev.get("kind") != "fault":
                self.report.transcript.append("   " + _describe(ev, names))

    def settle_start(self) -> None:
        """Queue what the runtime queues before the first decision: the
        remaining starts and the engine's initial events."""
        if self.starting:
            self._push_starts(len(self.hseats))
            self.starting = False
            self._broadcast(self.state.initial_events())
            self.point = True

    def materialize(self) -> None:
        """Queue the turns of the next decision (or the hand's end)."""
        self.settle_start()
        if not self.point:
            return
        self.point = False
        state = self.state
        pending = list(state.pending())
        if pending and self.decisions >= self.h.policy.max_decisions:
            self._finish("aborted", f"no end after {self.h.policy.max_decisions} decisions "
                                    "(FaultPolicy.max_decisions)")
            return
        if not pending:
            self._finish("complete", None)
            return
        self.decisions += 1
        self.batch = pending
        self.batch_events = []
        decide = state.decision()
        for hs in pending:
            s = self.hseats[hs]
            if s in self.faulted:
                continue
            c = self.clocks[s]
            view = state.view(hs)
            msg = {"type": "turn", "game": self.gid, "id": None, "decide": decide, **view,
                   "clock": {"left_ms": None, "move_ms": c.move_ms}}
            self.queue[s].append(("turn", msg))

    def _finish(self, reason: str, detail: str | None) -> None:
        n = len(self.hseats)
        if reason == "complete":
            scores: list[Any] = list(self.state.scores())
            ranks = ranks_from_scores(scores)
        else:
            scores, ranks = [0] * n, [1] * n
        forfeits = [hs for hs, s in enumerate(self.hseats) if s in self.faulted]
        for s in self.hseats:
            end: dict[str, Any] = {"type": "end", "game": self.gid, "scores": scores, "ranks": ranks,
                                   "reason": reason}
            if detail:
                end["detail"] = detail
            if forfeits:
                end["forfeits"] = forfeits
            self.queue[s].append(("end", end))
        self.hand_over = True
        self.hand_result = (scores, ranks, reason, detail)
        self.report.transcript.append(f"== {self.gid} ends: scores {scores}, ranks {ranks}"
                                      + ("" if reason == "complete" else f" (aborted: {detail})"))

    # ---------------------------------------------------------------- records
    def out(self, rec: OutRec) -> None:
        s = rec.to
        if not 0 <= s < self.h.players:
            self.fail(f"line {self.line}: a write to seat {s}, which is not a seat of this game")
        if self.state is None:
            self.fail(f"line {self.line}: a write to seat {s} before any hand starts")
        if self.retry_error is not None:
            rs, want, rline = self.retry_error
            self.retry_error = None
            if rs != s or len(rec.out) != 1 or not _same(rec.out[0], want):
                got = rec.out[0] if rs == s and len(rec.out) == 1 else rec.out
                self.fail(f"line {self.line}: the error sent to seat {rs} after the retry record of line {rline} "
                          f"differs from the re-simulation: {_diff(got, want)}")
            return
        for msg in rec.out:
            q = self.queue[s]
            if not q:
                if self.starting:
                    self.settle_start()
                if not q and self.point:
                    self.materialize()
            if not q:
                self.fail(f"line {self.line}: the referee sent seat {s} a {_what(msg)} the re-simulation "
                          f"does not expect here: {_short(msg)}")
            kind, want = q.popleft()
            if kind == "turn":
                self._check_turn(s, msg, want)
            elif not _same(msg, want):
                what = "error" if want.get("type") == "error" else f"referee's {_what(want)}"
                self.fail(f"line {self.line}: the {what} to seat {s} differs from the "
                          f"re-simulation: {_diff(msg, want)}")

    def _check_turn(self, s: int, msg: dict[str, Any], want: dict[str, Any]) -> None:
        tid = msg.get("id")
        clock = msg.get("clock")
        want = dict(want)
        want["id"] = tid
        c = self.clocks[s]
        if isinstance(clock, dict):
            left = clock.get("left_ms")
            want["clock"] = {"left_ms": left, "move_ms": c.move_ms}
            bad_left = type(left) is not int or (
                left != c.move_ms if c.bank_ms is None else left > (self.bank_left[s] or 0))  # < 0: overspent
        else:
            bad_left = False
        if not _same(msg, want):
            self.fail(f"line {self.line}: the referee's turn to seat {s} differs from the re-simulation: "
                      f"{_diff(msg, want)}")
        if type(tid) is not int or tid <= self.last_id[s]:
            self.fail(f"line {self.line}: turn id {_short(tid)} to seat {s} does not increase (the previous "
                      f"turn id was {self.last_id[s]})")
        if bad_left:
            what = (f"the move limit {c.move_ms}" if c.bank_ms is None
                    else f"at most the bank left ({self.bank_left[s]} ms)")
            self.fail(f"line {self.line}: the turn to seat {s} says left_ms {clock.get('left_ms')!r}, "  # type: ignore[union-attr]
                      f"expected {what}")
        if c.bank_ms is not None:
            self.bank_left[s] = clock["left_ms"]  # type: ignore[index]
        self.last_id[s] = tid
        self.turn_sent[s] = tid

    def act(self, a: ActJ) -> None:
        if self.state is None:
            self.fail(f"line {self.line}: an action before any hand starts")
        self.materialize()
        if self.hand_over:
            self.fail(f"line {self.line}: an action by seat {a.seat} after the hand ended")
        s = a.seat
        hs = self.seat_of.get(s)
        if hs is None:
            self.fail(f"line {self.line}: an action by seat {s}, which does not play hand {self.gid}")
        if not self.batch or self.batch[0] != hs:
            want = f"seat {self.hseats[self.batch[0]]}" if self.batch else "no action"
            self.fail(f"line {self.line}: an action by seat {s} is recorded, the re-simulation awaits {want}")
        state = self.state
        decide = state.decision()
        if a.decide != decide:
            self.fail(f"line {self.line}: a {a.decide} by seat {s} is recorded, the engine awaits a {decide}")
        name = self.names[s]
        if a.fallback:
            if s not in self.faulted:
                self.fail(f"line {self.line}: a fallback action for seat {s} ({name}), which has no fault")
            if a.id is not None:
                self.fail(f"line {self.line}: the fallback action for seat {s} has a turn id ({a.id})")
            assert self.fb is not None
            try:
                action = state.random_action(hs, self.fb)
            except Exception as exc:
                self.fail(f"line {self.line}: the fallback cannot play seat {s} here: {exc}")
            want = action_json(decide, action)
            if not _same(a.action, want):
                self.fail(f"line {self.line}: the fallback {decide} of seat {s} is {_short(a.action)}, the "
                          f"seeded fallback generator gives {_short(want)}")
            shown = want
        else:
            if s in self.faulted:
                self.fail(f"line {self.line}: seat {s} ({name}) faulted earlier, yet a reply of its own is "
                          "recorded instead of the fallback's")
            if self.turn_sent[s] is None:
                self.fail(f"line {self.line}: seat {s} answered, but no turn for this decision was sent to it")
            if a.id != self.turn_sent[s]:
                self.fail(f"line {self.line}: seat {s}'s reply is recorded for turn {a.id}, but the turn sent "
                          f"was {self.turn_sent[s]}")
            try:
                action = msgspec.convert(a.action, BotMessage)
            except msgspec.ValidationError as exc:
                self.fail(f"line {self.line}: seat {s}'s recorded reply is not a valid protocol reply: {exc}")
            if type(action) is not _REPLY[decide] or action.id != a.id:
                self.fail(f"line {self.line}: seat {s}'s recorded reply {_short(a.action)} does not answer "
                          f"its {decide} turn {a.id}")
            shown = a.action
        self.turn_sent[s] = None
        try:
            events = state.apply(hs, action)
        except Exception as exc:
            reason = getattr(exc, "reason", None) or f"{type(exc).__name__}: {exc}"
            self.fail(f"line {self.line}: the recorded {decide} of seat {s} ({name}) is not legal: {reason}")
        self.report.actions += 1
        who = name + (" (fallback)" if a.fallback else "")
        ms = "" if a.fallback else f" [{a.ms:.2f} ms]"
        self.report.transcript.append(f" {hs}:{who} {decide} {_fmt_action(shown)}{ms}")
        self.batch.pop(0)
        self.batch_events.extend(events)
        if not self.batch:
            self._broadcast(self.batch_events)
            self.batch_events = []
            self.point = True

    def fault(self, f: FaultJ, raw: dict[str, Any]) -> None:
        s = f.seat
        if not 0 <= s < self.h.players:
            self.fail(f"line {self.line}: a fault of seat {s}, which is not a seat of this game")
        if f.bot != self.names[s]:
            self.fail(f"line {self.line}: the fault names bot {f.bot!r}, seat {s} is {self.names[s]!r}")
        self.fault_recs.append(raw)
        self.report.faults.append(raw)
        self.report.transcript.append(f" !! fault: seat {s} ({f.bot}) {f.fault}: {f.detail}")
        if s in self.faulted:
            if f.fault != "stale":  # a timed-out bot's late line, read after its fault: no event
                self.fail(f"line {self.line}: a second {f.fault} fault for seat {s}, which faulted earlier")
            return
        if self.state is None or s not in self.seat_of or self.hand_end_seen:
            # (between the end of a hand and its hand_end record: a write of the end that failed)
            self.fail(f"line {self.line}: a {f.fault} fault of seat {s} outside its hand")
        if f.game != self.gid:
            self.fail(f"line {self.line}: the fault names game {f.game!r}, the hand being played is {self.gid!r}")
        hs = self.seat_of[s]
        if any(kind == "turn" for kind, _ in self.queue[s]):
            # a turn is always written (and logged) before its reply is awaited, even when the write fails
            self.fail(f"line {self.line}: the {f.fault} fault of seat {s} comes before the log shows the turn "
                      "sent to it")
        if self.starting:
            self._push_starts(hs)  # the runtime checks each seat just before queueing its start
        self.faulted.add(s)
        err: dict[str, Any] = {"type": "error", "game": self.gid, "fault": f.fault, "detail": f.detail}
        if f.id is not None:
            err["id"] = f.id
        self.queue[s].append(("msg", err))  # queued after the seat's pending lines, written at once
        self._broadcast([{"kind": "fault", "seat": hs, "fault": f.fault, "detail": public_fault_detail(f.fault)}])

    def retry(self, r: RetryJ) -> None:
        s = r.seat
        if not 0 <= s < self.h.players or s not in self.seat_of or s in self.faulted or self.hand_over:
            self.fail(f"line {self.line}: a retry of seat {s}, which is not awaited now")
        if r.fault not in ("illegal", "malformed"):
            self.fail(f"line {self.line}: a retry after a {r.fault} fault (only illegal and malformed replies "
                      "are retried)")
        if r.id != self.turn_sent[s]:
            self.fail(f"line {self.line}: a retry for turn {r.id} of seat {s}, whose current turn is "
                      f"{self.turn_sent[s]}")
        # written at once, on its own: the next record must be that write
        self.retry_error = (s, {"type": "error", "game": self.gid, "id": r.id, "fault": r.fault,
                                "detail": r.detail + retry_note(r.left)}, self.line)

    def hand_end(self, he: HandEndJ) -> None:
        if self.state is None:
            self.fail(f"line {self.line}: a hand_end before any hand")
        self.materialize()
        if not self.hand_over or self.hand_result is None:
            self.fail(f"line {self.line}: hand {self.gid} ends in the log, but the re-simulation is still "
                      f"awaiting seat(s) {[self.hseats[p] for p in self.state.pending()]}")
        if self.hand_end_seen:
            self.fail(f"line {self.line}: a second hand_end for {self.gid}")
        scores, ranks, reason, detail = self.hand_result
        got = {"game": he.game, "scores": he.scores, "ranks": he.ranks, "reason": he.reason}
        want = {"game": self.gid, "scores": [float(x) for x in scores], "ranks": ranks, "reason": reason}
        got["scores"] = [float(x) for x in he.scores]
        if got != want:
            self.fail(f"line {self.line}: the hand_end record differs from the re-simulation: {_diff(got, want)}")
        self.hand_end_seen = True
        self._check_delivered(final=False)
        if reason != "complete":
            self.aborted = detail
        if self.match is not None and reason == "complete":
            self.match.record(scores)
        self.final = (scores, ranks)

    def _check_delivered(self, final: bool) -> None:
        """Everything queued for a seat must have been written to it, unless its
        pipe closed after a fault (then only a tail may be missing)."""
        for s in range(self.h.players):
            q = self.queue[s]
            if q and s not in self.faulted:
                rest = [m for k, m in q if not (k == "msg" and m.get("kind") == "fault")]
                if rest or not final:
                    if not rest:
                        continue  # fault events queued after the end wait for the next write
                    kind, m = q[0]
                    self.fail(f"line {self.line}: the log never shows the {_what(m)} the re-simulation sends "
                              f"seat {s} ({self.names[s]}): {_short(m)}")

    def finish(self, tail: list[tuple[int, Any]], footer: FooterJ) -> None:
        interrupted = footer.reason == "aborted" and footer.detail == "the referee was interrupted"
        if interrupted:
            self.report.interrupted = True
        elif self.state is None:
            if footer.reason != "aborted":
                self.fail(f"line {self.line}: the log has no hand")
            self.aborted = footer.detail  # the game could not be set up
        elif not self.hand_end_seen and self.aborted is None:
            self.fail(f"line {self.line}: hand {self.gid} has no hand_end record")
        if self.match is not None and not interrupted and self.aborted is None and self.match.next_hand() is not None:
            self.fail(f"line {self.line}: the log ends before the match does (another hand is due)")
        n = self.h.players
        # stderr records: one per seat, in seat order
        seats_seen = []
        for line, rec in tail:
            self.line = line
            if not isinstance(rec, StderrRec):
                continue
            if rec.stderr.seat != len(seats_seen) or rec.stderr.seat >= n or rec.stderr.bot != self.names[rec.stderr.seat]:
                self.fail(f"line {line}: stderr record for seat {rec.stderr.seat} ({rec.stderr.bot!r}) out of "
                          f"place: one per seat, in seat order, is expected")
            seats_seen.append(rec.stderr.seat)
        self.line += 1
        if len(seats_seen) != n:
            self.fail(f"line {self.line}: {len(seats_seen)} stderr records for {n} seats")
        if not interrupted:
            self._check_delivered(final=True)
        forfeits = sorted({f["seat"] for f in self.fault_recs})
        if interrupted:
            return
        if self.aborted is not None:
            scores: list[Any] = [0] * n
            ranks = [1] * n
            reason, detail = "aborted", self.aborted
        elif self.match is not None:
            scores, ranks = self.match.scores(), self.match.ranks()
            reason, detail = "complete", None
        else:
            assert self.final is not None
            scores, ranks = self.final
            reason, detail = "complete", None
        want = {"scores": [float(x) for x in scores], "ranks": ranks, "forfeits": forfeits,
                "win_shares": share_wins(scores, forfeits), "reason": reason, "detail": detail,
                "faults": self.fault_recs}
        got = {"scores": [float(x) for x in footer.scores], "ranks": footer.ranks, "forfeits": footer.forfeits,
               "win_shares": [float(x) for x in footer.win_shares], "reason": footer.reason,
               "detail": footer.detail, "faults": [msgspec.to_builtins(f) for f in footer.faults]}
        for k in want:
            if got[k] != want[k]:
                self.fail(f"line {self.line}: the footer's {k} is {_short(got[k])}, the re-simulation has "
                          f"{_short(want[k])}")


def replay(path: str | Path) -> ReplayReport:
    """Replay the log at ``path`` (see the module docstring).

    Raises ``UserError`` for a missing, unreadable, corrupt or truncated log
    (naming the line). A well-formed log that differs from the re-simulation
    gives a report whose ``mismatches`` holds the first difference.
    """
    records = load_log(path)
    header: Header = records[0][1]
    footer: FooterJ = records[-1][1].footer
    report = ReplayReport(header=records[0][2], footer=records[-1][2]["footer"])
    if any(isinstance(r, HandRec) for _, r, _ in records) and not any(isinstance(r, OutRec) for _, r, _ in records):
        raise UserError(f"{path}: the log has no `out` records (the messages the referee sent); without them "
                        "it cannot be proved. Only logs written by this referee with their `out` records can be "
                        "replayed")
    sim: _Sim | None = None
    try:
        sim = _Sim(header, report)
        tail: list[tuple[int, Any]] = []
        for line, rec, raw in records[1:-1]:
            sim.line = line
            if isinstance(rec, StderrRec):
                tail.append((line, rec))
                continue
            if tail:
                sim.fail(f"line {line}: a game record after the stderr records")
            if sim.retry_error is not None and not isinstance(rec, OutRec):
                sim.fail(f"line {line}: the retry record of line {sim.retry_error[2]} must be followed by the "
                         f"error written to seat {sim.retry_error[0]}")
            if isinstance(rec, OutRec):
                sim.out(rec)
            elif isinstance(rec, ActRec):
                sim.act(rec.act)
            elif isinstance(rec, FaultRec):
                sim.fault(rec.fault, raw["fault"])
            elif isinstance(rec, HandRec):
                sim.hand(rec.hand, raw)
            elif isinstance(rec, HandEndRec):
                sim.hand_end(rec.hand_end)
            elif isinstance(rec, RetryRec):
                sim.retry(rec.retry)
            elif isinstance(rec, InRec):  # a refused reply: informational, but from a seat of this game
                if not 0 <= rec.from_ < header.players or (rec.in_ is None) == (rec.bad is None):
                    sim.fail(f"line {line}: a refused-reply record must come from a seat of this game and hold "
                             "either `in` or `bad`")
        sim.line = records[-1][0]
        sim.finish(tail, footer)
    except _Mismatch as exc:
        report.mismatches.append(str(exc))
    except UserError:
        raise
    except Exception as exc:  # a shape the checks above missed: still one clear sentence
        where = f"line {sim.line}" if sim is not None else "the header"
        report.mismatches.append(f"{where}: the log cannot be re-simulated here ({type(exc).__name__}: {exc})")
    return report


def _fmt_action(a: dict[str, Any]) -> str:
    if "target" in a:
        what = a.get("card") or a.get("family")
        return f"seat {a['target']} for {what}" + ("" if a.get("please", True) else " (rudely)")
    return str(a.get("card"))


def _describe(ev: dict[str, Any], names: list[str]) -> str:
    kind = ev.get("kind")
    rest = {k: v for k, v in ev.items() if k != "kind"}
    if kind == "ask":
        what = ev.get("card") or ev.get("family")
        got = ", ".join(ev.get("cards") or []) or ("nothing (rude)" if ev.get("rude") else "nothing")
        return f"ask: seat {ev['seat']} asks seat {ev['target']} for {what}: gets {got}; next {ev.get('next')}"
    if kind == "laid":
        return f"laid: seat {ev['seat']} lays family {ev['family']}"
    if kind == "draw":
        return f"draw: seat {ev['seat']} draws" + (f" {ev['card']}" if "card" in ev else "")
    if kind == "take":
        return f"take: seat {ev['seat']} takes {ev['card']}; centre {ev.get('centre')}"
    if kind == "reveal":
        return f"reveal: {ev.get('plays')}; centre {ev.get('centre')}"
    return f"{kind}: " + ", ".join(f"{k}={v}" for k, v in rest.items())
