"""Exits before answering hello (expected: a startup crash)."""

import sys

sys.stdin.buffer.readline()
sys.stderr.write("nohello: goodbye before hello\n")
sys.exit(4)
