"""Tries to kill the referee and everything else it can signal. Only inside
its own PID namespace (it is PID 1 there, or 2 under bwrap's init) does it try the dangerous ones -
kill(-1) and killing every process whose command line mentions "referee" by
the pid /proc shows - so a broken sandbox can never make this bot harm the
machine. Then it plays until its first turn, where it signals its own
process group (expected: crash; the referee and the other seats are fine)."""

import os
import signal

from _common import play

report = []
if os.getpid() <= 2:
    try:
        os.kill(-1, signal.SIGKILL)  # every process it can see: only its namespace
        report.append("kill(-1) sent")
    except OSError as exc:
        report.append(f"kill(-1): {exc.strerror}")

    def host_ppid(pid: str) -> str:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        return data[data.rfind(b")") + 2 :].split()[1].decode()

    # with the host's /proc, /proc/self is its host pid; its parent is the watcher, whose
    # parent is the referee: the pid is right - but in the wrong namespace for kill()
    try:
        referee = host_ppid(host_ppid("self"))
    except (OSError, IndexError):
        referee = "0"
    if referee in ("0", "1"):
        report.append("referee pid invisible")  # the sandbox gave it a private /proc
    else:
        try:
            os.kill(int(referee), signal.SIGKILL)
            report.append(f"referee {referee} killed?!")
        except OSError as exc:
            report.append(f"referee {referee}: {exc.strerror}")
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (1, os.getpid()):
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if b"referee" not in f.read():
                    continue
            os.kill(int(name), signal.SIGKILL)  # ...but pids name processes of its own namespace
            report.append(f"killed {name}?")
        except OSError:
            pass


def on_turn(turn, rules, n):
    os.kill(0, signal.SIGKILL)  # its own process group: the watcher and itself


import sys

from _common import send

sys.stdin.buffer.readline()  # hello
send({"type": "hello", "protocol": 1, "name": "assassin", "version": "; ".join(report)})
play("assassin", on_turn)
