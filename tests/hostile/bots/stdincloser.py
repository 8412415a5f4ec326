"""Answers hello, then closes its stdin and keeps running without a word
(expected: crash - the referee's next write to it fails - and it is killed)."""

import os
import signal
import sys
import time

from _common import send

sys.stdin.buffer.readline()  # hello
send({"type": "hello", "protocol": 1, "name": "stdincloser"})
os.close(0)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    time.sleep(1)
