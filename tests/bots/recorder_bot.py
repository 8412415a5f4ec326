#!/usr/bin/env python3
"""Legal random play; appends every line the referee sends it, as received, to the file
BOT_RECORD (one JSON object per line; each process first writes {"process": PID})."""

import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib

record = open(os.environ["BOT_RECORD"], "ab", buffering=0)
record.write(json.dumps({"process": os.getpid()}).encode() + b"\n")
rng = random.Random(os.getpid())
family_mode = False
for raw in sys.stdin.buffer:
    record.write(raw if raw.endswith(b"\n") else raw + b"\n")
    msg = json.loads(raw)
    t = msg["type"]
    if t == "hello":
        botlib.write(b'{"type":"hello","protocol":1,"name":"recorder"}\n')
    elif t == "start":
        family_mode = msg["rules"].get("ask") == "family"
    elif t == "turn":
        botlib.write(json.dumps(botlib.legal_reply(msg, rng, family_mode)).encode() + b"\n")
    elif t == "bye":
        break
