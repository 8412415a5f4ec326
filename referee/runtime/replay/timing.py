"""Replay's own audit of the measured times (see :mod:`referee.runtime.replay`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

from referee.core.records import ActInfo, InRec
from referee.core.spec import LATE_READ_MS, FaultRecord

from .compare import _num, _same, _short

if TYPE_CHECKING:
    from .sim import _Replay

#: ``ms`` and ``wall_ms`` are logged to 0.001 ms (error up to 0.0005 each), ``t`` to 1 microsecond
_ROUND_MS = 0.0005
#: what rounding and float arithmetic can add to a comparison of one logged time with a limit
_TOL_MS = 0.002
# An accepted reply's wall time may exceed its limit by LATE_READ_MS (referee.core.spec: the
# runtime judges a later read a timeout). The log does not tell a late read from a forgery; what it
# does bound exactly is the span between the turn and the act (see _Timing._span). CPU time (cpu
# clock) is compared with the limit after it is measured, so it gets no such allowance.
#: slack between the two monotonic clocks of the referee (the log's ``t``, trio's clock for ``ms``)
_SPAN_TOL_MS = 1.0


class _Timing:
    """The timing the log determines, per match seat (see the module docstring):
    the limit of each accepted reply, the bank behind each turn's ``left_ms``,
    the order of ``t`` between a turn and what answers it, and the footer's
    ``think_ms``. ``game.py`` charges a decision's final outcome (an accepted
    reply, or the faulting attempt; never a forgiven attempt separately, the
    measure always runs from the turn) to the seat's think stats and bank."""

    def __init__(self, sim: _Replay, n: int) -> None:
        self.sim = sim
        self.bank: list[float | None] = [None] * n  # the bank left (from the recorded ms) this hand
        self.charges = [0] * n  # recorded ms subtracted from it (rounding error)
        self.turn_t: list[float | None] = [None] * n  # t of the record that carried the seat's last turn
        self.turn_line = [0] * n
        self.last_in: list[float | None] = [None] * n  # ms of the seat's last refused reply to this turn
        self.count = [0] * n
        self.known: list[list[float]] = [[] for _ in range(n)]  # measured ms the log records
        self.lower: list[list[float]] = [[] for _ in range(n)]  # lower bounds of ms the log does not record

    def fail(self, text: str) -> NoReturn:
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
            if a.wall_ms > ceiling + LATE_READ_MS:
                self.fail(
                    f"seat {s}'s accepted reply has act.wall_ms {a.wall_ms}, over the wall ceiling of "
                    f"{ceiling:.0f} ms by more than the {LATE_READ_MS:.0f} ms allowed for a late read, with "
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
            if a.ms > hi + _TOL_MS + LATE_READ_MS:
                self.fail(
                    f"seat {s}'s accepted reply has act.ms {a.ms}, over its limit of {hi:.3f} ms "
                    f"({what}) by more than the {LATE_READ_MS:.0f} ms allowed for a late read, with no "
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
