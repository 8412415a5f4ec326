"""Hides its thinking from the CPU-time clock (finding 4 of issue 15): its
children are reaped automatically (SIGCHLD set to SIG_IGN), so their CPU
time never reaches its own counters, and each lives only briefly, so that a
reading of the live processes rarely finds one. Each turn, short-lived
children one after another burn twice the move time in CPU (knob 1:
milliseconds instead; knob 2: milliseconds per child, default 20) while the
bot waits, then the bot answers inside the wall ceiling (expected in cpu
mode: timeout)."""

import os
import signal
import time

from _common import arg, legal_reply, move_ms, play

signal.signal(signal.SIGCHLD, signal.SIG_IGN)


def burn(seconds: float) -> None:
    start = time.process_time()
    x = 0
    while time.process_time() - start < seconds:
        for i in range(2000):
            x += i * i


def on_turn(turn, rules, n):
    total = int(arg(1, "0")) or move_ms(turn) * 2
    chunk = int(arg(2, "20"))
    for _ in range(max(1, total // chunk)):
        pid = os.fork()
        if pid == 0:
            burn(chunk / 1000)
            os._exit(0)
        while True:  # no wait(): the child reaps itself; poll until it is gone
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.001)
    return legal_reply(turn, rules)


play("reaper", on_turn)
