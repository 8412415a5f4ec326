"""Reports the scheduling policy it runs under, and a child's (the policy is
inherited), as JSON in its hello's version; sets the policy it has again, as
mono does for every thread (sched_setscheduler to SCHED_BATCH); then tries to
switch itself back to the ordinary policy, SCHED_OTHER, with sched_setscheduler
(also with SCHED_RESET_ON_FORK) and with sched_setattr (each "ok" or the error
name). An unprivileged process may do all of it without the seccomp filter:
switched back, a bot takes the core from the referee every time a line wakes
it. Then plays legal moves."""

import ctypes
import errno
import json
import os
import subprocess
import sys

from _common import messages, play, send

NAMES = {os.SCHED_OTHER: "other", os.SCHED_BATCH: "batch", os.SCHED_IDLE: "idle"}
SYS_SCHED_SETATTR = 314  # x86_64


def policy(pid: int = 0) -> str:
    return NAMES.get(os.sched_getscheduler(pid), str(os.sched_getscheduler(pid)))


child = subprocess.run(
    [sys.executable, "-c", "import os; print(os.sched_getscheduler(0))"], capture_output=True, text=True
).stdout.strip()
report = {"policy": policy(), "child": NAMES.get(int(child), child) if child.lstrip("-").isdigit() else child}


def setscheduler(policy: int) -> str:
    try:
        os.sched_setscheduler(0, policy, os.sched_param(0))
        return "ok"
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, "?")


report["same"] = setscheduler(os.sched_getscheduler(0))
report["sched_setscheduler"] = setscheduler(os.SCHED_OTHER)
report["reset_on_fork"] = setscheduler(os.SCHED_OTHER | os.SCHED_RESET_ON_FORK)
if os.uname().machine == "x86_64":
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    attr = (ctypes.c_uint32 * 12)()  # struct sched_attr (48 bytes): size, then policy 0 (SCHED_OTHER)
    attr[0] = 48
    r = libc.syscall(SYS_SCHED_SETATTR, 0, attr, 0)
    report["sched_setattr"] = "ok" if r == 0 else errno.errorcode.get(ctypes.get_errno(), "?")
report["after"] = policy()
for msg in messages():
    if msg.get("type") == "hello":
        send({"type": "hello", "protocol": 1, "name": "scheduler", "version": json.dumps(report)})
        break
play("scheduler")
