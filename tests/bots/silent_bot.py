#!/usr/bin/env python3
"""Timeout: never answers its faulty turn (keeps reading its input)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib

sys.exit(botlib.run(lambda turn, legal: None))
