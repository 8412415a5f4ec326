#!/usr/bin/env python3
"""Legal moves, but it holds every reply while the file named by ``BOT_PAUSE_FILE`` exists
(relative to its working directory): a test pauses a league night with it, looks, and lets it go
on by removing the file."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib

PAUSE = os.environ.get("BOT_PAUSE_FILE", "")


def think(turn: int) -> None:
    while PAUSE and os.path.exists(PAUSE):
        time.sleep(0.02)


sys.exit(botlib.run(think=think, hello={"type": "hello", "protocol": 1, "name": "paused", "version": "1"}))
