#!/usr/bin/env python3
"""Timeout, then stale: answers its faulty turn after BOT_LATE_MS (default 600) ms."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib


def bad(turn, legal):
    time.sleep(int(os.environ.get("BOT_LATE_MS", "600")) / 1000)
    return json.dumps(legal).encode() + b"\n"


sys.exit(botlib.run(bad))
