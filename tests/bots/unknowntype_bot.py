#!/usr/bin/env python3
"""Malformed: a message of an unknown type ("pass")."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib

sys.exit(botlib.run(lambda turn, legal: json.dumps({"type": "pass", "id": turn["id"]}).encode() + b"\n"))
