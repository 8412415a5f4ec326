"""The hand machine driven directly, in the manner of h11's test_state.py: scripted
inputs (:mod:`referee.core.inputs`), no processes, no trio. Each test asserts what the
machine writes, what it logs and how the game ends."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from referee.core.inputs import (
    DEAD_AT_START,
    WRITTEN,
    Crash,
    DeadAtStart,
    PipeClosed,
    Reply,
    StaleLine,
    Timeout,
    TooLong,
    WriteFailed,
)
from referee.core.machine import STALE_LOG_LINES, HandMachine, action_json
from referee.core.spec import ClockSpec, FaultPolicy, GameResult, GameSpec
from referee.rules import Rng, get_variant
from referee.rules.match import MatchFormat

# ----------------------------------------------------------------------------- harness


class Log:
    """A Sink keeping every record in the order the machine gives them."""

    def __init__(self) -> None:
        self.recs: list[dict[str, Any]] = []

    def record(self, rec: dict[str, Any]) -> None:
        self.recs.append(rec)

    def timed(self, key: str, value: Any) -> None:
        self.recs.append({key: value})

    def out(self, seat: int, lines: list[bytes]) -> None:
        self.recs.append({"to": seat, "out": [msgspec.json.decode(x) for x in lines]})

    def inbound(
        self, seat: int, raw: bytes, ms: float, ok: bool, lineno: int | None = None, long: bool = False
    ) -> None:
        self.recs.append({"from": seat, "raw": raw, "ok": ok, "line": lineno})

    def act_raw(
        self, seat: int, turn_id: int, decide: str, raw: bytes, ms: float, wall_ms: float | None = None
    ) -> None:
        self.recs.append({"act": {"seat": seat, "id": turn_id, "decide": decide, "fallback": False, "ms": ms}})

    def input(self, event: Any) -> None:
        self.recs.append({"input": msgspec.to_builtins(event)})

    def kinds(self) -> list[str]:
        return [next(iter(r)) for r in self.recs]

    def of(self, key: str) -> list[Any]:
        return [r[key] for r in self.recs if key in r]


def machine(
    variant: str = "kwartet",
    players: int = 4,
    *,
    seed: int = 1,
    clock: ClockSpec | None = None,
    policy: FaultPolicy | None = None,
    match: Any = None,
    dead: dict[int, str | None] | None = None,
) -> tuple[HandMachine, Log]:
    spec = GameSpec(
        "g",
        get_variant(variant),
        players,
        seed=seed,
        clock=clock or ClockSpec(move_ms=1000),
        policy=policy or FaultPolicy(),
        match=match,
    )
    log = Log()
    _RNG[0] = Rng(seed)
    m = HandMachine(spec, [f"b{i}" for i in range(players)], sink=log)
    for seat, death in (dead or {}).items():
        m.feed(DeadAtStart(seat=seat, death=death))
    m.start()
    return m, log


_RNG = [Rng(1)]  # the scripted bots' choices (seeded per machine, so every test is reproducible)


def writes(m: HandMachine) -> list[tuple[int, list[dict[str, Any]]]]:
    """Take the machine's writes (as decoded messages per seat) and report them written."""
    out = [(seat, [msgspec.json.decode(x) for x in data.split(b"\n") if x]) for seat, data, _ in m.take_writes()]
    m.feed(WRITTEN)
    return out


def legal(m: HandMachine, seat: int, ms: float = 5.0, lineno: int | None = None) -> Reply:
    """A legal reply of ``seat`` to its awaited turn (a seeded random legal action)."""
    wait = m.awaiting(seat)
    assert wait is not None
    hs = m.seats[seat].hs
    action = m.state.random_action(hs, _RNG[0])
    body = {"type": wait.decide, "id": wait.turn_id, **action_json(wait.decide, action)}
    return Reply(seat=seat, line=msgspec.json.encode(body), ms=ms, lineno=lineno)


def play_out(m: HandMachine) -> None:
    """Answer every awaited turn legally until the game ends."""
    while m.playing or m.writes:
        writes(m)
        for w in list(m.waits):
            m.feed(legal(m, w.seat))


def finish(m: HandMachine) -> GameResult:
    play_out(m)
    return m.close([""] * len(m.seats))


def first_wait(m: HandMachine) -> int:
    writes(m)
    assert len(m.waits) == 1
    return m.waits[0].seat


# ----------------------------------------------------------------------------- a clean game


