"""Broken: exits in the middle of its first real game (at its 7th turn)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _raw import STATE, serve


def before(turn):
    if STATE["turns"] >= 7:
        print("crash_midgame: giving up now", file=sys.stderr, flush=True)
        sys.exit(3)


serve(before_reply=before)
