"""Playing a league: the schedule driven through an executor, each game committed as it ends.

:func:`run_league` plays every scheduled game that the ledger does not hold
yet. First :func:`referee.league.preflight.prepare` (memory warning, builds,
start check); then the meta entries the output directory staged are committed
(:mod:`referee.league.outdir`) with the bots' commands and ``hello`` answers
(meta ``bots``), and the schedule is driven:

* Tables become units of work (:class:`referee.league.work.Unit`), lazily, a
  table only when a slot is free; at most ``concurrency`` units are played at
  once (a :class:`trio.CapacityLimiter`). When there are fewer tables than
  slots, each table's games are split into contiguous shares (units) that run
  side by side, each with its own bot processes, so a one-table league still
  uses every core.
* An :class:`~referee.league.work.Executor` plays each unit
  (:class:`~referee.league.local.LocalExecutor` by default: trio and bot
  processes here; ``reuse = "session"`` keeps one process per lineup position
  for the unit's deals of one rotation (``Unit.fresh``: no process plays a deal
  twice), ``"game"`` starts fresh ones for every game).
* As each game ends, the coordinator commits it: its log (already written by
  the runtime into ``OUT/games/``, or delivered as bytes and written here),
  then its ledger row in one transaction, then the progress figures and the
  live tally (the ``hook``). A kill at any moment loses only games in flight;
  their logs are overwritten on resume.

Cancellation (Ctrl-C, or SIGTERM/SIGHUP, which the command line turns into
Ctrl-C): trio cancels every unit; each closes its bot sessions (shielded,
always reaping the process group), so no bot process outlives the league, and
removes the logs of its games in flight (no log is left without its ledger
row). ``KeyboardInterrupt`` then propagates to the caller.

Errors: :class:`referee.errors.UserError` for a failing build or start check
(see :mod:`referee.league.preflight`), for a bot that cannot start at all in
the middle of the night, and for a log or ledger row that cannot be written.
"""

from __future__ import annotations

import math
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from referee.errors import UserError, user_facing
from referee.league import schedule as sched
from referee.league.config import League
from referee.league.ledger import BotInfo, GameRow, Ledger
from referee.league.local import LocalExecutor
from referee.league.logbudget import META_KEY as LOG_BUDGET_KEY
from referee.league.logbudget import STDERR_LOG_BUDGET, LogBudgets
from referee.league.outdir import clear_incoming
from referee.league.preflight import prepare, to_stderr
from referee.league.standings import Tally
from referee.league.work import Executor, GameDone, Unit, UnitMaker
from referee.runtime.entry import run as trio_run
from referee.runtime.gamelog import is_zstd, log_name
from referee.runtime.sandbox import protection_scope

if TYPE_CHECKING:
    from referee.league.cluster import Cluster


# --------------------------------------------------------------------------
# progress


@dataclass
class RunStats:
    total: int  # games in the schedule
    done_before: int  # already in the ledger at start
    played: int = 0  # played by this run
    faults: int = 0
    started: float = field(default_factory=time.monotonic)
    concurrency: int = 0  # tables played at once (set when play starts)
    #: on a cluster: the logs the workers wrote into the output folder, and those they sent
    logs_in_place: int = 0
    logs_sent: int = 0

    @property
    def done(self) -> int:
        return self.done_before + self.played

    @property
    def rate(self) -> float:
        dt = time.monotonic() - self.started
        return self.played / dt if dt > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        r = self.rate
        return (self.total - self.done) / r if r > 0 else None


ProgressHook = Callable[[RunStats, Tally], None]


# --------------------------------------------------------------------------
# committing finished games


