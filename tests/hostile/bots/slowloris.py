"""Answers its first turn one byte at a time, 20 ms apart, so the line is
complete only well after the move limit (expected: timeout; a partial line
never stretches the deadline)."""

import json
import time

from _common import legal_reply, play, send_raw


def on_turn(turn, rules, n):
    if n == 0:
        for byte in json.dumps(legal_reply(turn, rules)).encode() + b"\n":
            send_raw(bytes([byte]))
            time.sleep(0.02)
        return None
    return legal_reply(turn, rules)


play("slowloris", on_turn)
