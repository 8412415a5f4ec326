"""Forks children that keep running (one stays in the bot's process group, one
starts its own session to escape it; the first keeps the bot's pipes open),
then the bot dies mid-game (expected: crash; no process of the bot survives)."""

import os
import signal
import time

from _common import legal_reply, play


def linger(new_session: bool) -> None:
    if os.fork() == 0:
        if new_session:
            os.setsid()
            os.closerange(0, 3)
        # the child that stays in the group keeps the bot's pipes open: the
        # referee cannot rely on end-of-file to see that the bot died
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_IGN)
        while True:
            time.sleep(1)


def on_turn(turn, rules, n):
    if n == 1:
        linger(False)
        linger(True)
        os._exit(5)
    return legal_reply(turn, rules)


play("forker", on_turn)
