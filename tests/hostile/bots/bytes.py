"""Answers hello, then on its first turn writes the bytes of the file named by
knob 1 (hex-decoded), then exits (the fuzzer's bot)."""

import sys
from pathlib import Path

from _common import arg, play, send_raw


def on_turn(turn, rules, n):
    send_raw(bytes.fromhex(Path(arg(1, "/dev/null")).read_text()))
    sys.exit(0)


play("bytes", on_turn)
