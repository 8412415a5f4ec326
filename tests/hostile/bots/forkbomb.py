"""A (capped) fork bomb: before hello it forks sleeping children until fork
fails (or 400 children, a safety cap), and reports how many it got in its
hello's ``version``. Run under ``user`` + ``processes`` limits, the kernel
stops it early. It then plays legally."""

import os
import sys
import time

from _common import play, send

count = 0
error = ""
for _ in range(400):
    try:
        pid = os.fork()
    except OSError as exc:
        error = exc.strerror or str(exc)
        break
    if pid == 0:
        os.closerange(0, 3)
        while True:
            time.sleep(1)
    count += 1

sys.stdin.buffer.readline()  # hello
send({"type": "hello", "protocol": 1, "name": "forkbomb", "version": f"{count} {error}"})
play("forkbomb")