def test_a_game_of_legal_replies_ends_complete_with_no_fault() -> None:
    m, log = machine()
    first = writes(m)
    assert len(first) == 1 and len(m.waits) == 1  # lines are queued and written with the seat's turn
    seat, msgs = first[0]
    assert seat == m.waits[0].seat and msgs[0]["type"] == "start" and msgs[-1]["type"] == "turn"
    result = finish(m)
    for s in range(4):  # every seat's first message is its start
        assert next(r["out"][0] for r in log.recs if r.get("to") == s)["type"] == "start"
    assert result.reason == "complete" and result.faults == [] and result.forfeits == []
    assert log.kinds()[0] == "hand" and log.kinds()[-1] == "footer"
    assert "input" in log.kinds()  # the `written` that ended the hand
    assert all(not a["fallback"] for a in log.of("act"))
    ends = [msg for r in log.recs if "out" in r for msg in r["out"] if msg["type"] == "end"]
    assert len(ends) == 4 and ends[0]["reason"] == "complete"


def test_turn_ids_increase_per_seat_from_first_ids() -> None:
    spec = GameSpec("g", get_variant("kwartet"), 4, seed=1)
    m = HandMachine(spec, ["a", "b", "c", "d"], first_ids=[10, 20, 30, 40])
    m.start()
    seat = first_wait(m)
    assert m.waits[0].turn_id == [10, 20, 30, 40][seat]
    play_out(m)
    assert all(n >= f for n, f in zip(m.next_ids(), [10, 20, 30, 40], strict=True))


def test_a_reply_from_a_seat_that_is_not_awaited_is_a_driver_error() -> None:
    m, _ = machine()
    seat = first_wait(m)
    other = (seat + 1) % 4
    with pytest.raises(RuntimeError, match="no turn awaiting"):
        m.feed(Reply(seat=other, line=b"{}", ms=1.0))
    with pytest.raises(RuntimeError, match="no seat 9"):
        m.feed(Timeout(seat=9, detail="x"))


# ----------------------------------------------------------------------------- refused replies, retries


@pytest.mark.parametrize(
    ("line", "fault"),
    [
        (b"debug x=3", "malformed"),
        (b'{"type":"take","id":%d,"card":"x"}', "illegal"),  # the wrong type for an ask
        (b'{"type":"ask","id":%d,"target":99,"card":"nope","please":true}', "illegal"),
        (b'{"type":"ask","id":999,"target":1,"card":"x","please":true}', "stale"),
    ],
)
def test_a_refused_reply_without_retries_is_a_fault_and_the_fallback_plays(line: bytes, fault: str) -> None:
    m, log = machine()
    seat = first_wait(m)
    tid = m.waits[0].turn_id
    data = m.feed(Reply(seat=seat, line=line % tid if b"%d" in line else line, ms=3.0, lineno=2))
    assert data is not None and data.endswith(b"\n")
    err = msgspec.json.decode(data.split(b"\n")[-2])
    assert err["type"] == "error" and err["fault"] == fault and err["id"] == tid
    assert "send a corrected reply" not in err["detail"]
    faults = log.of("fault")
    assert [(f["seat"], f["fault"], f["id"]) for f in faults] == [(seat, fault, tid)]
    assert faults[0]["detail"].startswith("line 2")
    assert m.faulted(seat) and m.awaiting(seat) is None
    fallback = [a for a in log.of("act") if a["fallback"]]
    assert fallback and fallback[0]["seat"] == seat  # the seeded fallback played its decision
    result = finish(m)
    assert result.forfeits == [seat] and result.win_shares[seat] == 0
    events = [msg for r in log.recs if r.get("to") == (seat + 1) % 4 for msg in r["out"] if msg.get("kind") == "fault"]
    assert events and events[0]["seat"] == m.seats[seat].hs and events[0]["fault"] == fault


