"""Sleeps past the move limit on its first turn, then answers that turn anyway
(expected: timeout, then the late reply is refused as stale)."""

import time

from _common import legal_reply, move_ms, play


def on_turn(turn, rules, n):
    if n == 0:
        time.sleep(move_ms(turn) * 1.5 / 1000)
    return legal_reply(turn, rules)


play("sleepy", on_turn)
