#!/usr/bin/env python3
"""Stale: answers with another turn's id (the previous one)."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib


def bad(turn, legal):
    legal["id"] = turn["id"] - 1
    return json.dumps(legal).encode() + b"\n"


sys.exit(botlib.run(bad))
