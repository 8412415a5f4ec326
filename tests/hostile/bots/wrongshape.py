"""Answers with valid JSON of the wrong shape (expected: malformed)."""

from _common import legal_reply, play, send

SHAPES = [
    {"type": "ask", "id": "seventeen", "target": "two"},
    {"type": "dance", "id": 0},
    {"id": 0, "target": 1},
]


def on_turn(turn, rules, n):
    if n == 0:
        send(SHAPES[0])
        return None
    return legal_reply(turn, rules)


play("wrongshape", on_turn)
