"""Re-simulate a game log with the hand machine and prove it.

:func:`load_log` reads a log and checks the shape of every record (the Structs
of :mod:`referee.core.records`, strict); a missing, unreadable, corrupt or
truncated file raises ``UserError`` naming the line (``<log> line 7: ...``):
the CLI prints ``error: ...`` and exits 2.

:func:`replay` then drives the same hand machine that played the game
(:class:`referee.core.machine.HandMachine`) with what the log records as the
bots' doing - each reply as received, each refused line, each timeout, crash
and failed write, the stale lines of a timed-out bot, each stderr tail - and
compares everything the machine emits with the log, record by record: every
message sent to every seat (``start``, events with their ``seq``, turns,
``error`` messages, ``end``), every action (a fallback move must be the one the
seeded fallback generator draws), every fault, retry, hand and hand end, and
the footer (scores, ranks, win shares, forfeits, faults). The log cannot hold
anything the machine would not have written for those inputs, nor miss
anything, except that a seat that faulted may miss the tail of its messages
(its pipe may have closed; the log does not say when).

Only the audit of measured times is replay's own (:class:`_Timing`):

* ``t`` never decreases from record to record and is never negative;
* a bot's accepted reply: ``ms`` >= 0 and at most the decision's limit
  (``move_ms``, or min(``move_ms``, bank left) with a bank). With the cpu clock
  ``ms`` is CPU time, checked strictly, and ``wall_ms`` is under the wall
  ceiling; a wall time may exceed its limit by ``LATE_MS`` (a reply already
  waiting when an overloaded referee got to run is accepted and measured
  then); a fallback has ``ms`` 0;
* the wall time of a reply fits between the ``t`` of the record that carried
  its turn and its own ``t``; a wall-clock ``timeout`` comes at least the
  limit after its turn;
* the bank: each turn's ``left_ms`` is ``int(bank_ms - ms charged)`` (each
  decision's final outcome is charged once; the bank restarts each hand);
* the footer's ``think_ms``: counts exact, means and maxima from the logged
  times (bounds only when a timeout's or crash's time is not logged).

Free fields (not provable, not checked): stderr tails, the referee version,
the bots' commands, hellos and sandbox, the start date.

A log cut short by Ctrl-C (footer reason ``aborted``, detail "the referee was
interrupted") is verified up to the interruption (``ReplayReport.interrupted``);
a log that reached its size cap is verified up to its ``capped`` record
(``ReplayReport.capped``). The first difference stops the replay; the report's
``mismatches`` then holds one sentence naming the log line, e.g. ``line 57:
the referee's turn to seat 2 differs from the re-simulation: hand ...``.

Log versions 1 and 2 are read. Version 1 logs recorded the refused replies and
faults of a simultaneous decision as they arrived (the machine reproduces that
with ``canonical=False``), did not record a refused line's number (taken from
the fault or retry that follows it), nor a too-long line, nor the ``error``
sent for a stale line.

No bots, no trio, no I/O besides reading the file. Pure function of the file:
never raises anything but ``UserError``.
"""

from __future__ import annotations

import math
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from protocol.messages import PROTOCOL_VERSION
from referee.core.machine import HandMachine
from referee.core.records import (
    LOG_KIND,
    READABLE_VERSIONS,
    ActInfo,
    ActRec,
    CappedRec,
    FaultRec,
    FooterInfo,
    FooterRec,
    HandEndRec,
    HandRec,
    Header,
    InRec,
    OutRec,
    RetryRec,
    StderrRec,
    bad_line_bytes,
    bad_line_fields,
    record_type,
)
from referee.core.spec import FaultRecord, GameSpec
from referee.errors import UserError
from referee.rules import AskRules, Deal, Rules, get_variant
from referee.rules.match import MatchFormat
from referee.runtime.gamelog import read_log_bytes

__all__ = ["ReplayReport", "load_log", "replay", "replay_records"]


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
    capped: bool = False

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
    card-referee game log of a version this referee reads, or the footer is
    missing (truncated).
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
    try:
        data = read_log_bytes(data)
    except ValueError as exc:
        raise UserError(f"{p}: {exc}; this log cannot be replayed") from None
    return parse_log(data, str(p))


def parse_log(data: bytes, name: str) -> list[tuple[int, Any, dict[str, Any]]]:
    """:func:`load_log` of the bytes of a log (``name`` names it in errors)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        raise UserError(f"{name} is empty; this is not a card-referee game log")
    out: list[tuple[int, Any, dict[str, Any]]] = []
    decode = msgspec.json.decode
    for i, line in enumerate(lines, 1):
        try:
            raw = decode(line)
        except (msgspec.DecodeError, RecursionError):
            what = "the last line is cut off" if i == len(lines) else "it is corrupt"
            raise UserError(f"{name} line {i} is not JSON ({what}); this log cannot be replayed") from None
        if not isinstance(raw, dict):
            raise UserError(f"{name} line {i} is not a JSON object; this is not a card-referee game log")
        if i == 1:
            if raw.get("log") != LOG_KIND:
                raise UserError(f"{name} line 1 is not a card-referee game log header")
            if raw.get("log_version") not in READABLE_VERSIONS:
                raise UserError(
                    f"{name} line 1: log version {raw.get('log_version')!r}; this referee reads "
                    f"versions {', '.join(map(str, READABLE_VERSIONS))}"
                )
            typ: type = Header
            what = "header"
        else:
            found = record_type(raw)
            if found is None:
                raise UserError(f"{name} line {i}: not a known log record (keys {', '.join(sorted(raw)) or 'none'})")
            what, typ = found
        try:
            rec: Any = msgspec.convert(raw, typ)
        except msgspec.ValidationError as exc:
            raise UserError(f"{name} line {i}: malformed {what} record: {exc}") from None
        out.append((i, rec, raw))
    if not isinstance(out[-1][1], FooterRec):
        raise UserError(f"{name} is truncated: it has no footer (the referee stopped before the game ended)")
    for i, rec, _ in out[1:-1]:
        if isinstance(rec, FooterRec):
            raise UserError(f"{name} line {i}: a footer before the last line; this log is corrupt")
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


def _same_num(a: Any, b: Any) -> bool:
    """Equality where whole numbers and floats of the same value agree (scores)."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_num(x, y) for x, y in zip(a, b))
    if type(a) in (int, float) and type(b) in (int, float):
        return bool(a == b)
    return _same(a, b)


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


