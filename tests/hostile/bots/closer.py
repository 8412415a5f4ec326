"""Closes its stdout on its first turn but keeps running and ignores stdin EOF
and SIGTERM (expected: crash; the referee must kill it)."""

import os
import signal
import time

from _common import play


def on_turn(turn, rules, n):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.close(1)
    while True:
        time.sleep(1)


play("closer", on_turn)
