"""Answers its first turn with a line that is not valid UTF-8 (expected: malformed)."""

from _common import legal_reply, play, send_raw


def on_turn(turn, rules, n):
    if n == 0:
        send_raw(b'{"type":"ask","id":%d,"card":"\xff\xfe\xc3\x28"}\n' % turn["id"])
        return None
    return legal_reply(turn, rules)


play("badutf8", on_turn)