@pytest.mark.parametrize(
    ("line", "fault", "problem", "fragment"),
    [
        (b"debug x=3", "malformed", "not_json", "is not JSON: 'debug x=3' - write debug output to stderr"),
        (
            b'{"type":"ask","id":%d,"target":0,"card":"\xff\xfe"}',
            "malformed",
            "not_utf8",
            "is not valid UTF-8 (byte 0xff",
        ),
        (b'{"type":"ask","id":%d,"target":"x","card":"a","please":true}', "malformed", "field_type", "field `target`"),
        (b'{"type":"pass","id":%d}', "malformed", "unknown_type", "unknown message type 'pass'"),
        (b'{"type":"take","id":%d,"card":"x"}', "illegal", "wrong_reply", "asks for a `ask` reply, got `take`"),
        (b'{"type":"ask","id":%d,"target":%d,"card":"x","please":true}', "illegal", "illegal", "turn "),
    ],
    ids=["not_json", "not_utf8", "field_type", "unknown_type", "wrong_reply", "illegal"],
)
def test_each_refused_reply_gets_its_detail_and_problem(line: bytes, fault: str, problem: str, fragment: str) -> None:
    """What the subprocess tests once checked bot by bot: the fault, its detail and its structured
    problem (check-bot's fixes choose from it), the public event without the bot's words."""
    m, log = machine()
    seat = first_wait(m)
    tid = m.waits[0].turn_id
    args = (tid, m.seats[seat].hs) if line.count(b"%d") == 2 else (tid,) if b"%d" in line else ()
    m.feed(Reply(seat=seat, line=line % args if args else line, ms=1.0, lineno=2))
    result = finish(m)
    rec = result.faults[0]
    assert (rec.seat, rec.fault) == (seat, fault) and fragment in rec.detail
    assert rec.problem is not None and rec.problem.kind == problem
    events = [x for r in log.recs if "out" in r for x in r["out"] if x.get("kind") == "fault"]
    assert events and all(fragment not in e["detail"] for e in events)


def test_a_retry_forgives_a_bad_reply_and_the_turn_stays_awaited() -> None:
    m, log = machine(policy=FaultPolicy(retries=1))
    seat = first_wait(m)
    wait = m.waits[0]
    data = m.feed(Reply(seat=seat, line=b"debug", ms=3.0, lineno=2))
    assert data is not None
    err = msgspec.json.decode(data)
    assert err["fault"] == "malformed" and "this is your last try" in err["detail"]
    assert m.awaiting(seat) is wait and not m.faulted(seat)
    assert log.of("retry") == [
        {"seat": seat, "id": wait.turn_id, "fault": "malformed", "detail": log.of("retry")[0]["detail"], "left": 0}
    ]
    assert log.kinds()[-3:] == ["from", "retry", "to"]  # the refused line, the retry, the error written
    assert m.feed(legal(m, seat, ms=8.0)) is None
    assert not m.faulted(seat) and log.of("act")[-1]["seat"] == seat
    assert m.seats[seat].think.count == 1 and m.seats[seat].think.total_ms == 8.0  # charged once
    # the second bad reply after the last retry is a fault
    m2, log2 = machine(policy=FaultPolicy(retries=1))
    s2 = first_wait(m2)
    m2.feed(Reply(seat=s2, line=b"debug", ms=3.0))
    m2.feed(Reply(seat=s2, line=b"debug again", ms=6.0))
    assert [f["fault"] for f in log2.of("fault")] == ["malformed"] and m2.faulted(s2)


def test_no_retry_once_the_time_is_spent() -> None:
    m, log = machine(clock=ClockSpec(move_ms=100), policy=FaultPolicy(retries=3))
    seat = first_wait(m)
    m.feed(Reply(seat=seat, line=b"debug", ms=100.0))
    assert log.of("retry") == [] and m.faulted(seat)


def test_a_line_too_long_is_malformed_with_the_framings_detail_and_is_logged_as_an_input() -> None:
    m, log = machine(policy=FaultPolicy(retries=1))
    seat = first_wait(m)
    data = m.feed(TooLong(seat=seat, head=b"xxxx", detail="line 3 is longer than 64 bytes", ms=2.0, lineno=3))
    assert data is not None and b"line 3 is longer than 64 bytes" in data
    assert log.of("input")[-1] == {
        "type": "too_long",
        "seat": seat,
        "head": "eHh4eA==",
        "detail": "line 3 is longer than 64 bytes",
        "ms": 2.0,
        "lineno": 3,
    }
    assert log.of("retry")[0]["fault"] == "malformed"
    m.feed(TooLong(seat=seat, head=b"y", detail="line 4 is longer than 64 bytes", ms=4.0, lineno=4))
    assert m.faulted(seat) and m.last_refusal is not None and m.last_refusal[1] == "malformed"


# ----------------------------------------------------------------------------- timeouts, stale lines, crashes