class _Committer:
    """Commits each finished game: log, ledger row, figures, tally, hook."""

    def __init__(
        self, league: League, ledger: Ledger, stats: RunStats, tally: Tally, hook: ProgressHook | None
    ) -> None:
        self.league = league
        self.ledger = ledger
        self.stats = stats
        self.tally = tally
        self.hook = hook
        self._games = os.path.join(os.fspath(league.out), "games")

    def log_budgets(self, slots: int) -> LogBudgets:
        """The night's stderr budgets, each bot's use so far read from the ledger (a resumed night's too)."""
        used = LogBudgets.read_used(self.ledger.get_meta(LOG_BUDGET_KEY))
        return LogBudgets([b.name for b in self.league.bots], STDERR_LOG_BUDGET, used, slots)

    def commit(self, g: sched.ScheduledGame, done: GameDone, budgets: LogBudgets | None = None) -> None:
        """Write a delivered log, then record the row (its own transaction, with the
        bots' stderr budget use when ``budgets``); raises :class:`UserError` if either
        cannot be written."""
        log_path = done.result.log_path
        rel = None
        if done.log is not None:
            log_path, rel = self._write_log(g.game_id, done.log)
        row = _row(self.league, g, done, log_path, rel)
        try:
            if budgets is not None and any(done.stderr_logged):
                self.ledger.record_many([row], {LOG_BUDGET_KEY: budgets.meta_text()})
            else:
                self.ledger.record(row)
        except sqlite3.Error as exc:
            raise UserError(
                f"{self.ledger.path}: cannot record {g.game_id}: {exc}; the games recorded so far "
                "are safe: fix this and run again to resume"
            ) from None
        self.stats.played += 1
        self.stats.faults += len(row.faults)
        self.tally.add(row)
        if self.hook is not None:
            self.hook(self.stats, self.tally)

    def discard_logs(self, game_ids: set[str]) -> None:
        """Remove the logs of games that were in flight and have no ledger row (a game stopped
        half-way leaves a log with an ``aborted`` footer; resuming plays it again)."""
        for game_id in game_ids:
            try:
                if self.ledger.get(game_id) is not None:
                    continue  # recorded after all (its commit failed after the row was written)
            except (sqlite3.Error, UserError):
                continue  # a ledger that cannot be read: leave the logs to the next run
            for zstd in (False, True):
                try:
                    os.unlink(os.path.join(self._games, log_name(game_id, zstd)))
                except OSError:
                    pass  # not written (yet), or already gone

    def _write_log(self, game_id: str, data: bytes) -> tuple[str, str]:
        """Write a log delivered as bytes to ``OUT/games/<id>.jsonl`` (or
        ``.jsonl.zst``: zstandard bytes; a temporary file, then a rename, as
        :func:`~referee.league.outdir.write_atomic` does, in plain ``os`` calls:
        this runs for every game a cluster delivers); return its path and the
        path relative to ``OUT``."""
        name = log_name(game_id, is_zstd(data))
        path = os.path.join(self._games, name)
        tmp = path + ".tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o666)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except OSError as exc:
            raise UserError(
                f"{self._games}: cannot write the log of {game_id}: {exc.strerror or exc}; "
                "the games recorded so far are safe: fix this and run again to resume"
            ) from None
        return path, os.path.join("games", name)


def _row(
    league: League, g: sched.ScheduledGame, done: GameDone, log_path: str | None, rel: str | None = None
) -> GameRow:
    """The ledger row of a finished game; its log path relative to ``OUT`` (``rel`` if known)."""
    res = done.result
    log = rel or log_path
    if log and rel is None:
        try:
            log = os.path.relpath(log, league.out)
        except ValueError:
            pass
    return GameRow(
        game_id=g.game_id,
        variant=g.variant.name,
        size=g.size,
        table=g.table,
        deal=g.deal,
        rotation=g.rotation,
        seed=g.seed,
        bots=[league.bots[i].name for i in g.seats],
        scores=[float(s) for s in res.scores],
        ranks=list(res.ranks),
        win_shares=[float(w) for w in res.win_shares],
        forfeits=list(res.forfeits),
        faults=[f.to_json() for f in res.faults],
        think=[t.to_json() for t in res.think_ms],
        log_path=log,
        reason=res.reason,
        wall_ms=done.wall_ms,
        detail=res.detail,
    )


# --------------------------------------------------------------------------
# the schedule, in units


@dataclass(frozen=True)
class _Batch:
    """A unit and the scheduled games it plays (for their ledger rows)."""

    unit: Unit
    games: dict[str, sched.ScheduledGame]


