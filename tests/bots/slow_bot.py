#!/usr/bin/env python3
"""Slow start: answers its first BOT_SLOW_TURNS (default 2) turns legally after
BOT_DELAY_MS (default 150) ms each, then every turn at once."""
import json, os, random, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib


def main() -> int:
    rng = random.Random(int(os.environ.get("BOT_SEED", "1")))
    delay = int(os.environ.get("BOT_DELAY_MS", "150")) / 1000
    slow = int(os.environ.get("BOT_SLOW_TURNS", "2"))
    turns = 0
    family_mode = False
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        t = msg["type"]
        if t == "hello":
            botlib.write(b'{"type":"hello","protocol":1,"name":"slow"}\n')
        elif t == "start":
            family_mode = msg["rules"].get("ask") == "family"
        elif t == "turn":
            turns += 1
            if turns <= slow:
                time.sleep(delay)
            botlib.write(json.dumps(botlib.legal_reply(msg, rng, family_mode)).encode() + b"\n")
        elif t == "bye":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
