"""Experiment (docs/PERFORMANCE.md, Transport, second pass): run with
``python docs/experiments/blocking_io_referee.py`` from the repository.

The referee's play_game with blocking pipe I/O (no trio waits).
The sessions are real sandboxed instant bots; their reader does a blocking
poll+read inside the coroutine, so the trio scheduler is never entered per
decision: this is what a synchronous decision loop would cost."""
import os, select, sys, time, tempfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import trio
from referee.bench import transport as T
from referee.rules import get_variant
from referee.runtime import ClockSpec, GameSpec, play_game, start_bots
import argparse

class BlockingReader:
    def __init__(self, fd):
        self.fd = fd; self.buf = b""; self.lineno = 0
        self.p = select.poll(); self.p.register(fd, select.POLLIN)
    async def read_line(self, fresh=False):
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i+1:]
                self.lineno += 1
                return line
            self.p.poll(5000)
            self.buf += os.read(self.fd, 65536)

class Sess:
    def __init__(self, real):
        self.real = real
        for k in ("name", "spec", "pid", "hello"):
            setattr(self, k, getattr(real, k))
        self.pipe_open = True; self._closed = False; self.closed = False; self.alive = True
        self.next_id = real.next_id; self.death = None
        self.w = real.process.stdin.fileno()
        self.reader = BlockingReader(real.process.stdout.fileno())
    def try_send(self, data): return os.write(self.w, data)
    def stderr_tail(self): return ""
    async def kill(self): pass

async def main(log):
    p = argparse.ArgumentParser(); T.add_arguments(p); args = p.parse_args([])
    rules = get_variant("happy-families"); clock = ClockSpec(move_ms=5000)
    async with trio.open_nursery() as nursery:
        bots = await start_bots(T._bot_specs(args), clock, nursery)
        sess = [Sess(b) for b in bots]
        tmp = Path(tempfile.mkdtemp()) if log else None
        for rnd in range(4):
            dec = 0; g = 0
            c0, t0 = time.process_time(), time.perf_counter()
            while dec < 20000:
                g += 1
                r = await play_game(GameSpec(f"s{rnd}-{g}", rules, 2, seed=g, clock=clock), sess, tmp)
                assert not r.faults, r.faults
                dec += sum(t.count for t in r.think_ms)
            c1, t1 = time.process_time(), time.perf_counter()
            print(f"log={log} blocking-I/O referee: rt {(t1-t0)/dec*1e6:.1f} us, cpu {(c1-c0)/dec*1e6:.1f} us")
        for b in bots:
            await b.close()
        nursery.cancel_scope.cancel()

trio.run(main, True); trio.run(main, False)
