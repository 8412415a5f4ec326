"""Broken: speaks protocol version 2 in its hello."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _raw import serve

serve(protocol=2)
