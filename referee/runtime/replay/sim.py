"""The re-simulation: the hand machine fed a log's inputs, its records compared with the log's."""

from __future__ import annotations

from collections import deque
from typing import Any, NoReturn

import msgspec

from protocol.messages import PROTOCOL_VERSION
from referee.core.inputs import WRITTEN, Input, PipeClosed, Reply, WriteFailed, Written
from referee.core.records import (
    ActRec,
    CappedRec,
    FaultRec,
    FooterInfo,
    HandEndRec,
    HandRec,
    Header,
    InRec,
    OutRec,
    RetryRec,
    StderrRec,
    bad_line_fields,
    record_type,
)
from referee.core.spec import GameSpec
from referee.rules import Deal
from referee.rules.match import MatchFormat

from .compare import _diff, _num, _same, _same_act, _same_num, _short, _what
from .legacy import rules_of
from .report import ReplayReport, _Mismatch
from .stream import Stream
from .timing import _Timing
from .transcript import _Both, _Transcript

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

    def input(self, event: Any) -> None:
        """The machine's ``input`` records are the log's own inputs: not compared."""


class _Replay:
    """Drives the hand machine with a log's inputs and compares what it emits."""

    def __init__(
        self, records: list[tuple[int, Any, dict[str, Any]]], report: ReplayReport, stream: Stream, observer: Any = None
    ) -> None:
        self.stream = stream
        self.records = records
        self.report = report
        h: Header = records[0][1]
        self.h = h
        self.line = 1
        self.rec_t = 0.0
        self.last_t, self.last_line = 0.0, 1
        try:
            rules = rules_of(h)
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
            transcript: Any = _Transcript(report, self.names)
            self.m = stream.machine(
                spec,
                self.names,
                first_ids=self._first_ids(n),
                sink=self.expect,
                observer=transcript if observer is None else _Both(transcript, observer),
            )
        except _Mismatch:
            raise
        except Exception as exc:
            self.fail(f"line 1: the header does not describe a game this referee can play: {exc}")
        self.faulted: set[int] = set()  # seats with a fault, in log order
        self.timing = _Timing(self, n)
        self.written_due = False
        self.lenience = stream.lenience  # what an older log's records are forgiven

    def fail(self, text: str) -> NoReturn:
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
        tail = next((i for i, (_, rec, _r) in enumerate(body) if isinstance(rec, StderrRec)), len(body))
        for i in range(tail, len(body)):
            if not isinstance(body[i][1], StderrRec):
                self.line = body[i][0]
                self.fail(f"line {self.line}: a game record after the stderr records")
        capped = self._play(body, tail)
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
            self._check_ended(body, tail)
        self.expect.q.clear()
        tails = {rec.stderr.seat: rec.stderr.tail for _, rec, _r in body[tail:]}
        self.m.close(
            [tails.get(s, "") for s in range(self.h.players)], interrupted=interrupted, log_capped=footer.log_capped
        )
        self._check_stderr(body[tail:])
        self.line = records[-1][0]
        key, want = self.expect.q.popleft()
        self._check_footer(footer, want["footer"], interrupted)

    def _play(self, body: list[tuple[int, Any, dict[str, Any]]], tail: int) -> bool:
        """Feed the inputs, compare what the machine records; True if the log is capped."""
        m = self.m
        st = self.stream
        for ev in st.initial:
            self._check_seat(ev.seat, "a bot dead at the start")
            m.feed(ev)
        m.start()
        self._settle()
        pos = feed = 0
        while pos < tail:
            line, rec, raw = body[pos]
            self.line = line
            if isinstance(rec, CappedRec):
                self._time(rec.t)
                return True
            if pos in st.input_only and (pos < feed or pos not in st.inputs):
                self._time(rec.t)  # an input fed already: nothing the machine writes
                pos += 1
                continue
            if self.expect.q:
                self._match(line, rec, raw)
                pos += 1
                continue
            if st.infer_written and self.written_due and not isinstance(st.inputs.get(pos), WriteFailed):
                self.written_due = False
                m.feed(WRITTEN)
                self._settle()
                continue
            if isinstance(rec, ActRec) and rec.act.fallback:
                s = rec.act.seat
                if 0 <= s < len(m.seats) and m.awaiting(s) is not None and not m.faulted(s):
                    self.fail(f"line {line}: a fallback action for seat {s} ({self.names[s]}), which has no fault")
            k = max(pos, feed)
            while k < tail and k not in st.inputs:
                k += 1
            if k >= tail:
                self._nothing_more(line, rec, raw)
            self._feed(body, k)
            feed = k + 1
            self._settle()
        return False

    def _check_ended(self, body: list[tuple[int, Any, dict[str, Any]]], tail: int) -> None:
        """At the end of an uninterrupted log: the machine has nothing more to say."""
        m = self.m
        if self.written_due:
            self.written_due = False
            m.feed(WRITTEN)
            self._settle()
        if self.stream.pipes_unlogged:
            self._drop_closed_tails()
        if self.expect.q:
            key, want = self.expect.q[0]
            self.line = body[tail - 1][0] + 1 if tail else 2
            self.fail(f"line {self.line}: the log never shows {self._describe_want(key, want)}")
        if m.playing:
            self.line = body[tail - 1][0] + 1 if tail else 2
            self.fail(f"line {self.line}: the log ends before the game does: {self._awaiting()}")

    def _settle(self) -> None:
        """Act as the driver does after each input: take the writes (they all succeed
        unless the log says otherwise) and note that the machine awaits ``written``."""
        if self.m.writes:
            self.m.take_writes()
            self.written_due = True

    def _check_seat(self, s: int, what: str) -> None:
        if not 0 <= s < self.h.players:
            self.fail(f"line {self.line}: {what} of seat {s}, which is not a seat of this game")

    def _feed(self, body: list[tuple[int, Any, dict[str, Any]]], k: int) -> None:
        """Feed the input of record ``k`` (checking what the log claims of it)."""
        line, rec, _raw = body[k]
        m = self.m
        ev = self.stream.inputs[k]
        self.line = line
        if not isinstance(ev, Written):
            self._check_seat(ev.seat, "an input")
        if not isinstance(ev, Written):
            self.lenience.fed(k, ev.seat)
        try:
            if isinstance(rec, ActRec):
                self._feed_act(line, rec, ev)
                return
            if isinstance(rec, InRec):
                self._check_in(line, rec, ev)
            elif isinstance(rec, FaultRec):
                self._check_fault(line, rec)
            m.feed(ev)
        except _Mismatch:
            raise
        except RuntimeError as exc:
            self.fail(f"line {line}: {exc}")

    def _feed_act(self, line: int, rec: ActRec, ev: Input) -> None:
        m = self.m
        s = rec.act.seat
        wait = m.awaiting(s)
        if wait is None:
            self.fail(
                f"line {line}: an action by seat {s} is recorded, the re-simulation awaits {self._awaiting_who()}"
            )
        if rec.act.decide != wait.decide:
            self.fail(f"line {line}: a {rec.act.decide} by seat {s} is recorded, the engine awaits a {wait.decide}")
        before = m.last_refusal
        m.feed(ev)
        refusal = m.last_refusal
        if refusal is not None and refusal is not before:
            self.fail(
                f"line {line}: the recorded {wait.decide} of seat {s} ({self.names[s]}) is not legal: {refusal[3]}"
            )

    def _check_in(self, line: int, rec: InRec, ev: Input) -> None:
        s = rec.from_
        if (rec.in_ is None) == (rec.bad is None):
            self.fail(
                f"line {line}: a refused-reply record must come from a seat of this game and hold either `in` or `bad`"
            )
        if isinstance(ev, Reply) and self.m.awaiting(s) is None:
            self.fail(f"line {line}: a refused reply of seat {s}, whose turn is not awaited and which did not time out")

    def _check_fault(self, line: int, rec: FaultRec) -> None:
        """An old log's fault that stands for an input: what it claims must hold."""
        f = rec.fault
        s = f.seat
        if f.decision_id is None:
            if self.m.faulted(s):
                self.fail(f"line {line}: a second {f.fault} fault for seat {s}, which faulted earlier")
            return
        wait = self.m.awaiting(s)
        if wait is None or wait.turn_id != f.decision_id:
            self.fail(
                f"line {line}: the {f.fault} fault of seat {s} names turn {f.decision_id}, but the "
                f"turn awaited from it is {wait.turn_id if wait else None}"
            )

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
        if key == "out" and got_key == "out":
            key, want = self.lenience.next_out(q, key, want, raw["to"])
        while (
            key == "out"
            and (got_key != "out" or raw["to"] != want["to"])
            and want["to"] in self.faulted
            and self.stream.pipes_unlogged
        ):
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
        self.m.feed(PipeClosed(seat=seat))
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
        want = self.lenience.want_in(want)
        if not _same(got, want):
            self.fail(f"line {line}: the refused-reply record differs from the re-simulation: {_diff(got, want)}")
        self.timing.inbound(rec.from_, rec)

    _cmp_bad = _cmp_in

    def _cmp_fault(self, line: int, rec: FaultRec, raw: dict[str, Any], want: dict[str, Any]) -> None:
        got, w = raw["fault"], want["fault"]
        s = rec.fault.seat
        w = self.lenience.want_fault(s, got, w)
        if not _same(got, w):
            self.fail(f"line {line}: the fault record differs from the re-simulation: {_diff(got, w)}")
        self.report.faults.append(got)
        if s not in self.faulted:
            self.timing.fault(s, rec.fault)
            self.faulted.add(s)

    def _cmp_retry(self, line: int, rec: RetryRec, raw: dict[str, Any], want: dict[str, Any]) -> None:
        got, w = raw["retry"], want["retry"]
        s = rec.retry.seat
        w = self.lenience.want_retry(s, got, w, self.expect.q)
        if not _same(got, w):
            self.fail(f"line {line}: the retry record differs from the re-simulation: {_diff(got, w)}")
        self.timing.retry(s)

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