def test_a_timeout_is_a_fault_and_later_lines_are_stale() -> None:
    m, log = machine()
    seat = first_wait(m)
    tid = m.waits[0].turn_id
    data = m.feed(Timeout(seat=seat, detail="no reply in time", ms=1000.0))
    assert data is not None and msgspec.json.decode(data.split(b"\n")[-2])["fault"] == "timeout"
    assert log.of("input")[-1] == {"type": "timeout", "seat": seat, "detail": "no reply in time", "ms": 1000.0}
    assert log.of("fault")[-1] == {
        "seat": seat,
        "bot": f"b{seat}",
        "fault": "timeout",
        "detail": "no reply in time",
        "id": tid,
        "game": "g",
    }
    assert m.timed_out(seat) and m.faulted(seat)
    stale = m.feed(StaleLine(seat=seat, line=b'{"type":"ask","id":%d}' % tid, ms=1200.0, lineno=5))
    assert stale is not None and msgspec.json.decode(stale)["fault"] == "stale"
    fault = log.of("fault")[-1]
    assert fault["fault"] == "stale" and fault["detail"].startswith(f"line 5 (id {tid}) arrived 1200 ms after turn")
    assert m.feed(StaleLine(seat=seat, line=b"more", ms=1300.0, lineno=6)) is None  # later ones: logged only
    assert [f["fault"] for f in log.of("fault")] == ["timeout", "stale"]
    assert [i["type"] for i in log.of("input")].count("stale_line") == 2
    result = finish(m)
    assert result.forfeits == [seat]


def test_stale_lines_over_the_cap_are_counted_not_logged() -> None:
    m, log = machine()
    seat = first_wait(m)
    m.feed(Timeout(seat=seat, detail="late"))
    for i in range(STALE_LOG_LINES + 5):
        m.feed(StaleLine(seat=seat, line=b"x", ms=1.0 + i))
    assert [i["type"] for i in log.of("input")].count("stale_line") == STALE_LOG_LINES
    finish(m)
    err = next(r["stderr"] for r in log.recs if "stderr" in r and r["stderr"]["seat"] == seat)
    assert err["stale_dropped"] == {"lines": 5, "bytes": 5}


def test_a_stale_line_of_a_seat_that_did_not_time_out_is_refused() -> None:
    m, _ = machine()
    seat = first_wait(m)
    with pytest.raises(RuntimeError, match="did not time out"):
        m.feed(StaleLine(seat=seat, line=b"x", ms=1.0))


def test_a_crash_ends_the_seat_and_nothing_more_is_written_to_it() -> None:
    m, log = machine()
    seat = first_wait(m)
    assert m.feed(Crash(seat=seat, detail="exit status 3", ms=None)) is None
    assert log.of("fault")[-1]["fault"] == "crash" and log.of("fault")[-1]["detail"] == "exit status 3"
    play_out(m)
    later = [r for r in log.recs[log.recs.index({"fault": log.of("fault")[-1]}) :] if r.get("to") == seat]
    assert later == []  # not even its end
    assert m.close(["", "", "", ""]).forfeits == [seat]


def test_a_failed_write_faults_a_seat_that_is_not_awaited() -> None:
    m, log = machine()
    seat = first_wait(m)
    other = (seat + 1) % 4
    m.feed(WriteFailed(seat=other, fault="timeout", detail="it stopped reading its stdin"))
    f = log.of("fault")[-1]
    assert (f["seat"], f["fault"], f["id"]) == (other, "timeout", None)
    assert log.of("input")[-1]["type"] == "write_failed"
    m.feed(WriteFailed(seat=other, fault="crash", detail="again"))  # a second failure: no second fault
    assert len(log.of("fault")) == 1
    assert finish(m).forfeits == [other]


def test_a_failed_write_to_the_awaited_seat_ends_its_decision() -> None:
    m, log = machine()
    seat = first_wait(m)
    m.feed(WriteFailed(seat=seat, fault="crash", detail="its stdin is closed"))
    assert m.awaiting(seat) is None and m.faulted(seat)
    assert log.of("act")[-1]["fallback"] and log.of("act")[-1]["seat"] == seat


def test_a_closed_pipe_stops_the_writes_to_a_seat() -> None:
    m, log = machine()
    seat = first_wait(m)
    m.feed(Timeout(seat=seat, detail="late"))
    m.feed(PipeClosed(seat=seat))
    n = len(log.recs)
    play_out(m)
    assert not any(r.get("to") == seat for r in log.recs[n:])


