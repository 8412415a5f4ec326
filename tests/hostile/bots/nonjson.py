"""Prints debug output to stdout instead of stderr (expected: malformed, and the
detail tells the author to use stderr)."""

from _common import legal_reply, play, send_raw


def on_turn(turn, rules, n):
    if n == 0:
        send_raw(b"debug x=3\n")
        return None
    return legal_reply(turn, rules)


play("nonjson", on_turn)
