#!/usr/bin/env python3
"""Crash: on its faulty turn it starts a child (`sleep 60`, same process group) and exits with status 3."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import botlib


def bad(turn, legal):
    child = subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    pidfile = os.environ.get("BOT_PIDFILE")
    if pidfile:
        with open(pidfile, "a") as f:
            f.write(f"{child.pid} {os.getpgid(0)}\n")
    print("crash_bot: giving up", file=sys.stderr, flush=True)
    os._exit(3)


sys.exit(botlib.run(bad))