def test_a_seat_dead_at_the_start_gets_a_crash_fault_worded_by_the_machine() -> None:
    m, log = machine(dead={2: "exit status 1"})
    assert log.of("input")[0] == {"type": "dead_at_start", "seat": 2, "death": "exit status 1"}
    f = log.of("fault")[0]
    assert (f["seat"], f["fault"], f["id"]) == (2, "crash", None)
    assert f["detail"] == f"{DEAD_AT_START} (exit status 1)"
    assert finish(m).forfeits == [2]
    assert not any(r.get("to") == 2 for r in log.recs)  # nothing is written to the dead seat
    with pytest.raises(RuntimeError, match="before start"):
        m.feed(DeadAtStart(seat=1))


def test_every_seat_dead_at_the_start_is_played_by_the_fallback() -> None:
    m, log = machine(dead={0: None, 1: None, 2: None, 3: None})
    assert m.take_writes() == []
    result = finish(m)
    assert result.reason == "complete" and result.forfeits == [0, 1, 2, 3]
    assert all(a["fallback"] for a in log.of("act"))


# ----------------------------------------------------------------------------- the clock's bank, the backstop


def test_the_bank_shortens_the_limit_and_the_turn_says_what_is_left() -> None:
    m, log = machine(clock=ClockSpec(move_ms=800, bank_ms=1000))
    seat = first_wait(m)
    assert m.waits[0].limit_ms == 800
    m.feed(legal(m, seat, ms=700.0))
    while m.playing:  # the seat's next turn
        writes(m)
        w = m.awaiting(seat)
        if w is not None:
            break
        for other in list(m.waits):
            m.feed(legal(m, other.seat, ms=1.0))
    assert w is not None and w.limit_ms == 300.0  # min(move_ms, bank left)
    turns = [msg for r in log.recs if r.get("to") == seat for msg in r["out"] if msg["type"] == "turn"]
    assert turns[-1]["clock"]["left_ms"] == 300


def test_a_hand_past_max_decisions_is_aborted() -> None:
    m, log = machine(policy=FaultPolicy(max_decisions=3))
    result = finish(m)
    assert result.reason == "aborted" and "no end after 3 decisions" in (result.detail or "")
    assert result.scores == [0, 0, 0, 0]
    assert log.of("hand_end")[-1]["reason"] == "aborted"


# ----------------------------------------------------------------------------- simultaneous decisions (chickens)


def _chickens_round(order: list[int], bad: int | None = None) -> Log:
    m, log = machine("chickens", 4, seed=3, policy=FaultPolicy(retries=1))
    writes(m)
    assert sorted(w.seat for w in m.waits) == [0, 1, 2, 3]  # every seat plays at once
    replies = {w.seat: legal(m, w.seat, ms=float(w.seat)) for w in m.waits}
    for seat in order:
        if seat == bad:
            assert m.feed(Reply(seat=seat, line=b"junk", ms=1.0)) is not None  # a retry error at once
        m.feed(replies[seat])
    return log


def test_simultaneous_plays_are_recorded_and_applied_in_seat_order_whatever_the_arrival() -> None:
    a = _chickens_round([3, 1, 0, 2], bad=1)
    b = _chickens_round([0, 1, 2, 3], bad=1)
    assert a.recs == b.recs
    acts = [x["seat"] for x in a.of("act")]
    assert acts == [0, 1, 2, 3]
    assert a.kinds().index("retry") < a.kinds().index("act")  # seat 1's retry before the plays


def test_a_simultaneous_decision_waits_for_the_last_seat() -> None:
    m, log = machine("chickens", 3, seed=2)
    writes(m)
    n = len(log.recs)
    seats = [w.seat for w in m.waits]
    for seat in seats[:-1]:
        m.feed(legal(m, seat))
    assert log.recs[n:] == [] and len(m.waits) == 1  # nothing applied or revealed yet
    m.feed(Timeout(seat=seats[-1], detail="late"))
    assert [a["seat"] for a in log.of("act")][-3:] == [0, 1, 2]
    assert log.of("act")[-1]["fallback"]


# ----------------------------------------------------------------------------- matches and the end of a hand


def test_a_match_waits_for_the_end_lines_to_be_written_before_the_next_hand() -> None:
    m, log = machine(match=MatchFormat(kind="fixed", hands=2))
    hands = 0
    while m.playing:
        for w in list(m.waits):
            m.feed(legal(m, w.seat))
        if m.barrier:
            ends = m.take_writes()
            assert ends and m.barrier  # the end lines are out; the next hand waits for WRITTEN
            hands += 1
            m.feed(WRITTEN)
        else:
            m.take_writes()
    assert hands == 2 and len(log.of("hand")) == 2
    result = m.close([""] * 4)
    assert result.reason == "complete" and len(result.scores) == 4
