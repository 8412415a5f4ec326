"""Answers its first turn with one giant (2 MiB) but well-formed JSON line
(expected: malformed, line too long)."""

import json

from _common import legal_reply, play, send_raw


def on_turn(turn, rules, n):
    reply = legal_reply(turn, rules)
    if n == 0:
        reply["padding"] = "y" * (2 << 20)
        send_raw(json.dumps(reply).encode() + b"\n")
        return None
    return reply


play("giantline", on_turn)
