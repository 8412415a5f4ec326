"""Asks illegally (itself, for a card nobody has) again and again, as fast as it
can, answering every error with another illegal ask (expected: illegal; with
retries the referee gives it the configured number of extra tries first)."""

import sys

from _common import messages, send

rules = {}
seat = 0
last_id = None
for msg in messages():
    kind = msg.get("type")
    if kind == "hello":
        send({"type": "hello", "protocol": 1, "name": "illegal"})
    elif kind == "start":
        rules, seat = msg.get("rules", {}), msg.get("seat", 0)
    elif kind == "turn" or (kind == "error" and msg.get("id") is not None):
        last_id = msg["id"]
        if msg.get("decide", "ask") in ("play", "take") or rules.get("game") == "chickens":
            send({"type": msg.get("decide", "play"), "id": last_id, "card": "no-such-card"})
        else:
            send({"type": "ask", "id": last_id, "target": seat, "card": "ZZ9", "family": "ZZ", "please": True})
    elif kind == "bye":
        sys.exit(0)
