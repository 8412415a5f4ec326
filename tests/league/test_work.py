"""The unit of work and the executor interface, with real bot subprocesses.

A unit is a plain description that pickles; the local executor plays it and
delivers every game in order; the coordinator (run_league) commits what any
executor delivers, including a log that comes back as bytes (as a remote
worker's would)."""

from __future__ import annotations

import json
import pickle
import uuid
from pathlib import Path

import trio

from referee.league import schedule as sched
from referee.league.config import load_config
from referee.league.ledger import Ledger
from referee.league.local import LocalExecutor
from referee.league.outdir import open_ledger
from referee.league.runner import run_league
from referee.league.work import Deliver, GameDone, Unit, UnitMaker
from referee.runtime.gamelog import read_log_bytes

from .conftest import bot_processes, bots_toml, processes_with

CONFIG = (
    'seed = 7\nout = "out"\nconcurrency = 2\n[faults]\nretries = 1\n'
    + bots_toml(["a", "b", "c"]).replace('name = "c"', 'name = "c"\nclock = { move_ms = 3000 }')
    + '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 2\n'
)


def _first_table_unit(cfg: Path) -> Unit:
    league = load_config(cfg)
    table = next(sched.tables(league))
    return UnitMaker(league).unit(table, list(sched.table_games(league, table)))


def test_a_unit_is_a_plain_description_that_pickles(make_config) -> None:
    unit = _first_table_unit(make_config(CONFIG))
    back = pickle.loads(pickle.dumps(unit))
    assert [g.game_id for g in back.games] == [g.game_id for g in unit.games] and back.table == unit.table
    assert [e.index for e in back.lineup] == [0, 1, 2] and back.reuse == "session" and back.max_line == 65536
    assert len(back.games) == 2 * 3 and back.policy.retries == 1 and back.players == 3 and back.match is None
    # the bot with its own clock is timed by it in every game, in whichever seat it sits
    for game in back.games:
        spec = back.spec(game)
        assert (spec.game_id, spec.seed) == (game.game_id, game.seed) and spec.rules.name == "kwartet"
        c_seat = game.positions.index(2)
        assert spec.seat_clocks is not None and spec.clock_for(c_seat).move_ms == 3000
        assert all(spec.clock_for(s).move_ms == 1000 for s in range(3) if s != c_seat)


async def test_the_local_executor_delivers_every_game_in_order(make_config, tmp_path: Path) -> None:
    unit = _first_table_unit(make_config(CONFIG))
    delivered: list[GameDone] = []
    await LocalExecutor(tmp_path).play(unit, delivered.append)
    assert [d.game_id for d in delivered] == [g.game_id for g in unit.games]
    for d in delivered:
        assert d.log is None and d.wall_ms > 0 and d.result.reason == "complete"
        assert Path(d.result.log_path or "") == tmp_path / f"{d.game_id}.jsonl.zst"  # unit.compress


class _RemoteLike:
    """An executor that plays a copy of the unit elsewhere (a scratch folder) and
    hands each log back as bytes, as a worker on another machine would."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.units = 0

    async def play(self, unit: Unit, deliver: Deliver) -> None:
        self.units += 1
        copy = pickle.loads(pickle.dumps(unit))

        def back(done: GameDone) -> None:
            path = Path(done.result.log_path or "")
            deliver(GameDone(done.game_id, done.result, done.wall_ms, log=path.read_bytes()))
            path.unlink()

        await LocalExecutor(self.scratch).play(copy, back)


async def test_the_coordinator_commits_logs_delivered_as_bytes(make_config, tmp_path: Path) -> None:
    cfg = make_config(CONFIG)
    league = load_config(cfg)
    scratch = tmp_path / "elsewhere"
    scratch.mkdir()
    remote = _RemoteLike(scratch)
    ledger = open_ledger(league)
    try:
        stats = await run_league(league, ledger, executor=remote)
    finally:
        ledger.close()
    planned = [g.game_id for g in sched.games(league)]
    assert stats.played == len(planned) == 3 * 2 and remote.units == 2  # one table shared by two slots
    assert list(scratch.iterdir()) == []
    with Ledger.in_dir(league.out, create=False) as ledger:
        rows = list(ledger.rows())
    assert sorted(r.game_id for r in rows) == sorted(planned)
    for row in rows:
        assert row.log_path == f"games/{row.game_id}.jsonl.zst"  # compressed bytes keep their form
        footer = json.loads(read_log_bytes((league.out / row.log_path).read_bytes()).splitlines()[-1])["footer"]
        assert footer["scores"] == row.scores
    assert not any(p.name.endswith(".tmp") for p in (league.out / "games").iterdir())


async def test_cancelling_a_unit_leaves_no_bot_running(make_config, tmp_path: Path) -> None:
    tag = f"unit-cancel-{uuid.uuid4().hex}"
    unit = _first_table_unit(make_config(CONFIG.replace(bots_toml(["a", "b"]), bots_toml(["a", "b"], tag=tag))))
    seen: list[GameDone] = []
    with trio.CancelScope() as scope:

        def deliver(done: GameDone) -> None:
            seen.append(done)
            # the unit's bots live on between games, and the next session cut's (one process per bot
            # per rotation of a deal) may already be starting ahead (pool.prestart)
            assert 2 <= len(bot_processes(tag)) <= 4
            scope.cancel()

        await LocalExecutor(tmp_path).play(unit, deliver)
    assert scope.cancelled_caught and len(seen) == 1
    assert processes_with(tag) == []
