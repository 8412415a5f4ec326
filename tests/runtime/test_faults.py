"""Every fault type, provoked by a purpose-built bad bot (real processes)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.core.errors import public_fault_detail
from referee.rules import get_variant
from referee.runtime import BotRefused, BotSession, BotSpec, ClockSpec, GameSpec, ResourceLimits, play_game, start_bots
from referee.runtime.replay import replay

from .helpers import bot, left_behind, live_in_group, live_with_token, log_records, play, sent_to

CASES = [
    # script, fault, detail fragment, move_ms
    # one smoke test per fault kind, with real processes (what each kind of refused reply becomes,
    # its detail and problem, retries, the bank, simultaneous plays: tests/core/test_machine.py)
    ("silent_bot.py", "timeout", "within the time limit of 300 ms", 300),
    ("crash_bot.py", "crash", "exit status 3", 2000),
    ("longline_bot.py", "malformed", "is longer than 65536 bytes", 2000),  # the framing's limit
    ("illegal_bot.py", "illegal", "turn ", 2000),
    ("staleid_bot.py", "stale", "is not the current turn's id", 2000),
]
#: the structured problem (``FaultRecord.problem``) of each case's fault (None: not a malformed or illegal reply)
PROBLEMS = {
    "longline_bot.py": "too_long",
    "illegal_bot.py": "illegal",
}


async def _play_tracked(specs: list[BotSpec], *, seed: int, log_dir: Path, clock: ClockSpec) -> Any:
    """Like ``helpers.play`` (start, one game, close, replay), and also checks
    that no bot process is left behind: none in any bot's process group, none
    carrying a bot's ``BOT_TOKEN`` (children included), and the session of a
    crashed or timed-out bot is gone at once, before the others are closed."""
    tokens = [s.env["BOT_TOKEN"] for s in specs if s.env]
    assert len(tokens) == len(specs)
    spec = GameSpec("g-000001", get_variant("kwartet"), len(specs), seed=seed, clock=clock)
    async with trio.open_nursery() as nursery:
        sessions = await start_bots(specs, clock, nursery)
        pids = [s.pid for s in sessions]
        assert all(live_in_group(p) for p in pids) and all(live_with_token(t) for t in tokens)  # the checks see them
        try:
            result = await play_game(spec, sessions, log_dir)
            for s, token in zip(sessions, tokens, strict=True):
                if not s.alive:  # killed by the runtime (crash, timeout): nothing of it may run on
                    assert await left_behind(s.pid, token) == [], s
        finally:
            for s in sessions:
                await s.close()
    leftover = {s.name: await left_behind(p, t) for s, p, t in zip(sessions, pids, tokens, strict=True)}
    assert all(v == [] for v in leftover.values()), f"bot processes left behind: {leftover}"
    return result, replay(result.log_path)


@pytest.mark.parametrize("script,fault,fragment,move_ms", CASES, ids=[c[0][:-7] for c in CASES])
async def test_fault_is_recorded_game_finishes_and_replays(tmp_path, script, fault, fragment, move_ms):
    token = uuid.uuid4().hex
    specs = [
        bot("bad", script, BOT_TOKEN=f"{token}-0"),
        bot("good1", "instant_bot.py", BOT_SEED="2", BOT_TOKEN=f"{token}-1"),
        bot("good2", "instant_bot.py", BOT_TOKEN=f"{token}-2"),
    ]
    result, report = await _play_tracked(specs, seed=3, log_dir=tmp_path, clock=ClockSpec(move_ms=move_ms))
    assert result.reason == "complete"
    faults = [f for f in result.faults if f.seat == 0]
    assert faults and faults[0].fault == fault, result.faults
    assert fragment in faults[0].detail
    problem = faults[0].problem
    assert (problem.kind if problem is not None else None) == PROBLEMS.get(script), problem
    assert "bot" not in [f.bot for f in result.faults if f.seat != 0]
    assert result.forfeits == [0] and result.win_shares[0] == 0.0
    assert abs(sum(result.win_shares) - 1.0) < 1e-9
    # every seat was told; the bad bot got an error while its pipe was open
    for seat in range(3):
        events = [m for m in sent_to(result.log_path, seat, "event") if m["kind"] == "fault"]
        if seat != 0 or fault != "crash":
            assert events and events[0]["fault"] == fault and events[0]["seat"] == 0
        for ev in events:
            # the public event never quotes the bot's own output (no channel between bots)
            assert ev["detail"] == public_fault_detail(fault) and fragment not in ev["detail"]
    if fault != "crash":
        errors = sent_to(result.log_path, 0, "error")
        assert errors and errors[0]["fault"] == fault and fragment in errors[0]["detail"]
        assert sent_to(result.log_path, 0, "end"), "a faulted bot still gets `end`"
    assert report.ok, report.mismatches


async def test_late_reply_is_timeout_then_stale(tmp_path):
    specs = [
        bot("late", "late_bot.py", BOT_LATE_MS="380"),
        bot("good1", "instant_bot.py"),
        bot("good2", "instant_bot.py", BOT_SEED="3"),
    ]
    result, report = await play(specs, "kwartet", seed=4, log_dir=tmp_path, clock=ClockSpec(move_ms=300))
    kinds = [f.fault for f in result.faults if f.seat == 0]
    assert kinds == ["timeout", "stale"], result.faults
    assert "discarded as stale" in result.faults[1].detail
    assert report.ok, report.mismatches


async def test_a_referee_stalled_past_the_late_read_allowance_judges_a_timeout_and_the_log_verifies(tmp_path):
    """The referee's own lateness: a reply that arrived in time while the referee could not run
    (here its loop is blocked, as on an overloaded host) is accepted when read within
    LATE_READ_MS past the limit, and judged a timeout (saying why) when read later; either way
    the runtime and replay apply the same bound, so the log verifies."""
    from referee.core.spec import LATE_READ_MS

    move_ms = 500
    # a root referee runs even an unsandboxed bot under a uid of its own: the marks' folder is
    # outside pytest's private (0700) tree and open to everyone
    folder = Path(tempfile.mkdtemp(prefix="referee-marks-"))
    os.chmod(folder, 0o777)
    marks = [folder / "mark-a", folder / "mark-b"]
    stalls = [(move_ms + LATE_READ_MS / 2) / 1000, (move_ms + LATE_READ_MS + 700) / 1000]
    trusted = ResourceLimits(sandbox=False)  # the bots write their marks outside any sandbox view
    specs = [
        replace(bot("a", "marking_bot.py", BOT_MARK=str(marks[0]), BOT_FAULT_AT="1"), limits=trusted),
        replace(bot("b", "marking_bot.py", BOT_MARK=str(marks[1]), BOT_FAULT_AT="2", BOT_SEED="4"), limits=trusted),
        bot("c", "instant_bot.py", BOT_SEED="3"),
    ]

    async def stall_the_loop() -> None:
        for mark, seconds in zip(marks, stalls, strict=True):
            while not mark.exists():  # noqa: ASYNC110 - written by another process: nothing to wait on
                await trio.sleep(0.002)
            time.sleep(seconds)  # noqa: ASYNC251 - blocks the referee's loop on purpose: the bot replies meanwhile

    try:
        async with trio.open_nursery() as n:
            n.start_soon(stall_the_loop)
            result, report = await play(specs, "kwartet", seed=4, log_dir=tmp_path, clock=ClockSpec(move_ms=move_ms))
            n.cancel_scope.cancel()
        assert all(m.exists() for m in marks), result.faults
    finally:
        shutil.rmtree(folder)
    assert [f.fault for f in result.faults if f.seat == 0] == [], result.faults
    late = [f for f in result.faults if f.seat == 1 and f.fault == "timeout"]
    assert late and "was read only after" in late[0].detail and "overloaded host" in late[0].detail, result.faults
    acts = [r["act"] for r in log_records(result.log_path) if r.get("act") and r["act"].get("seat") == 0]
    assert any(a["ms"] > move_ms for a in acts), acts  # seat 0's late read was accepted, measured as it was
    assert report.ok, report.mismatches


async def test_wrong_protocol_version_is_refused(tmp_path):
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotRefused) as info:
            await BotSession.start(bot("future", "oldproto_bot.py"), ClockSpec(), nursery)
    text = str(info.value)
    assert "protocol version 2" in text and "protocol version 1" in text and "future" in text


@pytest.mark.parametrize("script,fault", [("silent_bot.py", "timeout")])  # the others: tests/core/test_machine.py
async def test_faults_during_simultaneous_chickens_plays(tmp_path, script, fault):
    specs = [bot("a", "instant_bot.py"), bot("bad", script, BOT_FAULT_AT="3"), bot("c", "instant_bot.py", BOT_SEED="9")]
    result, report = await play(specs, "chickens", seed=8, log_dir=tmp_path, clock=ClockSpec(move_ms=400))
    assert [f.fault for f in result.faults if f.fault != "stale" or fault == "stale"][0] == fault
    assert result.forfeits == [1] and result.reason == "complete"
    assert report.ok, report.mismatches


async def test_every_message_sent_matches_the_protocol_types(tmp_path):
    """Strict decoding of everything the referee wrote, with the protocol's own Structs."""
    import msgspec

    from protocol.messages import REFEREE_DECODER, EventKind

    from .helpers import log_records

    event_decoder = msgspec.json.Decoder(EventKind)
    for variant in ("happy-families-jaques", "chickens"):
        specs = [bot(f"b{i}", "instant_bot.py", BOT_SEED=str(i)) for i in range(3)]
        result, _ = await play(specs, variant, seed=3, log_dir=tmp_path / variant)
        seen = set()
        for rec in log_records(result.log_path):
            for msg in rec.get("out", []):
                raw = msgspec.json.encode(msg)
                REFEREE_DECODER.decode(raw)
                if msg["type"] == "event":
                    event_decoder.decode(raw)
                    seen.add(msg["kind"])
                seen.add(msg["type"])
        assert {"start", "turn", "end", "event"} <= seen
