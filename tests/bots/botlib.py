"""Shared loop of the purpose-built test bots (standard library only).

A bot plays random legal moves (from the ``options``/``targets`` of each
turn) and misbehaves on its ``BOT_FAULT_AT``-th turn (default 2) through the
``bad`` hook its script passes to :func:`run`. Environment:

* ``BOT_PIDFILE`` - append "pid pgid" at start (for process-leak tests)
* ``BOT_SEED`` - seed of the random choices (default 1)
* ``BOT_FAULT_AT`` - which turn (1-based, counted over the process life) misbehaves
* ``BOT_PROTOCOL`` - protocol version announced in hello (default 1)
* ``BOT_THEN_LEGAL`` - if set, the faulty turn's bad output is followed by the
  legal reply (to test the retry policy)
"""

import json
import os
import random
import sys
from collections.abc import Callable

OUT = sys.stdout.buffer


def write(data: bytes) -> None:
    OUT.write(data)
    OUT.flush()


def legal_reply(msg: dict, rng: random.Random, family_mode: bool) -> dict:
    d = msg["decide"]
    if d == "ask":
        key = "family" if family_mode else "card"
        return {
            "type": "ask",
            "id": msg["id"],
            "target": rng.choice(msg["targets"]),
            key: rng.choice(msg["options"]),
            "please": True,
        }
    return {"type": d, "id": msg["id"], "card": rng.choice(msg["options"])}


def run(
    bad: Callable[[dict, dict], bytes | None] | None = None,
    *,
    hello: dict | None = None,
    think: Callable[[int], None] | None = None,
) -> int:
    """Play until ``bye`` or end of input. ``bad(turn, legal)`` returns the raw
    bytes to write instead of the legal reply on the faulty turn (None: write nothing).
    ``think(n)`` is called before the reply to the n-th turn (1-based), e.g. to sleep."""
    pidfile = os.environ.get("BOT_PIDFILE")
    if pidfile:
        with open(pidfile, "a") as f:
            f.write(f"{os.getpid()} {os.getpgid(0)}\n")
    rng = random.Random(int(os.environ.get("BOT_SEED", "1")))
    fault_at = int(os.environ.get("BOT_FAULT_AT", "2"))
    turns = 0
    family_mode = False
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        t = msg["type"]
        if t == "hello":
            reply = hello or {"type": "hello", "protocol": int(os.environ.get("BOT_PROTOCOL", "1")), "name": "testbot"}
            write(json.dumps(reply).encode() + b"\n")
        elif t == "start":
            family_mode = msg["rules"].get("ask") == "family"
        elif t == "error":
            print("got error:", msg, file=sys.stderr, flush=True)
        elif t == "turn":
            turns += 1
            if think is not None:
                think(turns)
            legal = legal_reply(msg, rng, family_mode)
            if bad is not None and turns == fault_at:
                data = bad(msg, legal)
                if data is not None:
                    write(data)
                if os.environ.get("BOT_THEN_LEGAL"):
                    write(json.dumps(legal).encode() + b"\n")
            else:
                write(json.dumps(legal).encode() + b"\n")
        elif t == "bye":
            break
    return 0