def _what(msg: Any) -> str:
    if not isinstance(msg, dict):
        return "message"
    t = msg.get("type")
    if t == "event":
        return f"{msg.get('kind')} event (seq {msg.get('seq')})"
    if t == "error" and "corrected reply" in str(msg.get("detail", "")):
        return "error sent"
    return f"{t}" if isinstance(t, str) else "message"


_LINE_NO = re.compile(r"line (\d+)")


# ----------------------------------------------------------------------------- the machine's records


class _Expect:
    """The sink the machine writes to during a replay: its records, in the log's
    dict form (without ``t``), queued for comparison with the log."""

    def __init__(self) -> None:
        self.q: deque[tuple[str, dict[str, Any]]] = deque()

    def record(self, rec: dict[str, Any]) -> None:
        key = next(iter(rec))
        self.q.append((key, msgspec.json.decode(msgspec.json.encode(rec))))

    def timed(self, key: str, value: Any) -> None:
        self.q.append((key, {key: msgspec.json.decode(msgspec.json.encode(value))}))

    def out(self, seat: int, lines: list[bytes]) -> None:
        self.q.append(("out", {"to": seat, "out": [msgspec.json.decode(x) for x in lines]}))

    def inbound(
        self, seat: int, raw: bytes, ms: float, ok: bool, lineno: int | None = None, long: bool = False
    ) -> None:
        rec: dict[str, Any] = {"from": seat}
        if ok:
            rec["in"] = msgspec.json.decode(raw)
        else:
            rec.update(bad_line_fields(raw))
        rec["ms"] = round(ms, 3)
        if lineno is not None:
            rec["line"] = lineno
        if long:
            rec["long"] = True
        self.q.append(("in" if ok else "bad", rec))

    def act_raw(
        self, seat: int, turn_id: int, decide: str, raw: bytes, ms: float, wall_ms: float | None = None
    ) -> None:
        act: dict[str, Any] = {"seat": seat, "id": turn_id, "decide": decide, "fallback": False, "ms": round(ms, 3)}
        if wall_ms is not None:
            act["wall_ms"] = round(wall_ms, 3)
        act["action"] = msgspec.json.decode(raw)
        self.q.append(("act", {"act": act}))


class _Transcript:
    """The machine's observer during a replay: the readable transcript."""

    def __init__(self, report: ReplayReport, names: list[str]) -> None:
        self.report = report
        self.names = names

    def hand_started(self, m: HandMachine) -> None:
        self.report.hands += 1
        seats = ", ".join(f"{s.hs}={s.name}" for s in m.hand_seats)
        self.report.transcript.append(f"== {m.gid}: seats {seats}, dealer {getattr(m.state, 'dealer', 0)}")

    def applied(
        self,
        m: HandMachine,
        seat: int,
        decide: str,
        action: Any,
        events: list[dict[str, Any]],
        fallback: bool,
        ms: float | None,
    ) -> None:
        self.report.actions += 1
        who = self.names[seat] + (" (fallback)" if fallback else "")
        took = "" if ms is None else f" [{ms:.2f} ms]"
        hs = m.seats[seat].hs
        self.report.transcript.append(f" {hs}:{who} {decide} {_fmt_action(action)}{took}")
        for ev in events:
            if ev.get("kind") != "fault":
                self.report.transcript.append("   " + _describe(ev))

    def faulted(self, m: HandMachine, rec: FaultRecord) -> None:
        self.report.transcript.append(f" !! fault: seat {rec.seat} ({rec.bot}) {rec.fault}: {rec.detail}")

    def retried(self, m: HandMachine, seat: int, fault: str, detail: str, left: int) -> None:
        self.report.transcript.append(f" !! retry: seat {seat} ({self.names[seat]}) {fault}: {detail}")

    def hand_ended(self, m: HandMachine, scores: list[Any], ranks: list[int], reason: str, detail: str | None) -> None:
        note = "" if reason == "complete" else f" ({reason}{': ' + detail if detail else ''})"
        self.report.transcript.append(f"== {m.gid} ends: scores {scores}, ranks {ranks}{note}")


def _fmt_action(a: Any) -> str:
    target = getattr(a, "target", None)
    if target is not None:
        what = getattr(a, "card", None) or getattr(a, "family", None)
        return f"seat {target} for {what}" + (" (please)" if getattr(a, "please", False) else "")
    return str(getattr(a, "card", a))


