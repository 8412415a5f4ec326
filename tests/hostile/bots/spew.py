"""On its first turn writes megabytes to stdout without ever writing a newline,
then keeps running (expected: malformed, line too long; the referee's memory
stays bounded)."""

import sys
import time

from _common import arg, play


def on_turn(turn, rules, n):
    chunk = b"x" * 65536
    try:
        for _ in range(int(arg(1, "64"))):  # 4 MiB by default
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
    except BrokenPipeError:
        pass
    time.sleep(3600)


play("spew", on_turn)
