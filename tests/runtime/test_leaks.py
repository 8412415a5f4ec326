"""No bot process outlives its game or session: checked by process group in /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import trio

from referee.rules import get_variant
from referee.runtime import ClockSpec, GameSpec, play_game, start_bots

from .helpers import BOTS, ROOT, bot, groups_from, live_in_group


async def test_no_process_left_after_game_crash_and_timeout(tmp_path):
    pidfile = tmp_path / "pids"
    env = {"BOT_PIDFILE": str(pidfile)}
    specs = [bot("crasher", "crash_bot.py", **env), bot("silent", "silent_bot.py", **env),
             bot("good", "instant_bot.py", **env)]
    clock = ClockSpec(move_ms=300)
    async with trio.open_nursery() as nursery:
        sessions = await start_bots(specs, clock, nursery)
        groups = {s.name: s.pid for s in sessions}
        try:
            result = await play_game(GameSpec("g-1", get_variant("kwartet"), 3, seed=11, clock=clock), sessions,
                                     tmp_path)
            assert sorted(f.fault for f in result.faults if f.fault != "stale") == ["crash", "timeout"]
            # the crashed and the timed-out bot are already killed (with the crasher's child)
            assert not sessions[0].alive and not sessions[1].alive and sessions[2].alive
            assert live_in_group(groups["crasher"]) == []
            assert live_in_group(groups["silent"]) == []
            assert live_in_group(groups["good"]) != []
        finally:
            for s in sessions:
                await s.close()
    assert len(pidfile.read_text().split("\n")) >= 4  # three bots and the crasher's child
    for pgid in groups_from(pidfile):
        assert live_in_group(pgid) == [], f"process group {pgid} still has processes"


def test_ctrl_c_of_referee_play_leaves_no_bot_behind(tmp_path):
    pidfile = tmp_path / "pids"
    env = {**os.environ, "BOT_PIDFILE": str(pidfile), "BOT_FAULT_AT": "1"}
    silent = f"{sys.executable} {BOTS / 'silent_bot.py'}"
    cmd = [sys.executable, "-m", "referee", "play", "kwartet", "--seed", "1", "--move-ms", "60000",
           "--log", str(tmp_path / "logs"), "--bot", f"a={silent}", "--bot", f"b={silent}", "--bot", f"c={silent}"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # wait until the three bots run (test-side wait, not referee code)
            if pidfile.exists() and len(pidfile.read_text().split()) >= 6:
                break
            time.sleep(0.05)
        groups = groups_from(pidfile)
        assert len(groups) == 3
        time.sleep(0.3)  # the game is now waiting for a bot that never answers
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err
    for pgid in groups:
        assert live_in_group(pgid) == [], f"bot process group {pgid} survived Ctrl-C"
    log = next((tmp_path / "logs").glob("*.jsonl"))
    assert b'"reason":"aborted"' in log.read_bytes().splitlines()[-1]
