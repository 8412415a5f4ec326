"""Tries to spy on the referee and on the other bots through /proc: lists the
processes it can see, reads other processes' environments and command lines,
and tries to read another bot's memory (where a bot keeps its private hand).
Reports what it found in its hello's ``version`` (JSON), then plays legally.
(Under bubblewrap it is PID 2: PID 1 is bwrap's own init, a part of its sandbox
that runs with its environment; that one is not counted.)"""

import json
import os
import sys

from _common import play, send

found = {"visible": 0, "environ": 0, "cmdline_other_bots": 0, "mem_bytes": 0}
me = os.getpid()


def sandbox_init(name: str) -> bool:
    try:
        with open(f"/proc/{name}/cmdline", "rb") as f:
            return me == 2 and name == "1" and os.path.basename(f.read().split(b"\0")[0]) == b"bwrap"
    except OSError:
        return False


for name in os.listdir("/proc"):
    if not name.isdigit() or int(name) == me or sandbox_init(name):
        continue
    found["visible"] += 1
    try:
        with open(f"/proc/{name}/cmdline", "rb") as f:
            cmd = f.read()
    except OSError:
        continue
    if b"legal.py" in cmd:
        found["cmdline_other_bots"] += 1
        try:
            with open(f"/proc/{name}/maps") as f:
                heap = next((line for line in f if "[heap]" in line), None)
            if heap:
                start, end = (int(x, 16) for x in heap.split()[0].split("-"))
                with open(f"/proc/{name}/mem", "rb") as f:
                    f.seek(start)
                    found["mem_bytes"] += len(f.read(min(4096, end - start)))
        except (OSError, ValueError):
            pass
    try:
        with open(f"/proc/{name}/environ", "rb") as f:
            if f.read():
                found["environ"] += 1
    except OSError:
        pass

sys.stdin.buffer.readline()  # hello
send({"type": "hello", "protocol": 1, "name": "spy", "version": json.dumps(found)})
play("spy")
