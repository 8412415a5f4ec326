"""On its first turn allocates memory without bound (expected: the address-space
limit stops it, it dies: crash; the referee is unaffected)."""

import os

from _common import play


def on_turn(turn, rules, n):
    hoard = []
    try:
        while True:
            hoard.append(bytearray(16 << 20))  # touched pages: really uses memory
    except MemoryError:
        os._exit(137)


play("memhog", on_turn)
