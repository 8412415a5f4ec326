#!/usr/bin/env python3
"""Malformed: JSON of the wrong shape (`target` is a string)."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib


def bad(turn, legal):
    if "target" in legal:
        legal["target"] = "seat two"
    else:
        legal["card"] = 7
    return json.dumps(legal).encode() + b"\n"


sys.exit(botlib.run(bad))
