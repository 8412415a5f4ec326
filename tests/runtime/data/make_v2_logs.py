"""Write version-2 game logs with the referee at main b50ad56 (fixtures for replay of old logs):
``python tests/runtime/data/make_v2_logs.py OUT_DIR`` in a checkout of that commit, then
``tar czf v2-logs.tar.gz *.jsonl`` in OUT_DIR."""

import os
import sys
from pathlib import Path

import trio

sys.path.insert(0, os.getcwd())
from referee.rules import get_variant
from referee.rules.match import MatchFormat
from referee.runtime import ClockSpec, FaultPolicy, GameSpec, play_game, start_bots
from referee.runtime.replay import replay
from tests.runtime.helpers import bot

OUT = Path(sys.argv[1])


async def game(name, specs, variant, *, seed=1, clock=None, policy=None, match=None, kill=()):
    clock = clock or ClockSpec(move_ms=400)
    spec = GameSpec(
        name, get_variant(variant), len(specs), seed=seed, clock=clock, policy=policy or FaultPolicy(), match=match
    )
    async with trio.open_nursery() as n:
        ss = await start_bots(specs, clock, n)
        for i in kill:
            await ss[i].kill()
        try:
            res = await play_game(spec, ss, OUT)
        finally:
            for s in ss:
                await s.close()
    r = replay(res.log_path)
    print(name, r.ok, r.mismatches, sorted({f["fault"] for f in r.faults}))


async def main():
    def inst(n, s="1", **e):
        return bot(n, "instant_bot.py", BOT_SEED=s, **e)

    # ask: retries (illegal then legal, nonjson), long line, crash, timeout + stale, stale id, bad utf-8
    await game(
        "v2-kwartet",
        [
            bot("ill", "illegal_bot.py", BOT_THEN_LEGAL="1"),
            bot("long", "longline_bot.py"),
            bot("late", "late_bot.py", BOT_LATE_MS="550"),
            bot("crash", "crash_bot.py", BOT_FAULT_AT="3"),
        ],
        "kwartet",
        policy=FaultPolicy(retries=1),
    )
    await game(
        "v2-ask-more",
        [
            bot("nj", "nonjson_bot.py"),
            bot("sid", "staleid_bot.py", BOT_FAULT_AT="3"),
            bot("utf", "badutf8_bot.py", BOT_FAULT_AT="4"),
            bot("wt", "wrongtype_bot.py", BOT_FAULT_AT="2"),
        ],
        "kwartet",
        seed=5,
        policy=FaultPolicy(retries=1),
    )
    # bank + dead at start
    await game(
        "v2-dead-bank",
        [inst("a"), bot("dead", "instant_bot.py"), inst("b", "2")],
        "kwartet",
        seed=3,
        clock=ClockSpec(move_ms=300, bank_ms=2000),
        kill=(1,),
    )
    # chickens: simultaneous plays with refused replies, retries, a timeout with stale line, a long line
    await game(
        "v2-chickens",
        [
            bot("ill", "illegal_bot.py", BOT_FAULT_AT="2"),
            bot("nj", "nonjson_bot.py", BOT_FAULT_AT="2"),
            bot("late", "late_bot.py", BOT_FAULT_AT="2", BOT_LATE_MS="500"),
            bot("long", "longline_bot.py", BOT_FAULT_AT="3"),
            inst("i"),
        ],
        "chickens",
        seed=2,
        policy=FaultPolicy(retries=2),
    )
    # a match (race), cpu clock, a crash and an illegal
    await game(
        "v2-match",
        [inst("a"), bot("ill", "illegal_bot.py", BOT_FAULT_AT="9"), inst("c", "3")],
        "kwartet",
        seed=4,
        clock=ClockSpec(move_ms=400, mode="cpu"),
        match=MatchFormat(kind="fixed", hands=3),
    )
    await game(
        "v2-chickens-match",
        [inst("a"), inst("b", "2"), bot("crash", "crash_bot.py", BOT_FAULT_AT="5")],
        "chickens",
        seed=6,
        match=MatchFormat(kind="fixed", hands=2),
    )


trio.run(main)