def _batches(
    league: League,
    maker: UnitMaker,
    done: set[str],
    shares: int,
    given_up: frozenset[int],
    max_deals: int | None = None,
) -> Iterator[_Batch]:
    """Every table's games not in ``done``, in schedule order, split into at least
    ``shares`` contiguous units per table (lazily: one table at a time); with
    ``max_deals``, none holds more than that many deal sets (a deal in every rotation).
    In session mode a table's games are split by seat rotation first
    (:func:`referee.league.work.session_order`), so a unit holds few rotations
    and needs few fresh sets of processes."""
    for table in sched.tables(league, league.shard):
        todo = [g for g in sched.table_games(league, table) if g.game_id not in done]
        if not todo:
            continue
        if league.reuse == "session":
            todo.sort(key=lambda g: g.rotation)
        size = math.ceil(len(todo) / min(shares, len(todo)))
        if max_deals is not None:
            size = min(size, max(1, max_deals) * table.size)
        for i in range(0, len(todo), size):
            part = todo[i : i + size]
            yield _Batch(maker.unit(table, part, given_up), {g.game_id: g for g in part})


def _open_tables(league: League, done: set[str], total: int) -> int:
    """How many tables still have games to play (for sharing them out). Counted
    exactly for a resumed league of up to a million games; otherwise the table count."""
    if not done or total > 1_000_000:
        return sched.total_tables(league, league.shard)
    tables = sched.tables(league, league.shard)
    return sum(1 for t in tables if any(g.game_id not in done for g in sched.table_games(league, t)))


def _planned_done(league: League, ledger: Ledger, done: set[str]) -> int:
    """How many of the ``done`` games are in the plan (:meth:`referee.league.night.NightPlan.played`):
    not a ladder game (``referee ladder``) nor one of a withdrawn bot (:mod:`referee.league.roster`)."""
    from referee.league.night import NightPlan

    night = NightPlan(league, (league.shard,))
    if not league.withdrawn:
        return sum(1 for i in done if night.holds(i))
    return night.played(ledger.rows())


def _stage_bots(ledger: Ledger, league: League, hellos: dict[int, dict[str, Any]]) -> None:
    """Stage the meta ``bots``: every bot's name, command and start-check ``hello``."""
    infos = [BotInfo(name=b.name, command=b.command, hello=hellos.get(i)) for i, b in enumerate(league.bots)]
    ledger.stage_meta({"bots": BotInfo.text(infos)})


async def _drive(batches: Iterator[_Batch], executor: Executor, committer: _Committer, slots: int) -> None:
    """Play the batches' units, at most ``slots`` at once, committing every game as it is delivered.
    Each unit is granted its share of its bots' night stderr budgets (:mod:`referee.league.logbudget`)."""
    limiter = trio.CapacityLimiter(slots)
    budgets = committer.log_budgets(slots)

    async def one(batch: _Batch, token: object) -> None:
        pending = set(batch.games)  # the unit's games not recorded yet
        unit = budgets.grant(batch.unit)

        def deliver(done: GameDone) -> None:
            g = batch.games[done.game_id]
            budgets.charge(g.seats, done)
            committer.commit(g, done, budgets)
            pending.discard(done.game_id)

        try:
            await executor.play(unit, deliver)
        except BaseException:
            committer.discard_logs(pending)  # stopped (Ctrl-C, SIGTERM) or failed: no log without its row
            raise
        finally:
            budgets.release(unit)
            limiter.release_on_behalf_of(token)

    async with trio.open_nursery() as nursery:
        for batch in batches:
            token = object()
            await limiter.acquire_on_behalf_of(token)
            nursery.start_soon(one, batch, token)


# --------------------------------------------------------------------------
# entry points


