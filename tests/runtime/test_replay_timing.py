"""`referee replay` checks the timing a log determines: each accepted reply within its
limit (CPU time and wall ceiling with the cpu clock), the bank behind every turn's
`left_ms`, times that never decrease, a reply's time within the span since its turn,
and the footer's think stats. Real logs (bank, cpu clock, retries, timeouts, a chickens
table, a match) verify; forged timing edits are caught with the line and the field."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.cli import main
from referee.runtime.replay import replay

from .helpers import BOTS, RANDOM_BOT

# the tests read the logs one module fixture makes: made once, on one worker
pytestmark = pytest.mark.xdist_group("replay-timing")

PY = sys.executable
RANDOM = f"{PY} {RANDOM_BOT}"
RETRYING = f"env BOT_THEN_LEGAL=1 {PY} {BOTS / 'illegal_bot.py'}"  # illegal once, then legal: a retry
ILLEGAL = f"{PY} {BOTS / 'illegal_bot.py'}"  # illegal: a fault logged with its time
NONJSON = f"{PY} {BOTS / 'nonjson_bot.py'}"  # malformed


def _sched(ms: str) -> str:
    return f"env BOT_DELAYS_MS={ms} {PY} {BOTS / 'slow_bot.py'}"


GAMES: dict[str, list[str]] = {
    # wall clock, no bank: a bot that thinks 30 ms on its first turns
    "wall": [
        "kwartet",
        "--seed",
        "21",
        "--move-ms",
        "1000",
        "--bot",
        f"a={RANDOM}",
        "--bot",
        f"b={_sched('30,30')}",
        "--bot",
        f"c={RANDOM}",
    ],
    # a bank charged by real think times, and a retry
    "bank": [
        "kwartet",
        "--seed",
        "22",
        "--move-ms",
        "1000",
        "--bank-ms",
        "20000",
        "--retries",
        "1",
        "--bot",
        f"a={_sched('40,40,40')}",
        "--bot",
        f"b={RANDOM}",
        "--bot",
        f"c={RANDOM}",
        "--bot",
        f"d={RETRYING}",
    ],
    # cpu clock: sleeping costs wall time, not CPU time (act.wall_ms > act.ms)
    "cpu": [
        "kwartet",
        "--seed",
        "23",
        "--clock",
        "cpu",
        "--move-ms",
        "1000",
        "--bank-ms",
        "30000",
        "--bot",
        f"a=env BOT_DELAY_MS=150 {PY} {BOTS / 'slow_bot.py'}",
        "--bot",
        f"b={RANDOM}",
        "--bot",
        f"c={RANDOM}",
    ],
    # a timeout (then a stale late line) under a bank, and a malformed reply
    "timeout": [
        "kwartet",
        "--seed",
        "24",
        "--move-ms",
        "200",
        "--bank-ms",
        "10000",
        "--bot",
        f"a=env BOT_LATE_MS=400 {PY} {BOTS / 'late_bot.py'}",
        "--bot",
        f"b={RANDOM}",
        "--bot",
        f"c={RANDOM}",
        "--bot",
        f"d={NONJSON}",
    ],
    # simultaneous plays with a bank, a retry and an illegal fault
    "chickens": [
        "chickens",
        "--seed",
        "25",
        "--retries",
        "1",
        "--bank-ms",
        "8000",
        "--bot",
        f"a={RETRYING}",
        "--bot",
        f"b={RANDOM}",
        "--bot",
        f"c={ILLEGAL}",
    ],
    # a match: the bank starts again each hand
    # (seeded random bots: a shared best total after two hands adds a tie-break hand; the count is then fixed)
    "match": [
        "authors",
        "--seed",
        "26",
        "--match",
        "fixed:2",
        "--bank-ms",
        "5000",
        "--bot",
        f"a={RANDOM} 7",
        "--bot",
        f"b={_sched('20,20')}",
        "--bot",
        f"c={RANDOM} 8",
    ],
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("timing")
    out = {}
    for name, args in GAMES.items():
        assert main(["play", *args, "--game-id", name, "--log", str(d), "--grace-ms", "100"]) == 0
        out[name] = d / f"{name}.jsonl"
    return out


def _recs(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _write(tmp_path: Path, recs: list[dict[str, Any]]) -> Path:
    p = tmp_path / "forged.jsonl"
    p.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs))
    return p


def _mismatch(tmp_path: Path, recs: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> str:
    rc = main(["replay", "-q", str(_write(tmp_path, recs))])
    cap = capsys.readouterr()
    out = cap.out + cap.err
    assert rc == 1 and re.search(r"mismatch: line \d+: ", out) and "Traceback" not in out, out
    return out


def _find(recs: list[dict[str, Any]], pred: Callable[[dict[str, Any]], bool], start: int = 0) -> int:
    return next(i for i in range(start, len(recs)) if pred(recs[i]))


def _own_act(seat: int | None = None) -> Callable[[dict[str, Any]], bool]:
    return lambda r: "act" in r and not r["act"]["fallback"] and (seat is None or r["act"]["seat"] == seat)


def test_real_logs_of_every_clock_verify(logs, tmp_path, capsys):
    recs = {k: _recs(p) for k, p in logs.items()}
    # the logs hold what the test is about
    turns = [m for r in recs["bank"] if "out" in r for m in r["out"] if m["type"] == "turn"]
    assert min(m["clock"]["left_ms"] for m in turns if m["clock"]["left_ms"]) < 20000 - 100  # the bank was charged
    assert any("retry" in r for r in recs["bank"]) and any("retry" in r for r in recs["chickens"])
    cpu = [r["act"] for r in recs["cpu"] if _own_act()(r)]
    assert cpu and all("wall_ms" in a for a in cpu) and any(a["wall_ms"] > 140 > a["ms"] for a in cpu)
    faults = {r["fault"]["fault"] for r in recs["timeout"] if "fault" in r}
    assert {"timeout", "stale", "malformed"} <= faults, faults
    assert any(r.get("fault", {}).get("fault") == "illegal" for r in recs["chickens"])
    hands = [r["hand"]["game"] for r in recs["match"] if "hand" in r]
    assert hands[:2] == ["match.h1", "match.h2"] and all(re.fullmatch(r"match\.h\d+", h) for h in hands), hands
    for name, path in logs.items():
        report = replay(path)
        assert report.ok, (name, report.mismatches)
        think = report.footer["think_ms"]
        assert sum(t["count"] for t in think) >= report.actions - sum(
            1 for r in recs[name] if r.get("act", {}).get("fallback")
        ), name


async def test_real_logs_from_play_game_with_seat_clocks_verify(tmp_path):
    """The same checks through the API: per-seat clocks, one with a bank, one cpu, one timing out."""
    from referee.runtime import ClockSpec, FaultPolicy

    from .helpers import bot, play

    specs = [
        bot("tight", "slow_bot.py", BOT_DELAY_MS="150"),
        bot("banked", "slow_bot.py", BOT_DELAY_MS="60"),
        bot("cpu", "slow_bot.py", BOT_DELAY_MS="60"),
        bot("ill", "illegal_bot.py", BOT_THEN_LEGAL="1"),
    ]
    clocks = [
        ClockSpec(move_ms=100),
        ClockSpec(move_ms=1000, bank_ms=5000),
        ClockSpec(move_ms=500, mode="cpu", wall_ceiling_ms=2000),
        None,
    ]
    result, report = await play(
        specs,
        "kwartet",
        seed=5,
        log_dir=tmp_path,
        clock=ClockSpec(move_ms=2000),
        policy=FaultPolicy(retries=1),
        seat_clocks=clocks,
    )
    assert [f.fault for f in result.faults if f.seat == 0][:1] == ["timeout"], result.faults
    assert report.ok, report.mismatches
    assert [t.count for t in result.think_ms] == [t["count"] for t in report.footer["think_ms"]]


# ----------------------------------------------------------------------------- forged timing


def test_an_accepted_reply_over_its_move_limit_is_caught(logs, tmp_path, capsys):
    recs = _recs(logs["wall"])
    i = _find(recs, _own_act())
    recs[i]["act"]["ms"] = 5000.0
    out = _mismatch(tmp_path, recs, capsys)
    assert f"line {i + 1}: " in out, out
    assert "act.ms 5000.0, over its limit of 1000.000 ms (move_ms 1000) by more than" in out, out


def test_a_reply_time_longer_than_the_span_since_its_turn_is_caught(logs, tmp_path, capsys):
    # within the limit, but more than the log's own times say passed since the turn was written
    recs = _recs(logs["wall"])
    i = _find(recs, _own_act())
    recs[i]["act"]["ms"] = 900.0
    out = _mismatch(tmp_path, recs, capsys)
    assert f"line {i + 1}: the act of seat" in out and "900.0 ms of wall time, but only" in out, out


def test_a_negative_or_nonfinite_reply_time_is_caught(logs, tmp_path, capsys):
    recs = _recs(logs["wall"])
    i = _find(recs, _own_act())
    recs[i]["act"]["ms"] = -1.0
    out = _mismatch(tmp_path, recs, capsys)
    assert f"line {i + 1}: " in out and "act.ms -1.0, expected a think time of 0 ms or more" in out, out
    path = _write(tmp_path, recs)
    path.write_text(path.read_text().replace('"ms":-1.0', '"ms":1e999', 1))
    rc = main(["replay", "-q", str(path)])
    out = capsys.readouterr()
    assert rc in (1, 2) and "Traceback" not in out.out + out.err and f"line {i + 1}" in out.out + out.err, out


def test_a_fallback_with_a_think_time_is_caught(logs, tmp_path, capsys):
    recs = _recs(logs["timeout"])
    i = _find(recs, lambda r: r.get("act", {}).get("fallback") is True)
    recs[i]["act"]["ms"] = 3.5
    out = _mismatch(tmp_path, recs, capsys)
    assert f"line {i + 1}: the fallback action of seat" in out and "expected ms 0" in out, out


def test_the_cpu_clock_checks_cpu_time_and_the_wall_ceiling(logs, tmp_path, capsys):
    base = _recs(logs["cpu"])
    i = _find(base, _own_act())
    # CPU time is compared with the limit after it is measured: no slack beyond rounding
    recs = _recs(logs["cpu"])
    recs[i]["act"]["ms"] = 1000.5
    out = _mismatch(tmp_path, recs, capsys)
    assert f"line {i + 1}: " in out and "act.ms 1000.5 ms of CPU time, over its limit" in out, out
    recs = _recs(logs["cpu"])
    recs[i]["act"]["wall_ms"] = 9000.0  # the wall ceiling is 3 x 1000 ms
    out = _mismatch(tmp_path, recs, capsys)
    assert f"line {i + 1}: " in out and "act.wall_ms 9000.0, over the wall ceiling of 3000 ms" in out, out
    recs = _recs(logs["cpu"])
    recs[i]["act"]["wall_ms"] = -0.5
    out = _mismatch(tmp_path, recs, capsys)
    assert f"line {i + 1}: " in out and "act.wall_ms -0.5, expected a wall time of 0 ms or more" in out, out
    # wall_ms only exists with the cpu clock
    recs = _recs(logs["wall"])
    j = _find(recs, _own_act())
    recs[j]["act"]["wall_ms"] = 1.0
    out = _mismatch(tmp_path, recs, capsys)
    assert f"line {j + 1}: " in out and "act.wall_ms 1.0 under a wall clock" in out, out


def test_the_bank_left_in_each_turn_is_the_bank_minus_the_recorded_times(logs, tmp_path, capsys):
    base = _recs(logs["bank"])
    # a turn's left_ms edited
    recs = _recs(logs["bank"])
    i = _find(
        recs, lambda r: "out" in r and any(m["type"] == "turn" and m["clock"]["left_ms"] < 20000 for m in r["out"])
    )
    turn = next(m for m in recs[i]["out"] if m["type"] == "turn")
    turn["clock"]["left_ms"] -= 1
    out = _mismatch(tmp_path, recs, capsys)
    assert (
        f"line {i + 1}: the turn to seat {recs[i]['to']} says clock.left_ms {turn['clock']['left_ms']}, "
        f"expected {turn['clock']['left_ms'] + 1} (bank_ms 20000 minus" in out
    ), out
    # an act's ms edited within the move limit (and within its span): the next turn's left_ms disagrees
    recs = _recs(logs["bank"])
    i = _find(recs, lambda r: _own_act(0)(r) and r["act"]["ms"] > 30)  # a 40 ms think of seat 0
    recs[i]["act"]["ms"] = round(recs[i]["act"]["ms"] - 20, 3)
    j = _find(recs, lambda r: r.get("to") == 0 and any(m["type"] == "turn" for m in r["out"]), i)
    out = _mismatch(tmp_path, recs, capsys)
    assert f"line {j + 1}: the turn to seat 0 says clock.left_ms" in out, out
    assert base  # unchanged log verified in test_real_logs_of_every_clock_verify


@pytest.mark.parametrize("log", ["wall", "bank", "cpu", "timeout", "chickens", "match"])
@pytest.mark.parametrize(
    "field,delta,words",
    [
        ("count", 1, "count is"),
        ("count", -1, "count is"),
        ("max_ms", 1.0, "max_ms is"),
        ("mean_ms", 0.5, "mean_ms is"),
    ],
)
def test_the_footer_think_stats_are_recomputed(logs, tmp_path, capsys, log, field, delta, words):
    recs = _recs(logs[log])
    think = recs[-1]["footer"]["think_ms"]
    seat = next(s for s, t in enumerate(think) if t["count"] > 0)
    if field == "max_ms" and any(
        r.get("fault", {}).get("seat") == seat and r["fault"]["fault"] in ("timeout", "crash") for r in recs
    ):
        delta = -1000.0  # an unlogged timeout may be the maximum: only a lower bound is known
    think[seat][field] = think[seat][field] + delta
    out = _mismatch(tmp_path, recs, capsys)
    assert f"line {len(recs)}: the footer's think_ms[{seat}].{words}" in out, out


def test_the_footer_think_stats_count_the_faulting_decision(logs, tmp_path, capsys):
    # seat 3 of the timeout game sent a malformed line: that decision is counted, with its logged time
    recs = _recs(logs["timeout"])
    f = next(r["fault"] for r in recs if r.get("fault", {}).get("fault") == "malformed")
    acts = sum(1 for r in recs if _own_act(f["seat"])(r))
    assert recs[-1]["footer"]["think_ms"][f["seat"]]["count"] == acts + 1
    bad = next(r for r in recs if r.get("from") == f["seat"] and "bad" in r)
    assert recs[-1]["footer"]["think_ms"][f["seat"]]["max_ms"] >= bad["ms"] - 0.001


def test_times_never_decrease(logs, tmp_path, capsys):
    recs = _recs(logs["wall"])
    i = _find(recs, _own_act(), 10)
    prev = max(r["t"] for r in recs[:i] if "t" in r)
    recs[i]["t"] = round(prev - 0.0005, 6)
    out = _mismatch(tmp_path, recs, capsys)
    assert f"line {i + 1}: t is {recs[i]['t']}, before t {prev} of line" in out and "never decrease" in out, out
    recs = _recs(logs["wall"])
    recs[1 if "t" in recs[1] else 2]["t"] = -1.0
    out = _mismatch(tmp_path, recs, capsys)
    assert "t is -1.0, expected a time in seconds since the game started" in out, out


def test_a_timeout_fault_sooner_than_the_limit_is_caught(logs, tmp_path, capsys):
    recs = _recs(logs["timeout"])
    i = _find(recs, lambda r: r.get("fault", {}).get("fault") == "timeout")
    early = max(r["t"] for r in recs[:i] if "t" in r and "input" not in r)  # right after the turn: before 200 ms
    recs[i]["t"] = early
    assert recs[i - 1]["input"]["type"] == "timeout"  # the input the fault records (log version 3)
    recs[i - 1]["t"] = early
    out = _mismatch(tmp_path, recs, capsys)
    assert f"line {i + 1}: the timeout fault of seat" in out and "its limit is 200.000 ms" in out, out


def test_a_refused_reply_time_is_checked(logs, tmp_path, capsys):
    recs = _recs(logs["timeout"])
    i = _find(recs, lambda r: "bad" in r or "in" in r)
    recs[i]["ms"] = -2.0
    out = _mismatch(tmp_path, recs, capsys)
    assert f"line {i + 1}: the refused reply of seat" in out and "ms -2.0" in out, out
