#!/usr/bin/env python3
"""Plays legally with a think-time schedule: BOT_DELAYS_MS="90,350" sleeps
90 ms before its 1st reply, 350 ms before its 2nd, then answers at once."""
import json, os, random, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib


def main() -> int:
    rng = random.Random(int(os.environ.get("BOT_SEED", "1")))
    delays = [int(x) / 1000 for x in os.environ.get("BOT_DELAYS_MS", "").split(",") if x.strip()]
    turns = 0
    family_mode = False
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        t = msg["type"]
        if t == "hello":
            botlib.write(b'{"type":"hello","protocol":1,"name":"schedule"}\n')
        elif t == "start":
            family_mode = msg["rules"].get("ask") == "family"
        elif t == "turn":
            if turns < len(delays):
                time.sleep(delays[turns])
            turns += 1
            botlib.write(json.dumps(botlib.legal_reply(msg, rng, family_mode)).encode() + b"\n")
        elif t == "bye":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
