"""Broken: prints debug output to stdout before each reply."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _raw import serve

serve(before_reply=lambda turn: print(f"thinking about turn {turn['id']}", flush=True))
