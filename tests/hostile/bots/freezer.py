"""Freezes its watcher (finding 1 of issue 15): before hello it starts two
children that ignore every catchable signal and live forever - one leaves
the process group with setsid(), one with setpgid() - then sends SIGSTOP to
its own process group. Where the sandbox's watcher shares that group, the
watcher is frozen (and can no longer kill the bot when the referee dies); the
setsid child wakes the bot up again (SIGCONT), and the bot plays on, slowly
(a second per turn), so that its game lasts. Its hello ``version`` says what
it did."""

import os
import signal
import time

from _common import legal_reply, play

IGNORED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGPIPE, signal.SIGQUIT)


def stay(wake: int | None = None) -> None:
    for sig in IGNORED:
        signal.signal(sig, signal.SIG_IGN)
    os.closerange(0, 3)
    if wake is not None:  # again and again: the SIGSTOP may come late on a loaded machine
        for _ in range(20):
            time.sleep(0.3)
            try:
                os.kill(wake, signal.SIGCONT)
            except OSError:
                pass
    while True:
        time.sleep(1)


me = os.getpid()
ready_r, ready_w = os.pipe()  # each child says when it has left the group (else, on a
if os.fork() == 0:  # loaded machine, the SIGSTOP below could freeze it too)
    os.setsid()
    os.write(ready_w, b"s")
    stay(wake=me)
if os.fork() == 0:
    os.setpgid(0, 0)
    os.write(ready_w, b"p")
    stay()
got = b""
while len(got) < 2:
    got += os.read(ready_r, 2 - len(got))
os.kill(0, signal.SIGSTOP)  # its process group (and whatever else is in it)


def on_turn(turn, rules, n):
    time.sleep(1)
    return legal_reply(turn, rules)


play("freezer", on_turn, on_bye=stay)
stay()
