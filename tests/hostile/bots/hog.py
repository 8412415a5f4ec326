"""A CPU hog: before its hello it forks N processes (knob 1, default 24), each
in a session of its own, that spin forever; then it plays legal moves. Without
a CPU weight per bot its spinners outweigh every other bot on the machine 24 to
1 (each is one more runnable process); with one, they share one bot's weight."""

import os

from _common import arg, play

N = int(arg(1, "24"))

for _ in range(N):
    if os.fork() == 0:
        os.setsid()
        x = 0
        while True:
            x += 1

play("hog")
