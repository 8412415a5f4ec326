"""Legal, but burns CPU for a fraction of every move's time before answering
(knob 1: the fraction, default 0.5). The load benchmark's bot."""

import time

from _common import arg, legal_reply, move_ms, play

FRACTION = float(arg(1, "0.5"))


def on_turn(turn, rules, n):
    budget = move_ms(turn) * FRACTION / 1000
    start = time.process_time()
    x = 0
    while time.process_time() - start < budget:
        for i in range(2000):
            x += i * i
    return legal_reply(turn, rules)


play("cpuburner", on_turn)
