"""Plays legally but floods stderr (megabytes per turn) (expected: no fault, the
game finishes, the stderr copy in the log stays bounded)."""

import sys

from _common import arg, legal_reply, play

LINE = b"stderr flood " + b"z" * 1000 + b"\n"


def on_turn(turn, rules, n):
    for _ in range(int(arg(1, "1000"))):  # ~1 MB per turn
        sys.stderr.buffer.write(LINE)
    sys.stderr.buffer.flush()
    return legal_reply(turn, rules)


play("stderrflood", on_turn)
