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
  bank, and with a bank is ``int(bank - think times charged this hand)``,
  computed from the log's own ``ms`` (see timing below). Only the order of the messages to one seat is
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

Timing (measured, so checked for consistency, within the rounding of the log:
0.001 ms for ``ms``, 1 us for ``t``):

* ``t`` never decreases from record to record and is never negative;
* a bot's accepted reply (``act``, fallback false): ``ms`` >= 0 and at most
  the decision's limit (``move_ms``, or min(``move_ms``, bank left) with a
  bank). With the cpu clock ``ms`` is CPU time, checked strictly, and
  ``wall_ms`` (>= 0) is under the wall ceiling; without ``wall_ms`` (no
  ``/proc``) ``ms`` is wall time. A wall time may exceed its limit by
  ``LATE_MS``: game.py accepts a line that is ready when it next runs and
  measures it then, so an overloaded referee records late reads. ``wall_ms``
  appears only with the cpu clock; a fallback has ``ms`` 0;
* the wall time of a reply (``act``, refused ``in``/``bad``) fits between the
  ``t`` of the record that carried its turn (written first, timed from after
  the write) and its own ``t`` (taken after the read); a wall-clock
  ``timeout`` fault comes at least the limit after its turn;
* the bank: each turn's ``left_ms`` is ``int(bank_ms - ms charged)``; game.py
  charges each decision's final outcome once (an accepted reply, or the
  attempt that faulted; retried attempts are not charged separately, the time
  always runs from the turn), and the bank restarts each hand;
* the footer's ``think_ms`` per seat: ``count`` = accepted replies + the
  decision a fault with a turn id ended; ``mean_ms`` and ``max_ms`` from the
  logged times; a timeout's or crash's time is not logged, so with one of
  them only bounds are checked (a wall timeout took at least its limit).
  Not checked for an interrupted log (a reply may be counted before its act
  record is written).

Free fields (not provable, not checked): stderr tails, the bots' commands and
hellos, each seat's ``sandbox`` description, the content of refused replies
(``in``/``bad``).

