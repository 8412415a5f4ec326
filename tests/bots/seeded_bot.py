#!/usr/bin/env python3
"""Instant legal test bot whose play depends on the game only (standard library only).

Like ``instant_bot.py`` (answers every turn at once with a random legal
choice), but the generator is reseeded at every ``start`` from the game id
and the seat, so a game is played the same whatever the process played
before it: the same night gives the same results however its games are
split into units of work and sessions (local runner or cluster).

Environment:
* ``BOT_TAG`` - ignored; lets a test find the bot's processes (also an argument works).
"""

import hashlib
import json
import random
import sys


def main() -> int:
    out = sys.stdout.buffer
    ask_family = False
    rng = random.Random(0)
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
                    "target": rng.choice(msg["targets"]),
                    key: rng.choice(msg["options"]),
                    "please": True,
                }
            else:
                reply = {"type": d, "id": msg["id"], "card": rng.choice(msg["options"])}
            out.write(json.dumps(reply).encode() + b"\n")
            out.flush()
        elif t == "start":
            ask_family = msg["rules"].get("ask") == "family"
            digest = hashlib.sha256(f"{msg['game']}/{msg['seat']}".encode()).digest()
            rng = random.Random(int.from_bytes(digest[:8], "big"))
        elif t == "hello":
            out.write(b'{"type": "hello", "protocol": 1, "name": "seeded", "version": "1"}\n')
            out.flush()
        elif t == "bye":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
