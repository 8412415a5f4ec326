"""Answers its first turn with another turn's id (expected: stale)."""

from _common import legal_reply, play


def on_turn(turn, rules, n):
    reply = legal_reply(turn, rules)
    if n == 0:
        reply["id"] = turn["id"] + 1000
    return reply


play("staleid", on_turn)