async def run_league(
    league: League,
    ledger: Ledger,
    *,
    hook: ProgressHook | None = None,
    concurrency: int | None = None,
    executor: Executor | None = None,
    cluster: Cluster | None = None,
    rebuild: bool = False,
    viewers: bool = True,
) -> RunStats:
    """Play every scheduled game missing from ``ledger``; return the run's figures.
    With ``league.shard`` set, only that shard's tables are scheduled (and
    ``RunStats.total`` counts that shard's games). ``executor`` plays the units
    (default: a :class:`~referee.league.local.LocalExecutor` writing logs into
    ``OUT/games/`` and seating the dead sessions of given-up bots). With
    ``cluster`` (:class:`referee.league.cluster.Cluster`), the builds and the
    start check run on its workers and its :class:`~referee.league.cluster.DaskExecutor`
    plays the units (one per worker thread at once unless ``concurrency``).
    ``rebuild``: run every bot's build, even one cached (:mod:`referee.league.buildcache`).
    ``viewers``: the default executor watches every game as it is played (its live frames file and
    its viewer page, :class:`referee.view.live.LiveViewers`); False plays without (``referee bench
    league`` measures the play alone; ``referee report`` can make the pages from the logs later).

    Raises :class:`UserError` for build and start failures (see the module
    docstring); ``KeyboardInterrupt``/cancellation stop every unit promptly and
    close all bot processes (finished games stay committed).
    """
    with protection_scope():  # the night's paths are hidden from bots for this night only
        return await _run_league(league, ledger, hook, concurrency, executor, cluster, rebuild, viewers)


async def _run_league(
    league: League,
    ledger: Ledger,
    hook: ProgressHook | None,
    concurrency: int | None,
    executor: Executor | None,
    cluster: Cluster | None,
    rebuild: bool,
    viewers: bool,
) -> RunStats:
    done = ledger.done_ids()
    total = sched.total_games(league, league.shard)
    stats = RunStats(total=total, done_before=_planned_done(league, ledger, done))
    tally = Tally(league.name, live=True)
    if hook is not None:
        for row in ledger.rows():
            tally.add(row)
    if stats.done >= total:
        ledger.commit_staged()
        return stats
    maker = UnitMaker(league)
    committer = _Committer(league, ledger, stats, tally, hook)

    async def drive(executor: Executor, slots: int, given_up: frozenset[int], max_deals: int | None) -> None:
        shares = max(1, math.ceil(slots / max(1, _open_tables(league, done, total))))
        batches = _batches(league, maker, done, shares, given_up, max_deals)
        stats.started = time.monotonic()
        stats.concurrency = slots
        if hook is not None:
            hook(stats, tally)  # the first progress line: the night starts
        await _drive(batches, executor, committer, slots)

    hellos: dict[int, dict[str, Any]] = {}
    if cluster is not None:
        from referee.view.live import prune_stale
        from referee.view.viewers import write_shell

        prune_stale(league.out)  # (the workers that see OUT write its live files and viewer pages)
        (league.out / "games").mkdir(parents=True, exist_ok=True)
        write_shell(league.out / "games")
        given_up_ids = await cluster.prepare(league, maker, to_stderr, hellos=hellos, rebuild=rebuild)
        _stage_bots(ledger, league, hellos)
        ledger.commit_staged()
        async with cluster.executor(league) as remote:
            try:
                await drive(remote, concurrency or cluster.slots, given_up_ids, remote.unit_deals)
            finally:
                stats.logs_in_place, stats.logs_sent = remote.moved, remote.sent
        return stats
    slots = concurrency or league.concurrency
    clear_incoming(league.out)
    given_up = await prepare(league, maker, slots, hellos=hellos, rebuild=rebuild)
    _stage_bots(ledger, league, hellos)
    ledger.commit_staged()
    if executor is None:
        from referee.view.live import LiveViewers

        executor = LocalExecutor(
            league.out / "games", given_up, viewers=LiveViewers.for_out(league.out) if viewers else None
        )
    await drive(executor, slots, frozenset(given_up), None)
    return stats


def play(
    league: League,
    ledger: Ledger,
    *,
    hook: ProgressHook | None = None,
    concurrency: int | None = None,
    cluster: Cluster | None = None,
    rebuild: bool = False,
    viewers: bool = True,
) -> RunStats:
    """Synchronous entry: ``trio.run(run_league)``, with an exception group
    reduced to the exception a user should see (:func:`referee.errors.user_facing`:
    a ``KeyboardInterrupt`` inside it first, then a :class:`UserError`)."""
    try:
        return trio_run(
            lambda: run_league(
                league, ledger, hook=hook, concurrency=concurrency, cluster=cluster, rebuild=rebuild, viewers=viewers
            )
        )
    except BaseExceptionGroup as eg:
        exc = user_facing(eg)
        if exc is eg:
            raise
        raise exc from None
