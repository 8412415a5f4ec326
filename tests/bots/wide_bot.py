#!/usr/bin/env python3
"""Legal play, but every reply carries an unknown field ``pad`` of BOT_PAD bytes (default 100000):
one valid JSON line longer than the default --max-line (65536)."""

import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib

PAD = "x" * int(os.environ.get("BOT_PAD", "100000"))
rng = random.Random(1)
family_mode = False
for raw in sys.stdin.buffer:
    msg = json.loads(raw)
    if msg["type"] == "hello":
        botlib.write(b'{"type":"hello","protocol":1,"name":"wide"}\n')
    elif msg["type"] == "start":
        family_mode = msg["rules"].get("ask") == "family"
    elif msg["type"] == "turn":
        botlib.write(json.dumps({**botlib.legal_reply(msg, rng, family_mode), "pad": PAD}).encode() + b"\n")
    elif msg["type"] == "bye":
        break
