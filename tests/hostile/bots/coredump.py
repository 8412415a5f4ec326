"""Dumps core outside its folder (finding 7 of issue 15): raises its core
size limit as far as it can, moves to the folder in knob 1 or COREDUMP_DIR (if it can), and
reports both in its hello ``version`` (JSON); on its first turn it aborts
(SIGABRT: a core dump where the limit allows one). Expected: crash, no core."""

import json
import os
import resource
import sys

from _common import arg, play, send

report = {}
for limit in ((resource.RLIM_INFINITY, resource.RLIM_INFINITY), (64 << 20, 64 << 20)):
    try:
        resource.setrlimit(resource.RLIMIT_CORE, limit)
        break
    except (ValueError, OSError) as exc:
        report["raise"] = str(exc)
soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
report["core_limit"] = [soft, hard]
try:
    os.chdir(os.environ.get("COREDUMP_DIR", arg(1, "/tmp")))
    report["cwd"] = os.getcwd()
except OSError as exc:
    report["cwd"] = exc.strerror


def on_turn(turn, rules, n):
    os.abort()


sys.stdin.buffer.readline()  # hello
send({"type": "hello", "protocol": 1, "name": "coredump", "version": json.dumps(report)})
play("coredump", on_turn)
