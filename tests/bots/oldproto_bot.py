#!/usr/bin/env python3
"""Refused: announces protocol 2 in hello."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib

sys.exit(botlib.run(hello={"type": "hello", "protocol": 2, "name": "future"}))
