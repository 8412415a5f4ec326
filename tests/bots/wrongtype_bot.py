#!/usr/bin/env python3
"""Illegal: a reply of the wrong type for the decision (a `take` to an `ask`, a `play` to a `take`...)."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib


def bad(turn, legal):
    other = {"ask": "take", "play": "take", "take": "play"}[turn["decide"]]
    return json.dumps({"type": other, "id": turn["id"], "card": (turn.get("options") or ["x"])[0]}).encode() + b"\n"


sys.exit(botlib.run(bad))
