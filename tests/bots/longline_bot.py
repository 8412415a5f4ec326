#!/usr/bin/env python3
"""Malformed: writes BOT_LONG_BYTES (default 4 MiB) without a newline, then a newline."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib


def bad(turn, legal):
    size = int(os.environ.get("BOT_LONG_BYTES", str(4 << 20)))
    chunk = b"x" * 65536
    try:
        for _ in range(size // len(chunk)):
            botlib.OUT.write(chunk)
        botlib.OUT.write(b"\n")
        botlib.OUT.flush()
    except BrokenPipeError:
        os._exit(0)
    return None


sys.exit(botlib.run(bad))
