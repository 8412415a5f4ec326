#!/usr/bin/env python3
"""Answers in time, but says when: on its faulty turn it creates the file BOT_MARK, then
waits BOT_DELAY_MS (default 150) ms and replies legally (a test stalls the referee meanwhile)."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib


def bad(turn, legal):
    open(os.environ["BOT_MARK"], "w").close()
    time.sleep(int(os.environ.get("BOT_DELAY_MS", "150")) / 1000)
    return json.dumps(legal).encode() + b"\n"


sys.exit(botlib.run(bad))
