"""Tries to hide its CPU time from the CPU-time clock: leaves the process
group the referee watches (setsid) and lets a forked child (which also leaves
it) do the thinking, burning twice the move time in CPU per decision while
answering inside the wall ceiling (expected in cpu mode: timeout)."""

import os
import time

from _common import legal_reply, move_ms, play

os.setsid()


def burn(seconds: float) -> None:
    start = time.process_time()
    x = 0
    while time.process_time() - start < seconds:
        for i in range(2000):
            x += i * i


def on_turn(turn, rules, n):
    budget = move_ms(turn) * 2 / 1000
    pid = os.fork()
    if pid == 0:
        os.setsid()
        burn(budget)
        os._exit(0)
    os.waitpid(pid, 0)
    return legal_reply(turn, rules)


play("cpuhider", on_turn)
