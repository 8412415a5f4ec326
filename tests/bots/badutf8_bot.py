#!/usr/bin/env python3
"""Malformed: a reply with invalid UTF-8 inside a JSON string."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib

sys.exit(botlib.run(lambda turn, legal: b'{"type":"ask","id":%d,"target":0,"card":"\xff\xfe"}\n' % turn["id"]))
