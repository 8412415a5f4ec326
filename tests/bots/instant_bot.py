#!/usr/bin/env python3
"""Instant legal test bot (standard library only).

Answers every turn at once with a random legal choice the turn offers
(ask games: one of ``targets`` and one of ``options``, politely; chickens: one
of ``options``), from ``random.Random(BOT_SEED)`` (default 1), so that games
end (always-the-first-choice bots can ask each other in circles forever).
Plays many games per process.

Environment:
* ``BOT_PIDFILE`` - append "pid pgid" to this file at start (leak tests).
* ``BOT_NAME`` - the name sent in hello.
"""

import json
import os
import random
import sys


def main() -> int:
    pidfile = os.environ.get("BOT_PIDFILE")
    if pidfile:
        with open(pidfile, "a") as f:
            f.write(f"{os.getpid()} {os.getpgid(0)}\n")
    out = sys.stdout.buffer
    ask_family = False
    rng = random.Random(int(os.environ.get("BOT_SEED", "1")))
    choice = rng.choice
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        t = msg["type"]
        if t == "turn":
            d = msg["decide"]
            if d == "ask":
                key = "family" if ask_family else "card"
                reply = {
                    "type": "ask",
                    "id": msg["id"],
                    "target": choice(msg["targets"]),
                    key: choice(msg["options"]),
                    "please": True,
                }
            else:
                reply = {"type": d, "id": msg["id"], "card": choice(msg["options"])}
            out.write(json.dumps(reply).encode() + b"\n")
            out.flush()
        elif t == "start":
            ask_family = msg["rules"].get("ask") == "family"
        elif t == "hello":
            out.write(
                json.dumps(
                    {"type": "hello", "protocol": 1, "name": os.environ.get("BOT_NAME", "instant"), "version": "1"}
                ).encode()
                + b"\n"
            )
            out.flush()
        elif t == "bye":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
