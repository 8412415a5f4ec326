"""Leaves a daemon behind (finding 6 of issue 15, and check-bot): a classic
double fork - the grandchild starts its own session, ignores every catchable
signal and sleeps forever. Knob 1: "build" (run as a build command:
daemonize, then exit 0), "start" (as a bot: daemonize before hello, then
play legally and exit on bye) or "bye" (as a bot: daemonize when it reads
bye, then exit)."""

import os
import signal
import sys
import time

from _common import arg, play


def daemonize() -> None:
    if os.fork() != 0:
        os.wait()
        return
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGPIPE, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    while True:
        time.sleep(1)


when = arg(1, "start")
if when == "build":
    daemonize()
    print("built (and a daemon started)")
    sys.exit(0)
if when == "start":
    daemonize()
play("daemonizer", on_bye=daemonize if when == "bye" else None)
