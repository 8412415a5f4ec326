"""No bot process outlives its game or session.

Every bot of a test carries a unique ``BOT_TOKEN`` in its environment (inherited
by anything it starts); afterwards no live process in /proc may have it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import replace

import trio

from referee.rules import get_variant
from referee.runtime import ClockSpec, GameSpec, ResourceLimits, play_game, start_bots

from .helpers import BOTS, ROOT, bot, live_with_token


async def test_no_process_left_after_game_crash_and_timeout(tmp_path):
    pidfile = tmp_path / "pids"
    tokens = {name: uuid.uuid4().hex for name in ("crasher", "silent", "good")}
    # the crasher writes its pid file into its own folder: a sandbox shows it no other writable one
    crasher = replace(
        bot("crasher", "crash_bot.py", BOT_PIDFILE=str(pidfile), BOT_TOKEN=tokens["crasher"]),
        cwd=str(tmp_path),
        limits=ResourceLimits(temp_workdir=False, writable=True),
    )
    specs = [
        crasher,
        bot("silent", "silent_bot.py", BOT_TOKEN=tokens["silent"]),
        bot("good", "instant_bot.py", BOT_TOKEN=tokens["good"]),
    ]
    clock = ClockSpec(move_ms=300)
    async with trio.open_nursery() as nursery:
        sessions = await start_bots(specs, clock, nursery)
        try:
            assert all(live_with_token(t) for t in tokens.values())
            result = await play_game(
                GameSpec("g-1", get_variant("kwartet"), 3, seed=11, clock=clock), sessions, tmp_path
            )
            assert sorted(f.fault for f in result.faults if f.fault != "stale") == ["crash", "timeout"]
            # the crashed and the timed-out bot are already killed (with the crasher's child)
            assert not sessions[0].alive and not sessions[1].alive and sessions[2].alive
            assert live_with_token(tokens["crasher"]) == []
            assert live_with_token(tokens["silent"]) == []
            assert live_with_token(tokens["good"]) != []
        finally:
            for s in sessions:
                await s.close()
    assert len(pidfile.read_text().split("\n")) >= 3  # the crasher and its child
    assert all(live_with_token(t) == [] for t in tokens.values())


def test_ctrl_c_of_referee_play_leaves_no_bot_behind(tmp_path):
    token = uuid.uuid4().hex
    # the command sets the variables itself: the sandbox may scrub the referee's environment
    silent = f"env BOT_TOKEN={token} BOT_FAULT_AT=1 {sys.executable} {BOTS / 'silent_bot.py'}"
    env = dict(os.environ)
    cmd = [
        sys.executable,
        "-m",
        "referee",
        "play",
        "kwartet",
        "--seed",
        "1",
        "--move-ms",
        "60000",
        "--log",
        str(tmp_path / "logs"),
        "--bot",
        f"a={silent}",
        "--bot",
        f"b={silent}",
        "--bot",
        f"c={silent}",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # wait until the three bots run (test-side wait, not referee code)
            if len(live_with_token(token)) >= 3:
                break
            time.sleep(0.05)
        assert len(live_with_token(token)) >= 3
        time.sleep(0.3)  # the game is now waiting for a bot that never answers
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err
    assert live_with_token(token) == [], "a bot process survived Ctrl-C"
    log = next((tmp_path / "logs").glob("*.jsonl"))
    assert b'"reason":"aborted"' in log.read_bytes().splitlines()[-1]
