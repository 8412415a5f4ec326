"""Tries to inject markup into the league's HTML report: its hello carries
HTML in its name and version, it writes HTML to stderr, and its first ask
names a card that is an HTML tag (expected: illegal; the report escapes it)."""

import sys

from _common import legal_reply, play, send

PAYLOAD = "<script>alert('pwned')</script><img src=x onerror=alert(1)>"


def on_turn(turn, rules, n):
    sys.stderr.write(PAYLOAD + "\n")
    sys.stderr.flush()
    if n == 0:
        return {
            "type": "ask",
            "id": turn["id"],
            "target": (turn.get("targets") or [0])[0],
            "card": PAYLOAD,
            "please": True,
        }
    return legal_reply(turn, rules)


sys.stdin.buffer.readline()  # hello
send({"type": "hello", "protocol": 1, "name": PAYLOAD, "version": PAYLOAD})
play("markup", on_turn)