No bots, no trio, no I/O besides reading the file. Pure function of the
file: never raises anything but ``UserError``.
"""

from __future__ import annotations

import math
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
    wall_ms: float | None = None  # cpu clock: the decision's wall time (``ms`` is then CPU time)


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


# ----------------------------------------------------------------------------- timing

#: ``ms`` and ``wall_ms`` are logged to 0.001 ms (error up to 0.0005 each), ``t`` to 1 microsecond
_ROUND_MS = 0.0005
#: what rounding and float arithmetic can add to a comparison of one logged time with a limit
_TOL_MS = 0.002
#: an accepted reply's wall time may exceed its limit by this much. game.py accepts a line that is
#: ready when its task runs again, and measures the time then: a referee process the OS did not run
#: for a while (an overloaded host) accepts replies measured well past the limit (+400 ms seen with
#: move_ms 100 on a host running 36 games at once). The log does not tell those from forgeries;
#: what it does bound exactly is the span between the turn and the act (see _Timing._span). CPU
#: time (cpu clock) is compared with the limit after it is measured, so it gets no such allowance
LATE_MS = 1000.0
#: slack between the two monotonic clocks of the referee (the log's ``t``, trio's clock for ``ms``)
_SPAN_TOL_MS = 1.0


def _num(x: Any) -> bool:
    return type(x) in (int, float) and math.isfinite(x)


class _Timing:
    """The timing the log determines, per match seat (see the module docstring):
    the limit of each accepted reply, the bank behind each turn's ``left_ms``,
    the order of ``t`` between a turn and what answers it, and the footer's
    ``think_ms``. ``game.py`` charges a decision's final outcome (an accepted
    reply, or the faulting attempt; never a forgiven attempt separately, the
    measure always runs from the turn) to the seat's think stats and bank."""

    def __init__(self, sim: "_Sim", n: int) -> None:
        self.sim = sim
        self.bank: list[float | None] = [None] * n   # the bank left (from the recorded ms) this hand
        self.charges = [0] * n                       # recorded ms subtracted from it (rounding error)
        self.turn_t: list[float | None] = [None] * n  # t of the record that carried the seat's last turn
        self.turn_line = [0] * n
        self.last_in: list[float | None] = [None] * n  # ms of the seat's last refused reply to this turn
        self.count = [0] * n
        self.known: list[list[float]] = [[] for _ in range(n)]   # measured ms the log records
        self.lower: list[list[float]] = [[] for _ in range(n)]   # lower bounds of ms the log does not record

    def fail(self, text: str) -> None:
        self.sim.fail(f"line {self.sim.line}: {text}")

    def _eps(self, s: int) -> float:
        return _ROUND_MS * self.charges[s] + _TOL_MS

    def limit(self, s: int) -> tuple[float, float]:
        """The decision's limit in ms (min(move_ms, bank left) with a bank): (lowest, highest) possible."""
        c = self.sim.clocks[s]
        bank = self.bank[s]
        if bank is None:
            return float(c.move_ms), float(c.move_ms)
        e = self._eps(s)
        return max(0.0, min(c.move_ms, bank - e)), max(0.0, min(c.move_ms, bank + e))

    def ceiling(self, s: int) -> float:
        c = self.sim.clocks[s]
        if c.wall_ceiling_ms is not None:
            return float(c.wall_ceiling_ms)
        return 3.0 * c.move_ms if c.mode == "cpu" else float(c.move_ms)

    def new_hand(self, s: int) -> None:
        bank = self.sim.clocks[s].bank_ms
        self.bank[s] = float(bank) if bank is not None else None
        self.charges[s] = 0

    def _charge(self, s: int, ms: float) -> None:
        if self.bank[s] is not None:
            self.bank[s] -= ms  # type: ignore[operator]
            self.charges[s] += 1

    # ------------------------------------------------------------ records
    def turn(self, s: int, left: Any) -> None:
        """A turn to seat ``s`` (its out record's ``t`` is ``sim.rec_t``) says ``left_ms``."""
        c = self.sim.clocks[s]
        bank = self.bank[s]
        if bank is None:
            if not _same(left, c.move_ms):
                self.fail(f"the turn to seat {s} says clock.left_ms {_short(left)}, expected the move limit "
                          f"{c.move_ms} (no bank)")
        else:
            # game.py sends int(bank left), the bank minus the think times charged so far
            e = self._eps(s)
            lo, hi = int(bank - e), int(bank + e)
            if type(left) is not int or not lo <= left <= hi:
                want = str(lo) if lo == hi else f"{lo} to {hi}"
                self.fail(f"the turn to seat {s} says clock.left_ms {_short(left)}, expected {want} (bank_ms "
                          f"{c.bank_ms} minus the {self.charges[s]} think time(s) recorded for it this hand)")
        self.turn_t[s] = self.sim.rec_t
        self.turn_line[s] = self.sim.line
        self.last_in[s] = None

    def _span(self, s: int, t: float, ms: float, what: str) -> None:
        """``ms`` of wall time measured from after the turn's write to before a record at ``t``."""
        t0 = self.turn_t[s]
        if t0 is None:
            return
        if t < t0:
            self.fail(f"{what} of seat {s} has t {t}, before t {t0} of the turn it answers (line "
                      f"{self.turn_line[s]})")
        span = (t - t0) * 1000
        if ms > span + _SPAN_TOL_MS:
            self.fail(f"{what} of seat {s} records {ms} ms of wall time, but only {span:.3f} ms passed between "
                      f"the turn (line {self.turn_line[s]}, t {t0}) and this record (t {t})")

    def act(self, s: int, a: ActJ) -> None:
        t = self.sim.rec_t
        c = self.sim.clocks[s]
        if a.fallback:
            if a.ms != 0 or a.wall_ms is not None:
                self.fail(f"the fallback action of seat {s} has act.ms {a.ms}"
                          + ("" if a.wall_ms is None else f" and act.wall_ms {a.wall_ms}")
                          + ", expected ms 0 and no wall_ms (nobody thought)")
            return
        if not _num(a.ms) or a.ms < 0:
            self.fail(f"seat {s}'s reply has act.ms {a.ms}, expected a think time of 0 ms or more")
        lo, hi = self.limit(s)
        what = f"min(move_ms {c.move_ms}, bank left {self.bank[s]:.3f})" if self.bank[s] is not None else \
            f"move_ms {c.move_ms}"
        wall = a.ms
        if c.mode == "cpu" and a.wall_ms is not None:
            # ms is CPU time, compared with the limit once measured; wall_ms is under the wall ceiling
            if a.ms > hi + _TOL_MS:
                self.fail(f"seat {s}'s accepted reply has act.ms {a.ms} ms of CPU time, over its limit of "
                          f"{hi:.3f} ms ({what}), with no timeout fault")
            if not _num(a.wall_ms) or a.wall_ms < 0:
                self.fail(f"seat {s}'s reply has act.wall_ms {a.wall_ms}, expected a wall time of 0 ms or more")
            ceiling = self.ceiling(s)
            if a.wall_ms > ceiling + LATE_MS:
                self.fail(f"seat {s}'s accepted reply has act.wall_ms {a.wall_ms}, over the wall ceiling of "
                          f"{ceiling:.0f} ms by more than the {LATE_MS:.0f} ms allowed for a late read, with "
                          "no timeout fault")
            wall = a.wall_ms
        else:
            if a.wall_ms is not None:
                self.fail(f"seat {s}'s reply has act.wall_ms {a.wall_ms} under a wall clock (wall_ms is only "
                          "logged with the cpu clock)")
            # wall time (also the cpu clock without /proc): the line arrived before the deadline,
            # its time is measured when it is read
            if a.ms > hi + _TOL_MS + LATE_MS:
                self.fail(f"seat {s}'s accepted reply has act.ms {a.ms}, over its limit of {hi:.3f} ms "
                          f"({what}) by more than the {LATE_MS:.0f} ms allowed for a late read, with no "
                          "timeout fault")
        self._span(s, t, wall, "the act")
        self._charge(s, a.ms)
        self.count[s] += 1
        self.known[s].append(a.ms)

    def inbound(self, s: int, rec: InRec) -> None:
        if not _num(rec.ms) or rec.ms < 0:
            self.fail(f"the refused reply of seat {s} has ms {rec.ms}, expected a time of 0 ms or more")
        self._span(s, rec.t, rec.ms, "the refused reply")
        if s not in self.sim.faulted:
            self.last_in[s] = rec.ms

    def retry(self, s: int) -> None:
        self.last_in[s] = None  # the forgiven attempt is not charged; the decision goes on

    def fault(self, s: int, f: FaultJ) -> None:
        """The seat's first fault: if it ends a decision (it names a turn), that decision is charged."""
        if f.id is None:
            return  # not a decision's outcome (dead at the start, a failed write): nothing measured
        self.count[s] += 1
        if f.fault in ("malformed", "illegal", "stale") and self.last_in[s] is not None:
            self.known[s].append(self.last_in[s])  # the faulting reply, logged with its time
            return
        lo, _ = self.limit(s)
        c = self.sim.clocks[s]
        if f.fault == "timeout" and c.mode == "wall":
            # the wait ran out: at least the limit passed since the turn was written
            t0 = self.turn_t[s]
            if t0 is not None and (self.sim.rec_t - t0) * 1000 < lo - _SPAN_TOL_MS:
                self.fail(f"the timeout fault of seat {s} has t {self.sim.rec_t}, only "
                          f"{(self.sim.rec_t - t0) * 1000:.3f} ms after its turn (line {self.turn_line[s]}, "
                          f"t {t0}); its limit is {lo:.3f} ms")
            self.lower[s].append(lo)
        else:
            self.lower[s].append(0.0)  # a crash, a line too long, CPU time: not in the log

    def footer(self, think: list[Any]) -> None:
        n = len(self.count)
        if not isinstance(think, list) or len(think) != n:
            self.fail(f"the footer's think_ms has {len(think) if isinstance(think, list) else _short(think)} "
                      f"entries, expected one per seat ({n})")
        for s, got in enumerate(think):
            where = f"the footer's think_ms[{s}]"
            if not isinstance(got, dict) or not {"count", "mean_ms", "max_ms"} <= got.keys() or \
                    not got.keys() <= {"count", "mean_ms", "max_ms", "total_ms"}:
                self.fail(f"{where} is {_short(got)}, expected count, mean_ms and max_ms")
            count, mean, mx = got["count"], got["mean_ms"], got["max_ms"]
            if type(count) is not int or count != self.count[s]:
                self.fail(f"{where}.count is {_short(count)}, expected {self.count[s]} (seat {s}'s accepted "
                          "replies and the decision its fault ended)")
            for k in ("mean_ms", "max_ms", "total_ms"):
                if k in got and (not _num(got[k]) or got[k] < 0):
                    self.fail(f"{where}.{k} is {_short(got[k])}, expected a time of 0 ms or more")
            known, lower = self.known[s], self.lower[s]
            total = mean * count
            tol_total = _ROUND_MS * (count + len(known)) + _TOL_MS
            if "total_ms" in got:
                if abs(got["total_ms"] - total) > _ROUND_MS * (count + 1) + _TOL_MS:
                    self.fail(f"{where}.total_ms is {got['total_ms']}, but mean_ms x count is {total:.3f}")
            if count == 0:
                if mean != 0 or mx != 0:
                    self.fail(f"{where} has mean_ms {mean} and max_ms {mx} for no decision, expected 0")
                continue
            ksum, kmax = sum(known), max(known, default=0.0)
            if not lower:  # every charged time is in the log: exact up to rounding
                if abs(total - ksum) > tol_total:
                    self.fail(f"{where}.mean_ms is {mean}, expected {ksum / count:.3f} (the mean of the "
                              f"{count} think time(s) recorded for seat {s})")
                if abs(mx - kmax) > 2 * _ROUND_MS + _TOL_MS:
                    self.fail(f"{where}.max_ms is {mx}, expected {kmax:.3f} (the longest think time recorded "
                              f"for seat {s})")
                continue
            # some charged times are not logged (a timeout, a crash): bounds only
            floor = max([kmax, *lower])
            if mx < floor - 2 * _ROUND_MS - _TOL_MS:
                self.fail(f"{where}.max_ms is {mx}, expected at least {floor:.3f} (recorded for seat {s})")
            least = ksum + sum(lower)
            if mx > kmax + 2 * _ROUND_MS + _TOL_MS:  # then one unlogged time is the maximum
                least = ksum + mx + sum(lower) - max(lower)
            most = ksum + len(lower) * mx
            if not least - tol_total <= total <= most + tol_total:
                self.fail(f"{where}.mean_ms is {mean}, expected between {least / count:.3f} and "
                          f"{most / count:.3f} (seat {s}'s {len(known)} recorded think time(s) and "
                          f"{len(lower)} unrecorded one(s))")



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
        self.hand_end_seen = False
        # timing (see _Timing): per match seat, across hands
        self.timing = _Timing(self, n)
        self.rec_t = 0.0  # t of the record being replayed

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
            self.timing.new_hand(s)
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
        if not _same(msg, want):
            self.fail(f"line {self.line}: the referee's turn to seat {s} differs from the re-simulation: "
                      f"{_diff(msg, want)}")
        if type(tid) is not int or tid <= self.last_id[s]:
            self.fail(f"line {self.line}: turn id {_short(tid)} to seat {s} does not increase (the previous "
                      f"turn id was {self.last_id[s]})")
        self.timing.turn(s, clock["left_ms"])  # type: ignore[index]
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
        self.timing.act(s, a)
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
        if f.id is not None and f.id != self.turn_sent[s]:
            self.fail(f"line {self.line}: the {f.fault} fault of seat {s} names turn {f.id}, but the turn awaited "
                      f"from it is {self.turn_sent[s]}")
        if any(kind == "turn" for kind, _ in self.queue[s]):
            # a turn is always written (and logged) before its reply is awaited, even when the write fails
            self.fail(f"line {self.line}: the {f.fault} fault of seat {s} comes before the log shows the turn "
                      "sent to it")
        if self.starting:
            self._push_starts(hs)  # the runtime checks each seat just before queueing its start
        self.timing.fault(s, f)
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
        self.timing.retry(s)
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
        self.timing.footer(footer.think_ms)


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
        last_t, last_line = 0.0, 1
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
            t = getattr(rec, "t", None)
            if t is not None:  # every record but hand, hand_end, stderr and footer is timed
                if not _num(t) or t < last_t:
                    sim.fail(f"line {line}: t is {t}, "
                             + ("expected a time in seconds since the game started" if not _num(t) or t < 0 else
                                f"before t {last_t} of line {last_line} (times never decrease)"))
                sim.rec_t = last_t = t
                last_line = line
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
                sim.timing.inbound(rec.from_, rec)
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