def _describe(ev: dict[str, Any]) -> str:
    kind = ev.get("kind")
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
    rest = {k: v for k, v in ev.items() if k != "kind"}
    return f"{kind}: " + ", ".join(f"{k}={v}" for k, v in rest.items())


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

    def __init__(self, sim: "_Replay", n: int) -> None:
        self.sim = sim
        self.bank: list[float | None] = [None] * n  # the bank left (from the recorded ms) this hand
        self.charges = [0] * n  # recorded ms subtracted from it (rounding error)
        self.turn_t: list[float | None] = [None] * n  # t of the record that carried the seat's last turn
        self.turn_line = [0] * n
        self.last_in: list[float | None] = [None] * n  # ms of the seat's last refused reply to this turn
        self.count = [0] * n
        self.known: list[list[float]] = [[] for _ in range(n)]  # measured ms the log records
        self.lower: list[list[float]] = [[] for _ in range(n)]  # lower bounds of ms the log does not record

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
                self.fail(
                    f"the turn to seat {s} says clock.left_ms {_short(left)}, expected the move limit "
                    f"{c.move_ms} (no bank)"
                )
        else:
            # game.py sends int(bank left), the bank minus the think times charged so far
            e = self._eps(s)
            lo, hi = int(bank - e), int(bank + e)
            if type(left) is not int or not lo <= left <= hi:
                want = str(lo) if lo == hi else f"{lo} to {hi}"
                self.fail(
                    f"the turn to seat {s} says clock.left_ms {_short(left)}, expected {want} (bank_ms "
                    f"{c.bank_ms} minus the {self.charges[s]} think time(s) recorded for it this hand)"
                )
        self.turn_t[s] = self.sim.rec_t
        self.turn_line[s] = self.sim.line
        self.last_in[s] = None

    def _span(self, s: int, t: float, ms: float, what: str) -> None:
        """``ms`` of wall time measured from after the turn's write to before a record at ``t``."""
        t0 = self.turn_t[s]
        if t0 is None:
            return
        if t < t0:
            self.fail(f"{what} of seat {s} has t {t}, before t {t0} of the turn it answers (line {self.turn_line[s]})")
        span = (t - t0) * 1000
        if ms > span + _SPAN_TOL_MS:
            self.fail(
                f"{what} of seat {s} records {ms} ms of wall time, but only {span:.3f} ms passed between "
                f"the turn (line {self.turn_line[s]}, t {t0}) and this record (t {t})"
            )

    def act(self, s: int, a: ActInfo) -> None:
        t = self.sim.rec_t
        c = self.sim.clocks[s]
        if a.fallback:
            if a.ms != 0 or a.wall_ms is not None:
                self.fail(
                    f"the fallback action of seat {s} has act.ms {a.ms}"
                    + ("" if a.wall_ms is None else f" and act.wall_ms {a.wall_ms}")
                    + ", expected ms 0 and no wall_ms (nobody thought)"
                )
            return
        if not _num(a.ms) or a.ms < 0:
            self.fail(f"seat {s}'s reply has act.ms {a.ms}, expected a think time of 0 ms or more")
        lo, hi = self.limit(s)
        what = (
            f"min(move_ms {c.move_ms}, bank left {self.bank[s]:.3f})"
            if self.bank[s] is not None
            else f"move_ms {c.move_ms}"
        )
        wall = a.ms
        if c.mode == "cpu" and a.wall_ms is not None:
            # ms is CPU time, compared with the limit once measured; wall_ms is under the wall ceiling
            if a.ms > hi + _TOL_MS:
                self.fail(
                    f"seat {s}'s accepted reply has act.ms {a.ms} ms of CPU time, over its limit of "
                    f"{hi:.3f} ms ({what}), with no timeout fault"
                )
            if not _num(a.wall_ms) or a.wall_ms < 0:
                self.fail(f"seat {s}'s reply has act.wall_ms {a.wall_ms}, expected a wall time of 0 ms or more")
            ceiling = self.ceiling(s)
            if a.wall_ms > ceiling + LATE_MS:
                self.fail(
                    f"seat {s}'s accepted reply has act.wall_ms {a.wall_ms}, over the wall ceiling of "
                    f"{ceiling:.0f} ms by more than the {LATE_MS:.0f} ms allowed for a late read, with "
                    "no timeout fault"
                )
            wall = a.wall_ms
        else:
            if a.wall_ms is not None:
                self.fail(
                    f"seat {s}'s reply has act.wall_ms {a.wall_ms} under a wall clock (wall_ms is only "
                    "logged with the cpu clock)"
                )
            # wall time (also the cpu clock without /proc): the line arrived before the deadline,
            # its time is measured when it is read
            if a.ms > hi + _TOL_MS + LATE_MS:
                self.fail(
                    f"seat {s}'s accepted reply has act.ms {a.ms}, over its limit of {hi:.3f} ms "
                    f"({what}) by more than the {LATE_MS:.0f} ms allowed for a late read, with no "
                    "timeout fault"
                )
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

    def fault(self, s: int, f: FaultRecord) -> None:
        """The seat's first fault: if it ends a decision (it names a turn), that decision is charged."""
        if f.decision_id is None:
            return  # not a decision's outcome (dead at the start, a failed write): nothing measured
        self.count[s] += 1
        last = self.last_in[s]
        if f.fault in ("malformed", "illegal", "stale") and last is not None:
            self.known[s].append(last)  # the faulting reply, logged with its time
            return
        lo, _ = self.limit(s)
        c = self.sim.clocks[s]
        if f.fault == "timeout" and c.mode == "wall":
            # the wait ran out: at least the limit passed since the turn was written
            t0 = self.turn_t[s]
            if t0 is not None and (self.sim.rec_t - t0) * 1000 < lo - _SPAN_TOL_MS:
                self.fail(
                    f"the timeout fault of seat {s} has t {self.sim.rec_t}, only "
                    f"{(self.sim.rec_t - t0) * 1000:.3f} ms after its turn (line {self.turn_line[s]}, "
                    f"t {t0}); its limit is {lo:.3f} ms"
                )
            self.lower[s].append(lo)
        else:
            self.lower[s].append(0.0)  # a crash, a line too long, CPU time: not in the log

    def footer(self, think: list[Any]) -> None:
        n = len(self.count)
        if not isinstance(think, list) or len(think) != n:
            self.fail(
                f"the footer's think_ms has {len(think) if isinstance(think, list) else _short(think)} "
                f"entries, expected one per seat ({n})"
            )
        for s, got in enumerate(think):
            where = f"the footer's think_ms[{s}]"
            if (
                not isinstance(got, dict)
                or not {"count", "mean_ms", "max_ms"} <= got.keys()
                or not got.keys() <= {"count", "mean_ms", "max_ms", "total_ms"}
            ):
                self.fail(f"{where} is {_short(got)}, expected count, mean_ms and max_ms")
            count, mean, mx = got["count"], got["mean_ms"], got["max_ms"]
            if type(count) is not int or count != self.count[s]:
                self.fail(
                    f"{where}.count is {_short(count)}, expected {self.count[s]} (seat {s}'s accepted "
                    "replies and the decision its fault ended)"
                )
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
                    self.fail(
                        f"{where}.mean_ms is {mean}, expected {ksum / count:.3f} (the mean of the "
                        f"{count} think time(s) recorded for seat {s})"
                    )
                if abs(mx - kmax) > 2 * _ROUND_MS + _TOL_MS:
                    self.fail(
                        f"{where}.max_ms is {mx}, expected {kmax:.3f} (the longest think time recorded for seat {s})"
                    )
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
                self.fail(
                    f"{where}.mean_ms is {mean}, expected between {least / count:.3f} and "
                    f"{most / count:.3f} (seat {s}'s {len(known)} recorded think time(s) and "
                    f"{len(lower)} unrecorded one(s))"
                )


