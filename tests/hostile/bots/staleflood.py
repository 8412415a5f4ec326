"""Misses its first turn's limit, then floods: writes its late reply and then
``ARG`` (default 100,000) more copies of it, megabytes of stale lines
(expected: timeout, stale; the game's log stays small: the stale lines over
the per-seat cap are counted, not logged)."""

import json
import sys
import time

from _common import arg, legal_reply, play


def on_turn(turn, rules, n):
    if n:
        return legal_reply(turn, rules)
    time.sleep(turn["clock"]["move_ms"] / 1000 * 1.5)
    line = json.dumps(legal_reply(turn, rules), separators=(",", ":")).encode() + b"\n"
    out = sys.stdout.buffer
    try:
        for _ in range(int(arg(1, "100000")) // 100):
            out.write(line * 100)
        out.flush()
    except BrokenPipeError:
        pass
    return None


play("staleflood", on_turn)
