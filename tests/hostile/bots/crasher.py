"""Plays a few legal moves, then dies mid-game with status 3 (expected: crash)."""

import os

from _common import arg, legal_reply, play


def on_turn(turn, rules, n):
    if n >= int(arg(1, "2")):
        os._exit(3)
    return legal_reply(turn, rules)


play("crasher", on_turn)