# ----------------------------------------------------------------------------- the replay


_DEAD_AT_START = "the bot process is not running at the start of the game"


class _Replay:
    """Drives the hand machine with a log's inputs and compares what it emits."""

    def __init__(self, records: list[tuple[int, Any, dict[str, Any]]], report: ReplayReport) -> None:
        self.records = records
        self.report = report
        h: Header = records[0][1]
        self.h = h
        self.line = 1
        self.rec_t = 0.0
        self.last_t, self.last_line = 0.0, 1
        try:
            rules: Rules
            if h.log_version < 2 and h.rules.get("game", "ask") == "ask":
                rules = AskRules.from_record(h.rules)  # as played then (no stalemate rule, old presets)
            else:
                rules = get_variant(h.rules)
        except Exception as exc:  # RulesError, or a parameter of the wrong type
            raise _Mismatch(f"line 1: the header's rules are not a valid variant: {exc}") from None
        n = h.players
        if h.variant != rules.name:
            self.fail(f"line 1: the header names variant {h.variant!r} but its rules are those of {rules.name!r}")
        if h.protocol != PROTOCOL_VERSION:
            self.fail(
                f"line 1: the log was written with protocol version {h.protocol}; this referee speaks "
                f"protocol version {PROTOCOL_VERSION}"
            )
        if len(h.seats) != n:
            self.fail(f"line 1: the header says {n} players but lists {len(h.seats)} seats")
        for i, s in enumerate(h.seats):
            if s.seat != i:
                self.fail(f"line 1: seats[{i}] is numbered {s.seat}, expected {i}")
        if not rules.min_players <= n <= rules.max_players:
            self.fail(
                f"line 1: {rules.name} is for {rules.min_players}-{rules.max_players} players, the header says {n}"
            )
        if h.seat_clocks is not None and len(h.seat_clocks) != n:
            self.fail(f"line 1: {len(h.seat_clocks)} seat_clocks for {n} players")
        self.names = [s.bot for s in h.seats]
        self.clocks = list(h.seat_clocks) if h.seat_clocks is not None else [h.clock] * n
        fmt = None
        try:
            if h.match is not None:
                fmt = MatchFormat.from_params(h.match)
                if fmt.kind == "single":
                    fmt = None
            deal = Deal.from_json(h.deal) if h.deal is not None else None
            spec = GameSpec(
                h.game,
                rules,
                n,
                seed=h.seed,
                deal=deal,
                match=fmt,
                clock=h.clock,
                policy=h.policy,
                seat_clocks=list(h.seat_clocks) if h.seat_clocks is not None else None,
            )
            self.expect = _Expect()
            self.m = HandMachine(
                spec,
                self.names,
                first_ids=self._first_ids(n),
                sink=self.expect,
                observer=_Transcript(report, self.names),
                canonical=h.log_version >= 2,
            )
        except _Mismatch:
            raise
        except Exception as exc:
            self.fail(f"line 1: the header does not describe a game this referee can play: {exc}")
        self.faulted: set[int] = set()  # seats with a fault, in log order
        self.timing = _Timing(self, n)
        self.written_due = False
        self.lenient_detail: set[int] = set()  # v1: seats whose next malformed detail cannot be re-derived

    def fail(self, text: str) -> None:
        raise _Mismatch(text)

    def _first_ids(self, n: int) -> list[int]:
        ids = [1] * n
        seen: set[int] = set()
        for _, rec, _raw in self.records[1:-1]:
            if isinstance(rec, OutRec) and 0 <= rec.to < n and rec.to not in seen:
                for msg in rec.out:
                    if isinstance(msg, dict) and msg.get("type") == "turn" and type(msg.get("id")) is int:
                        ids[rec.to] = msg["id"]
                        seen.add(rec.to)
                        break
        return ids

    # ---------------------------------------------------------------- driving
    def run(self) -> None:
        records = self.records
        body = records[1:-1]
        footer: FooterInfo = records[-1][1].footer
        m = self.m
        tail = next((i for i, (_, rec, _r) in enumerate(body) if isinstance(rec, StderrRec)), len(body))
        for i in range(tail, len(body)):
            if not isinstance(body[i][1], StderrRec):
                self.line = body[i][0]
                self.fail(f"line {self.line}: a game record after the stderr records")
        dead, skip = self._dead_at_start(body[:tail])
        m.start(dead)
        self._settle()
        pos = feed = 0
        capped = False
        while pos < tail:
            line, rec, raw = body[pos]
            self.line = line
            if isinstance(rec, CappedRec):
                capped = True
                self._time(rec.t)
                break
            if self.expect.q:
                self._match(line, rec, raw)
                pos += 1
                continue
            if self.written_due and not self._write_failure(rec, pos, skip):
                self.written_due = False
                m.written()
                self._settle()
                continue
            if isinstance(rec, ActRec) and rec.act.fallback:
                s = rec.act.seat
                if 0 <= s < len(m.seats) and m.seats[s].wait is not None and not m.seats[s].faulted:
                    self.fail(f"line {line}: a fallback action for seat {s} ({self.names[s]}), which has no fault")
            k = max(pos, feed)
            while k < tail and not self._is_input(body[k][1], k, skip):
                k += 1
            if k >= tail:
                self._nothing_more(line, rec, raw)
            self._feed(body, k)
            feed = k + 1
            self._settle()
        interrupted = footer.reason == "aborted" and footer.detail == "the referee was interrupted"
        self.report.interrupted = interrupted
        self.report.capped = capped
        if capped:
            if not footer.log_capped:
                self.fail(
                    f"line {records[-1][0]}: the log has a `capped` record but its footer does not say log_capped"
                )
            self._check_stderr(body[tail:])
            return
        if not interrupted:
            if self.written_due:
                self.written_due = False
                m.written()
                self._settle()
            self._drop_closed_tails()
            if self.expect.q:
                key, want = self.expect.q[0]
                self.line = body[tail - 1][0] + 1 if tail else 2
                self.fail(f"line {self.line}: the log never shows {self._describe_want(key, want)}")
            if m.playing:
                self.line = body[tail - 1][0] + 1 if tail else 2
                self.fail(f"line {self.line}: the log ends before the game does: {self._awaiting()}")
        self.expect.q.clear()
        tails = {rec.stderr.seat: rec.stderr.tail for _, rec, _r in body[tail:]}
        m.close(
            [tails.get(s, "") for s in range(self.h.players)], interrupted=interrupted, log_capped=footer.log_capped
        )
        self._check_stderr(body[tail:])
        self.line = records[-1][0]
        key, want = self.expect.q.popleft()
        self._check_footer(footer, want["footer"], interrupted)

    def _settle(self) -> None:
        """Act as the driver does after each input: take the writes (they all succeed
        unless the log says otherwise) and note that the machine awaits ``written()``."""
        if self.m.writes:
            self.m.take_writes()
            self.written_due = True

    def _dead_at_start(self, body: list[tuple[int, Any, dict[str, Any]]]) -> tuple[dict[int, str], set[int]]:
        """The seats the log shows dead at the start (crash faults before any write)."""
        dead: dict[int, str] = {}
        skip: set[int] = set()
        for k, (_, rec, _r) in enumerate(body):
            if isinstance(rec, (OutRec, ActRec)):
                break
            if (
                isinstance(rec, FaultRec)
                and rec.fault.fault == "crash"
                and rec.fault.decision_id is None
                and rec.fault.detail.startswith(_DEAD_AT_START)
                and 0 <= rec.fault.seat < self.h.players
            ):
                dead.setdefault(rec.fault.seat, rec.fault.detail)
                skip.add(k)
        return dead, skip

    def _write_failure(self, rec: Any, k: int, skip: set[int]) -> bool:
        return (
            isinstance(rec, FaultRec)
            and k not in skip
            and rec.fault.decision_id is None
            and rec.fault.fault in ("crash", "timeout")
        )

    def _is_input(self, rec: Any, k: int, skip: set[int]) -> bool:
        m = self.m
        if isinstance(rec, ActRec):
            return not rec.act.fallback
        if isinstance(rec, InRec):
            return True
        if isinstance(rec, FaultRec):
            f = rec.fault
            if k in skip:
                return False
            if f.fault in ("timeout", "crash"):
                return True
            if (
                self.h.log_version < 2
                and f.fault == "malformed"
                and "is longer than" in f.detail
                and 0 <= f.seat < len(m.seats)
                and m.seats[f.seat].wait is not None
            ):
                return True  # v1: a line too long left no record of its own
            return False
        if isinstance(rec, RetryRec):
            r = rec.retry
            return (
                self.h.log_version < 2
                and r.fault == "malformed"
                and "is longer than" in r.detail
                and 0 <= r.seat < len(m.seats)
                and m.seats[r.seat].wait is not None
            )
        return False

    def _feed(self, body: list[tuple[int, Any, dict[str, Any]]], k: int) -> None:
        line, rec, raw = body[k]
        m = self.m
        self.line = line
        try:
            if isinstance(rec, ActRec):
                a = rec.act
                s = a.seat
                if not 0 <= s < len(m.seats) or m.seats[s].wait is None:
                    self.fail(
                        f"line {line}: an action by seat {s} is recorded, the re-simulation awaits "
                        f"{self._awaiting_who()}"
                    )
                decide = m.seats[s].wait.decide  # type: ignore[union-attr]
                if a.decide != decide:
                    self.fail(f"line {line}: a {a.decide} by seat {s} is recorded, the engine awaits a {decide}")
                m.last_refusal = None
                m.reply(s, msgspec.json.encode(a.action), a.ms, a.wall_ms)
                if m.last_refusal is not None:
                    reason = re.sub(r"^line \d+: (turn \d+: )?", "", m.last_refusal[2])
                    self.fail(
                        f"line {line}: the recorded {decide} of seat {s} ({self.names[s]}) is not legal: {reason}"
                    )
            elif isinstance(rec, InRec):
                s = rec.from_
                if not 0 <= s < len(m.seats) or (rec.in_ is None) == (rec.bad is None):
                    self.fail(
                        f"line {line}: a refused-reply record must come from a seat of this game and hold "
                        "either `in` or `bad`"
                    )
                if rec.in_ is not None:
                    data = msgspec.json.encode(rec.in_)
                elif self.h.log_version < 2 and rec.raw is None:
                    # v1 kept a lossy text: each replacement character stands for an invalid byte
                    data = (rec.bad or "").replace("\ufffd", "\udcff").encode("utf-8", "surrogateescape")
                else:
                    data = bad_line_bytes(rec)
                lineno = rec.line if rec.line is not None else self._v1_lineno(body, k, s)
                if rec.bad is not None and rec.raw is None and ("\ufffd" in rec.bad or len(rec.bad) >= 2000):
                    self.lenient_detail.add(s)  # v1 kept only a lossy text of this line
                seat = m.seats[s]
                if seat.wait is not None:
                    if rec.long:
                        detail = self._following_detail(body, k, s) or ""
                        m.too_long(s, detail, data, rec.ms, lineno)
                    else:
                        m.reply(s, data, rec.ms, None, lineno)
                elif seat.timed_out_turn is not None:
                    m.stale_line(s, data, rec.ms, lineno)
                else:
                    self.fail(
                        f"line {line}: a refused reply of seat {s}, whose turn is not awaited and which did "
                        "not time out"
                    )
            elif isinstance(rec, FaultRec):
                f = rec.fault
                s = f.seat
                if not 0 <= s < len(m.seats):
                    self.fail(f"line {line}: a fault of seat {s}, which is not a seat of this game")
                seat = m.seats[s]
                if f.decision_id is None:
                    if seat.faulted:
                        self.fail(f"line {line}: a second {f.fault} fault for seat {s}, which faulted earlier")
                    m.write_failed(s, f.fault, f.detail)
                elif f.fault == "malformed":  # v1: a line too long
                    m.too_long(s, f.detail, b"", 0.0, _lineno(f.detail))
                elif seat.wait is None or seat.wait.turn_id != f.decision_id:
                    self.fail(
                        f"line {line}: the {f.fault} fault of seat {s} names turn {f.decision_id}, but the "
                        f"turn awaited from it is {seat.wait.turn_id if seat.wait else None}"
                    )
                elif f.fault == "timeout":
                    m.timeout(s, f.detail)
                else:
                    m.crash(s, f.detail)
            elif isinstance(rec, RetryRec):  # v1: a line too long
                r = rec.retry
                m.too_long(r.seat, r.detail, b"", 0.0, _lineno(r.detail))
        except _Mismatch:
            raise
        except RuntimeError as exc:
            self.fail(f"line {line}: {exc}")

    def _v1_lineno(self, body: list[tuple[int, Any, dict[str, Any]]], k: int, seat: int) -> int | None:
        """Version 1 did not log a refused line's number: the fault or retry that follows names it."""
        detail = self._following_detail(body, k, seat)
        return _lineno(detail) if detail else None

    @staticmethod
    def _following_detail(body: list[tuple[int, Any, dict[str, Any]]], k: int, seat: int) -> str | None:
        for _, rec, _r in body[k + 1 : k + 40]:
            if isinstance(rec, FaultRec) and rec.fault.seat == seat:
                return rec.fault.detail
            if isinstance(rec, RetryRec) and rec.retry.seat == seat:
                return rec.retry.detail
        return None

    # ---------------------------------------------------------------- comparing
    def _time(self, t: Any) -> None:
        if not _num(t) or t < self.last_t:
            self.fail(
                f"line {self.line}: t is {t}, "
                + (
                    "expected a time in seconds since the game started"
                    if not _num(t) or t < 0
                    else f"before t {self.last_t} of line {self.last_line} (times never decrease)"
                )
            )
        self.rec_t = self.last_t = t
        self.last_line = self.line

    def _match(self, line: int, rec: Any, raw: dict[str, Any]) -> None:
        t = getattr(rec, "t", None)
        if t is not None:
            self._time(t)
        q = self.expect.q
        key, want = q.popleft()
        got_key = record_type(raw)[0]  # type: ignore[index]
        if key == "out" and got_key == "out" and raw["to"] != want["to"] and self.h.log_version < 2:
            # v1 wrote the turns of a simultaneous decision in no fixed order: what one seat was sent
            # is ordered, writes to different seats need not be
            other = next((i for i, (k, w) in enumerate(q) if k == "out" and w["to"] == raw["to"]), None)
            if other is not None:
                q.appendleft((key, want))
                key, want = q[other + 1]
                del q[other + 1]
        while key == "out" and (got_key != "out" or raw["to"] != want["to"]) and want["to"] in self.faulted:
            # the seat faulted and its pipe closed: the log holds no more of what was queued for it
            self._closed(want["to"])
            if not q:
                self._settle()
                if not q:
                    self._nothing_more(line, rec, raw)
            key, want = q.popleft()
        if key != got_key:
            self.fail(
                f"line {line}: the log has {self._describe_got(got_key, raw)}, the re-simulation "
                f"{self._describe_want(key, want, verb='has')}"
            )
        getattr(self, f"_cmp_{got_key}")(line, rec, raw, want)

    def _closed(self, seat: int) -> None:
        self.m.pipe_closed(seat)
        self.expect.q = deque(x for x in self.expect.q if not (x[0] == "out" and x[1]["to"] == seat))

    def _drop_closed_tails(self) -> None:
        """At the end: what a faulted seat never received (its pipe closed)."""
        for key, want in list(self.expect.q):
            if key == "out" and want["to"] in self.faulted:
                self._closed(want["to"])

    def _cmp_out(self, line: int, rec: OutRec, raw: dict[str, Any], want: dict[str, Any]) -> None:
        s = rec.to
        if s != want["to"]:
            self.fail(
                f"line {line}: a write to seat {s} is recorded, the re-simulation writes to seat {want['to']} "
                f"here: {_short(want['out'])}"
            )
        got_msgs, want_msgs = rec.out, want["out"]
        for i, w in enumerate(want_msgs):
            if i >= len(got_msgs):
                self.fail(
                    f"line {line}: the log never shows the {_what(w)} the re-simulation sends seat {s} "
                    f"({self.names[s]}): {_short(w)}"
                )
            g = got_msgs[i]
            if (
                isinstance(w, dict)
                and w.get("type") == "turn"
                and isinstance(g, dict)
                and isinstance(g.get("clock"), dict)
                and isinstance(w.get("clock"), dict)
            ):
                w = dict(w, clock=dict(w["clock"], left_ms=g["clock"].get("left_ms")))  # the timing audit's
            if not _same(g, w):
                what = _what(w)
                subject = f"the referee's {what}" if what not in ("error", "error sent") else f"the {what}"
                self.fail(f"line {line}: {subject} to seat {s} differs from the re-simulation: {_diff(g, w)}")
            if w.get("type") == "turn":
                self.timing.turn(s, g["clock"]["left_ms"])
        if len(got_msgs) > len(want_msgs):
            g = got_msgs[len(want_msgs)]
            self.fail(
                f"line {line}: the referee sent seat {s} a {_what(g)} the re-simulation does not expect here: "
                f"{_short(g)}"
            )

    def _cmp_act(self, line: int, rec: ActRec, raw: dict[str, Any], want: dict[str, Any]) -> None:
        a, w = raw["act"], want["act"]
        s = rec.act.seat
        if (
            w.get("fallback") is True
            and a.get("fallback") is True
            and a.get("seat") == w.get("seat")
            and not _same(a.get("action"), w.get("action"))
        ):
            self.fail(
                f"line {line}: the fallback {w['decide']} of seat {s} is {_short(a.get('action'))}, the "
                f"seeded fallback generator gives {_short(w.get('action'))}"
            )
        if w.get("fallback") is True and a.get("fallback") is True:
            self.timing.act(s, rec.act)  # its ms (0) is the timing audit's
            a = dict(a, ms=w["ms"])
        if w.get("fallback") is not True and a.get("fallback") is True:
            self.fail(f"line {line}: a fallback action for seat {s} ({self.names[s]}), which has no fault")
        if not _same_act(a, w):
            self.fail(f"line {line}: the act record differs from the re-simulation: {_diff(a, w)}")
        if w.get("fallback") is not True:
            self.timing.act(s, rec.act)

    def _cmp_in(self, line: int, rec: InRec, raw: dict[str, Any], want: dict[str, Any]) -> None:
        got = {k: v for k, v in raw.items() if k != "t"}
        if self.h.log_version < 2:  # v1 did not record these
            want = {k: v for k, v in want.items() if k not in ("line", "raw", "long")}
        if not _same(got, want):
            self.fail(f"line {line}: the refused-reply record differs from the re-simulation: {_diff(got, want)}")
        self.timing.inbound(rec.from_, rec)

    _cmp_bad = _cmp_in

    def _cmp_fault(self, line: int, rec: FaultRec, raw: dict[str, Any], want: dict[str, Any]) -> None:
        got, w = raw["fault"], want["fault"]
        s = rec.fault.seat
        if s in self.lenient_detail and w.get("fault") == "malformed" and got.get("fault") == "malformed":
            w = dict(w, detail=got.get("detail"))
            self.lenient_detail.discard(s)
        if not _same(got, w):
            self.fail(f"line {line}: the fault record differs from the re-simulation: {_diff(got, w)}")
        self.report.faults.append(got)
        if s not in self.faulted:
            self.timing.fault(s, rec.fault)
            self.faulted.add(s)

    def _cmp_retry(self, line: int, rec: RetryRec, raw: dict[str, Any], want: dict[str, Any]) -> None:
        got, w = raw["retry"], want["retry"]
        s = rec.retry.seat
        if s in self.lenient_detail and w.get("fault") == "malformed":
            w = dict(w, detail=got.get("detail"))
            self.lenient_detail.discard(s)
            self._relax_next_error(s, got.get("detail"))
        if not _same(got, w):
            self.fail(f"line {line}: the retry record differs from the re-simulation: {_diff(got, w)}")
        self.timing.retry(s)

    def _relax_next_error(self, seat: int, detail: Any) -> None:
        for i, (key, w) in enumerate(self.expect.q):
            if key == "out" and w["to"] == seat:
                msgs = [
                    dict(x, detail=str(detail) + x["detail"][x["detail"].find(" (send a corrected") :])
                    if x.get("type") == "error" and "(send a corrected" in x.get("detail", "")
                    else x
                    for x in w["out"]
                ]
                self.expect.q[i] = (key, dict(w, out=msgs))
                return

    def _cmp_hand(self, line: int, rec: HandRec, raw: dict[str, Any], want: dict[str, Any]) -> None:
        got, w = raw["hand"], want["hand"]
        for k in list(w) + [k for k in got if k not in w]:
            if k not in got or k not in w or not _same(got[k], w[k]):
                if k == "tiebreak" and k not in got:
                    self.fail(f"line {line}: the hand record of a match has no tiebreak field")
                self.fail(
                    f"line {line}: the hand record's {k} is {_short(got.get(k))}, the re-simulation has "
                    f"{_short(w.get(k))}"
                )
        for s in rec.hand.seats:
            self.timing.new_hand(s)

    def _cmp_hand_end(self, line: int, rec: HandEndRec, raw: dict[str, Any], want: dict[str, Any]) -> None:
        got, w = raw["hand_end"], want["hand_end"]
        if not (got.keys() == w.keys() and all(_same_num(got[k], w[k]) for k in w)):
            self.fail(f"line {line}: the hand_end record differs from the re-simulation: {_diff(got, w)}")

    def _check_stderr(self, tail: list[tuple[int, Any, dict[str, Any]]]) -> None:
        n = self.h.players
        for i, (line, rec, _r) in enumerate(tail):
            self.line = line
            e = rec.stderr
            if e.seat != i or e.seat >= n or e.bot != self.names[e.seat]:
                self.fail(
                    f"line {line}: stderr record for seat {e.seat} ({e.bot!r}) out of place: one per seat, "
                    f"in seat order, is expected"
                )
        if len(tail) != n:
            self.line = self.records[-1][0]
            self.fail(f"line {self.line}: {len(tail)} stderr records for {n} seats")
        # the machine's own stderr records (their tails are the log's: free text)
        self.expect.q = deque(x for x in self.expect.q if x[0] != "stderr")

    def _check_footer(self, footer: FooterInfo, want: dict[str, Any], interrupted: bool) -> None:
        got = msgspec.to_builtins(footer)
        for k in ("scores", "ranks", "forfeits", "win_shares", "reason", "detail", "faults", "log_capped"):
            g, w = got.get(k), want.get(k, False if k == "log_capped" else None)
            if not _same_num(g, w):
                self.fail(f"line {self.line}: the footer's {k} is {_short(g)}, the re-simulation has {_short(w)}")
        if not interrupted:
            self.timing.footer(got["think_ms"])

    # ---------------------------------------------------------------- messages
    def _awaiting_who(self) -> str:
        waits = self.m.waits
        if not waits:
            return "no action"
        return ", ".join(f"seat {w.seat}" for w in waits)

    def _awaiting(self) -> str:
        m = self.m
        if m.waits:
            return f"the re-simulation is still awaiting {self._awaiting_who()} in {m.gid}"
        if m.match is not None:
            return "another hand of the match is due"
        return f"hand {m.gid} has not ended"

    def _nothing_more(self, line: int, rec: Any, raw: dict[str, Any]) -> None:
        key = record_type(raw)[0]  # type: ignore[index]
        self.fail(
            f"line {line}: the log has {self._describe_got(key, raw)} here; the re-simulation writes and "
            f"records nothing more ({self._awaiting()})"
        )

    def _describe_got(self, key: str, raw: dict[str, Any]) -> str:
        if key == "out":
            msgs = raw.get("out") or []
            first = _what(msgs[0]) if msgs else "nothing"
            return f"a write to seat {raw.get('to')} ({first} ...)"
        if key == "act":
            a = raw["act"]
            return f"an action by seat {a.get('seat')}" + (" (fallback)" if a.get("fallback") else "")
        if key in ("in", "bad"):
            return f"a refused reply of seat {raw.get('from')}"
        if key == "fault":
            return f"a {raw['fault'].get('fault')} fault of seat {raw['fault'].get('seat')}"
        return f"a {key} record"

    def _describe_want(self, key: str, want: dict[str, Any], verb: str = "") -> str:
        if key == "out":
            msgs = want.get("out") or []
            what = _what(msgs[0]) if msgs else "write"
            s = want.get("to")
            name = self.names[s] if isinstance(s, int) and 0 <= s < len(self.names) else "?"
            return (
                f"{'has ' if verb else ''}the {what} the re-simulation sends seat {s} ({name}): "
                f"{_short(msgs[0] if msgs else want)}"
            )
        return f"{verb + ' ' if verb else ''}{self._describe_got(key, want)}: {_short(want)}"


