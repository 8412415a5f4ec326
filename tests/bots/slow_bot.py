#!/usr/bin/env python3
"""Slow thinker, legal moves. Think times per turn:

* ``BOT_DELAYS_MS="90,350"`` - 90 ms before its 1st reply, 350 ms before its
  2nd, then every reply at once (a schedule);
* otherwise ``BOT_DELAY_MS`` (default 150) before each of its first
  ``BOT_SLOW_TURNS`` (default 2) replies, then at once."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib


def delays() -> list:
    schedule = os.environ.get("BOT_DELAYS_MS")
    if schedule:
        return [int(x) / 1000 for x in schedule.split(",") if x.strip()]
    return [int(os.environ.get("BOT_DELAY_MS", "150")) / 1000] * int(os.environ.get("BOT_SLOW_TURNS", "2"))


WAITS = delays()


def think(turn: int) -> None:
    if turn <= len(WAITS):
        time.sleep(WAITS[turn - 1])


sys.exit(botlib.run(think=think, hello={"type": "hello", "protocol": 1, "name": "slow"}))
