"""Plays legally, but ignores `bye`, stdin EOF and SIGTERM (expected: no fault in
the game; killed after the grace time when the session closes)."""

import signal
import time

from _common import play


def stay() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    while True:
        time.sleep(1)


play("byeignorer", on_bye=stay)
stay()  # stdin EOF without bye: stay anyway
