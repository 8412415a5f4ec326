"""Broken: ignores bye (it only stops at end of input)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _raw import serve

serve(exit_on_bye=False)