def _same_act(a: dict[str, Any], w: dict[str, Any]) -> bool:
    if a.keys() != w.keys():
        return False
    for k in w:
        if k in ("ms", "wall_ms"):
            if not (_num(a[k]) and _num(w[k]) and abs(a[k] - w[k]) < 0.0015):
                return False
        elif not _same(a[k], w[k]):
            return False
    return True


def _lineno(detail: str | None) -> int | None:
    m = _LINE_NO.match(detail or "")
    return int(m.group(1)) if m else None


def replay(path: str | Path) -> ReplayReport:
    """Replay the log at ``path`` (see the module docstring).

    Raises ``UserError`` for a missing, unreadable, corrupt or truncated log
    (naming the line). A well-formed log that differs from the re-simulation
    gives a report whose ``mismatches`` holds the first difference.
    """
    return replay_records(load_log(path), str(path))


def replay_records(
    records: list[tuple[int, Any, dict[str, Any]]], name: str = "log", observer: Any = None
) -> ReplayReport:
    """:func:`replay` of records already loaded (``observer``: also told about every change, for the viewer)."""
    report = ReplayReport(header=records[0][2], footer=records[-1][2]["footer"])
    if (
        any(isinstance(r, HandRec) for _, r, _ in records)
        and not any(isinstance(r, OutRec) for _, r, _ in records)
        and not _all_dead_at_start(records)
    ):
        raise UserError(
            f"{name}: the log has no `out` records (the messages the referee sent); without them it "
            "cannot be proved. Only logs written by this referee with their `out` records can be "
            "replayed"
        )
    sim: _Replay | None = None
    try:
        sim = _Replay(records, report)
        if observer is not None:
            sim.m.observer = _Both(sim.m.observer, observer)
        sim.run()
    except _Mismatch as exc:
        report.mismatches.append(str(exc))
    except UserError:
        raise
    except Exception as exc:  # a shape the checks above missed: still one clear sentence
        where = f"line {sim.line}" if sim is not None else "the header"
        report.mismatches.append(f"{where}: the log cannot be re-simulated here ({type(exc).__name__}: {exc})")
    return report


def _all_dead_at_start(records: list[tuple[int, Any, dict[str, Any]]]) -> bool:
    """Whether every seat's bot was not running when the game started (a table of broken
    entries given up before the night): the referee sent nothing, so the log has no ``out``
    records; the re-simulation still checks it move by move."""
    players = records[0][2].get("players")
    dead = {
        rec.fault.seat
        for _, rec, _ in records
        if isinstance(rec, FaultRec) and rec.fault.fault == "crash" and rec.fault.detail.startswith(_DEAD_AT_START)
    }
    return isinstance(players, int) and players > 0 and dead >= set(range(players))


class _Both:
    """Two observers in one."""

    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b

    def __getattr__(self, name: str) -> Any:
        fa, fb = getattr(self.a, name), getattr(self.b, name)

        def both(*args: Any) -> None:
            fa(*args)
            fb(*args)

        return both
