#!/usr/bin/env python3
"""Malformed: prints debug text to stdout on its faulty turn."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib

sys.exit(botlib.run(lambda turn, legal: b"debug x=3\n"))
