#!/usr/bin/env python3
"""Illegal: asks itself (ask games) or plays a card it does not have (chickens)."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib

SEAT = [0]


def bad(turn, legal):
    if "target" in legal:
        legal["target"] = SEAT[0]
    else:
        legal["card"] = "joker"
    return json.dumps(legal).encode() + b"\n"


_orig = botlib.json.loads


def _loads(raw):  # remember our seat from `start`
    msg = _orig(raw)
    if msg.get("type") == "start":
        SEAT[0] = msg["seat"]
    return msg


botlib.json.loads = _loads
sys.exit(botlib.run(bad))
