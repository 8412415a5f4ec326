"""Broken: exits when the referee sends an error message."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _raw import serve

serve(on_error=lambda msg: sys.exit(0))
