"""Before answering hello, forks two children that ignore every catchable
signal and live forever (one leaves the process group with setsid), then plays
legally but ignores `bye`, stdin EOF and SIGTERM. Only the sandbox's PID
namespace and watcher can clean this up, also when the referee is SIGKILLed."""

import os
import signal
import time

from _common import play

IGNORED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGPIPE, signal.SIGQUIT)


def stay() -> None:
    for sig in IGNORED:
        signal.signal(sig, signal.SIG_IGN)
    while True:
        time.sleep(1)


for new_session in (False, True):
    if os.fork() == 0:
        if new_session:
            os.setsid()
        os.closerange(0, 3)
        stay()

play("lingerer", on_bye=stay)
stay()
