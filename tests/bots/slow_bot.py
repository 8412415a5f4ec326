#!/usr/bin/env python3
"""Slow thinker, legal moves. Think times per turn:

* ``BOT_DELAYS_MS="90,350"`` - 90 ms before its 1st reply, 350 ms before its
  2nd, then every reply at once (a schedule);
* otherwise ``BOT_DELAY_MS`` (default 150) before each of its first
  ``BOT_SLOW_TURNS`` (default 2) replies, then at once."""
import json, os, random, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib


def delays() -> list:
    schedule = os.environ.get("BOT_DELAYS_MS")
    if schedule:
        return [int(x) / 1000 for x in schedule.split(",") if x.strip()]
    return [int(os.environ.get("BOT_DELAY_MS", "150")) / 1000] * int(os.environ.get("BOT_SLOW_TURNS", "2"))


def main() -> int:
    rng = random.Random(int(os.environ.get("BOT_SEED", "1")))
    waits = delays()
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
            if turns < len(waits):
                time.sleep(waits[turns])
            turns += 1
            botlib.write(json.dumps(botlib.legal_reply(msg, rng, family_mode)).encode() + b"\n")
        elif t == "bye":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
