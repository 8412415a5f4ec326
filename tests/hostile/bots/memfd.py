"""Dodges the memory limit (finding 5 of issue 15): fills memfds (knob 1:
how many, default 8; knob 2: MiB each, default 64) - pages of anonymous
files count against no address space - before answering hello; its hello
``version`` says how much it holds. Then plays legally, holding them."""

import os
import sys

from _common import arg, play, send

count, mib = int(arg(1, "8")), int(arg(2, "64"))
held = []
chunk = b"\xa5" * (1 << 20)
try:
    for i in range(count):
        fd = os.memfd_create(f"hoard{i}")
        for _ in range(mib):
            os.write(fd, chunk)
        held.append(fd)
    status = f"held {count * mib} MiB"
except OSError as exc:
    status = f"stopped after {len(held)} memfds: {exc.strerror}"

sys.stdin.buffer.readline()  # hello
send({"type": "hello", "protocol": 1, "name": "memfd", "version": status})
play("memfd")
