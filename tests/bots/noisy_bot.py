#!/usr/bin/env python3
"""Legal play, but floods stderr with BOT_NOISE_BYTES (default 8 MiB) at start: the referee must not block."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib

line = b"noise " * 1000 + b"\n"
for _ in range(int(os.environ.get("BOT_NOISE_BYTES", str(8 << 20))) // len(line)):
    sys.stderr.buffer.write(line)
sys.stderr.buffer.write(b"noisy_bot: done\n")
sys.stderr.flush()
sys.exit(botlib.run())
