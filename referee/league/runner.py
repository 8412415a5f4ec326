"""Playing a league: builds, tables, sessions, ledger, progress, resume.

:func:`run_league` plays every scheduled game that the ledger does not hold
yet. Tables run concurrently inside one trio nursery, at most ``concurrency``
at a time (a :class:`trio.CapacityLimiter`); the table list is consumed lazily,
a table only when a slot is free. When there are fewer tables than slots, each
table's games are split into contiguous shards that run side by side (each
shard with its own bot processes), so a one-table league still uses every core.

Process reuse:

* ``session`` (default): every member of a table's lineup gets one bot process
  (:class:`BotSession`) that plays all the shard's games, whatever seat the
  rotation gives it. A bot found dead after a game is closed and restarted
  for its next game.
* ``game``: fresh processes for every game.

After each game the runtime has already written the game log (OUT/games/);
then the league commits the ledger row in one transaction. A kill at any
moment loses only games in flight; their logs are overwritten on resume.

Cancellation (Ctrl-C): trio cancels every table; each table closes its bot
sessions (``BotSession.close`` is shielded and always reaps the process
group), so no bot process outlives the league. ``KeyboardInterrupt`` then
propagates to the caller.

Before the first game of a run, after the builds, every bot is started once and
must answer ``hello`` (:func:`preflight`), then closed again. Nothing is written
to the ledger before that check has passed.

Errors: a failing build raises :class:`UserError` with the tail of its output;
a bot that fails the start check stops the run with one error per failing bot
(``[faults] broken_bot = "stop"``, the default); with ``"forfeit"`` a bot whose
process ran but failed its hello forfeits its games instead (one ``warning:``),
while a command that cannot start at all still stops the run. A changed config
against an existing ledger raises :class:`UserError` listing what differs.
"""

from __future__ import annotations

import json
import math
import os
import sys
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import trio

from referee.errors import UserError, user_facing
from referee.league import schedule as sched
from referee.league.config import League
from referee.league.ledger import GameRow, Ledger
from referee.league.standings import Tally

# --------------------------------------------------------------------------
# builds


async def run_builds(league: League) -> None:
    """Run every bot's ``build`` command once, in its working directory.

    Raises :class:`UserError` with the tail of the build's output if it fails
    or cannot start. Cancellation kills the build.
    """
    for bot in league.bots:
        if bot.build is None:
            continue
        argv = ["/bin/sh", "-c", bot.build] if isinstance(bot.build, str) else list(bot.build)
        try:
            proc = await trio.run_process(
                argv, cwd=bot.cwd, env={**os.environ, **bot.env} if bot.env else None, capture_stdout=True, stderr=subprocess.STDOUT, check=False,
                stdin=subprocess.DEVNULL,
            )
        except OSError as exc:
            raise UserError(f"bot '{bot.name}': build command {argv!r} could not start: {exc.strerror or exc}") from None
        if proc.returncode != 0:
            text = proc.stdout.decode(errors="replace").rstrip().splitlines()
            tail = "\n    ".join(text[-15:]) or "(no output)"
            raise UserError(
                f"bot '{bot.name}': build command {bot.build!r} failed with exit status {proc.returncode} "
                f"(in {bot.cwd}); last lines of its output:\n    {tail}"
            )


# --------------------------------------------------------------------------
# runtime glue


def _runtime() -> Any:
    import referee.runtime as rt

    return rt


def _clock_spec(league: League, overrides: dict[str, Any] | None = None) -> Any:
    rt = _runtime()
    c = league.clock
    data = {"move_ms": c.move_ms, "bank_ms": c.bank_ms, "startup_ms": c.startup_ms, "mode": c.mode,
            "wall_ceiling_ms": c.wall_ceiling_ms}
    if overrides:
        data.update({k: v for k, v in overrides.items() if v is not None})
    return rt.ClockSpec(**data)


def _bot_spec(league: League, index: int) -> Any:
    rt = _runtime()
    b = league.bots[index]
    from referee.runtime.limits import LimitsError, parse_limits

    try:
        limits = parse_limits(b.limits)  # the sandbox defaults, then [limits], then the bot's own
    except LimitsError as exc:
        raise UserError(f"bots[{index}].limits: {exc}") from None
    env = b.env
    if env and not (limits.sandbox and limits.clean_env):
        env = {**os.environ, **env}   # without the scrubbed environment, a dict would replace it all
    return rt.BotSpec(name=b.name, command=b.command, cwd=b.cwd, env=env, limits=limits)


def _match_format(v: Any) -> Any:
    if v.match.kind == "single":
        return None
    from referee.rules.match import MatchFormat

    return MatchFormat(kind=v.match.kind, hands=v.match.hands, target=v.match.target, max_hands=v.match.max_hands)


def check_bot_clocks(league: League) -> None:
    """Per-bot clock overrides (``startup_ms`` for the session; ``move_ms``,
    ``bank_ms``, ``mode``, ``wall_ceiling_ms`` through ``GameSpec.seat_clocks``)
    are all supported by the runtime: nothing to refuse. Kept so callers need
    no change; the values themselves are checked by the config loader."""


def _game_spec(league: League, g: sched.ScheduledGame) -> Any:
    rt = _runtime()
    spec = rt.GameSpec(
        game_id=g.game_id,
        rules=g.variant.rules,
        players=g.size,
        seed=g.seed,
        match=_match_format(g.variant),
        clock=_clock_spec(league),
        policy=rt.FaultPolicy(retries=league.faults.retries, max_line=league.faults.max_line,
                              max_decisions=league.faults.max_decisions),
    )
    if any(league.bots[i].clock for i in g.seats):
        spec.seat_clocks = [_clock_spec(league, league.bots[i].clock) for i in g.seats]
    return spec


def _row(league: League, g: sched.ScheduledGame, res: Any, wall_ms: float) -> GameRow:
    log = res.log_path
    if log:
        try:
            log = os.path.relpath(log, league.out)
        except ValueError:
            pass
    faults = [f.to_json() if hasattr(f, "to_json") else dict(f) for f in res.faults]
    think = [t.to_json() if hasattr(t, "to_json") else dict(t) for t in res.think_ms]
    return GameRow(
        game_id=g.game_id, variant=g.variant.name, size=g.size, table=g.table, deal=g.deal, rotation=g.rotation,
        seed=g.seed, bots=[league.bots[i].name for i in g.seats], scores=[float(s) for s in res.scores],
        ranks=list(res.ranks), win_shares=[float(w) for w in res.win_shares], forfeits=list(res.forfeits),
        faults=faults, think=think, log_path=log, reason=res.reason, wall_ms=wall_ms,
        detail=getattr(res, "detail", None),
    )


# --------------------------------------------------------------------------
# progress


@dataclass
class RunStats:
    total: int                     # games in the schedule
    done_before: int               # already in the ledger at start
    played: int = 0                # played by this run
    faults: int = 0
    started: float = field(default_factory=time.monotonic)
    concurrency: int = 0           # tables played at once (set when play starts)

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
# the league


@dataclass
class _Unit:
    table: sched.Table
    games: list[sched.ScheduledGame]


def _units(league: League, done: set[str], shards: int) -> Iterator[_Unit]:
    for table in sched.tables(league, league.shard):
        todo = [g for g in sched.table_games(league, table) if g.game_id not in done]
        if not todo:
            continue
        n = min(shards, len(todo))
        size = math.ceil(len(todo) / n)
        for i in range(0, len(todo), size):
            yield _Unit(table, todo[i : i + size])


def _open_tables(league: League, done: set[str], total: int) -> int:
    """How many tables still have games to play (for sharding). Counted exactly
    for a resumed league of up to a million games; otherwise the table count."""
    if not done or total > 1_000_000:
        return sched.total_tables(league, league.shard)
    return sum(
        1 for t in sched.tables(league, league.shard) if any(g.game_id not in done for g in sched.table_games(league, t))
    )


async def _start(league: League, index: int, nursery: trio.Nursery) -> Any:
    rt = _runtime()
    b = league.bots[index]
    try:
        return await rt.BotSession.start(_bot_spec(league, index), _clock_spec(league, b.clock), nursery,
                                         max_line=league.faults.max_line)
    except rt.BotError as exc:
        detail = str(getattr(exc, "detail", exc))
        if detail.startswith("cannot start: "):
            detail = detail[len("cannot start: "):]
        err = UserError(
            f"bot '{b.name}' (bots[{index}]) could not start: {detail}\n"
            f"  command: {b.command!r}, cwd: {b.cwd}\n"
            "  (commands run in cwd, which is relative to the config file; try: referee check-bot -- COMMAND)"
        )
        # the process ran but failed its hello: the dead session lets the league go on without it
        err.dead_session = exc.session  # type: ignore[attr-defined]
        raise err from None
    except OSError as exc:
        raise UserError(f"bot '{b.name}' could not start: {b.command!r} in {b.cwd}: {exc.strerror or exc}") from None


@dataclass
class StartFailure:
    index: int
    message: str                   # the whole error (bot, reason, command, hint)
    dead: Any = None               # the dead session, if the process ran but failed its hello


async def preflight(league: League, *, limit: int = 8) -> tuple[set[int], list[StartFailure]]:
    """Start every bot of the league once and let it answer ``hello`` (at most
    ``limit`` at once, each within its ``startup_ms``), then close it again:
    the check before the first game of a run. Returns the bots that passed and
    the failures (with the dead session of a bot whose process ran)."""
    ok: set[int] = set()
    failures: list[StartFailure] = []
    limiter = trio.CapacityLimiter(max(1, limit))

    async def one(i: int, nursery: trio.Nursery) -> None:
        async with limiter:
            try:
                sess = await _start(league, i, nursery)
            except UserError as exc:
                failures.append(StartFailure(i, str(exc), getattr(exc, "dead_session", None)))
                return
            await sess.close()
            ok.add(i)

    async with trio.open_nursery() as nursery:
        for i in range(len(league.bots)):
            nursery.start_soon(one, i, nursery)
    failures.sort(key=lambda f: f.index)
    return ok, failures


def memory_warning(league: League, slots: int) -> str | None:
    """A warning if ``slots`` tables of the largest size, each bot at its memory
    limit, could need more memory than the machine has; else None."""
    from referee.runtime.limits import LimitsError, parse_limits

    try:
        phys = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    seats = max((s for v in league.variants for s in v.sizes), default=0)
    per_bot = 0
    for b in league.bots:
        try:
            limit = parse_limits(b.limits).address_space
        except LimitsError:
            return None
        if limit is None:
            return None                     # no memory limit: nothing to multiply
        per_bot = max(per_bot, limit)
    need = slots * seats * per_bot
    if phys <= 0 or need <= phys:
        return None
    gib = 1024**3
    return (f"warning: {slots} tables at once x {seats} seats x {per_bot // 2**20} MiB memory limit per bot = "
            f"{need / gib:.1f} GiB, more than this machine's {phys / gib:.1f} GiB of memory; if the bots use "
            "their limit, the machine runs out of memory. Lower `concurrency` (or -j N) or the bots' memory "
            "limit ([limits] memory_mb, or a bot's limits = { memory_mb = ... })")


async def _close_all(sessions: Sequence[Any]) -> None:
    """Close every session, concurrently. ``BotSession.close`` is shielded, so
    this completes (and reaps every process) even when cancelled."""
    live = [s for s in sessions if s is not None]
    if len(live) == 1:
        await live[0].close()
    elif live:
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for s in live:
                    nursery.start_soon(s.close)


class _League:
    def __init__(self, league: League, ledger: Ledger, stats: RunStats, tally: Tally, hook: ProgressHook | None,
                 started_ok: set[int] | None = None, given_up: dict[int, Any] | None = None):
        self.league = league
        self.ledger = ledger
        self.stats = stats
        self.tally = tally
        self.hook = hook
        self.log_dir = league.out / "games"
        self.started_ok: set[int] = started_ok or set()   # bots that passed the start check
        self.given_up: dict[int, Any] = given_up or {}    # bots whose process ran but never passed hello
                                                          # (broken_bot = "forfeit"): their dead session,
                                                          # seated everywhere instead of retrying

    async def _play(self, g: sched.ScheduledGame, bots: Sequence[Any]) -> None:
        rt = _runtime()
        t0 = time.monotonic()
        try:
            res = await rt.play_game(_game_spec(self.league, g), list(bots), self.log_dir)
        except OSError as exc:
            raise UserError(f"{self.log_dir}: cannot write the log of {g.game_id}: {exc.strerror or exc}; "
                            "the games recorded so far are safe: fix this and run again to resume") from None
        row = _row(self.league, g, res, (time.monotonic() - t0) * 1000.0)
        try:
            self.ledger.record(row)
        except sqlite3.Error as exc:
            raise UserError(f"{self.ledger.path}: cannot record {g.game_id}: {exc}; the games recorded so far "
                            "are safe: fix this and run again to resume") from None
        self.stats.played += 1
        self.stats.faults += len(row.faults)
        self.tally.add(row)
        if self.hook is not None:
            self.hook(self.stats, self.tally)

    async def _start_many(self, sessions: list[Any], missing: list[int], lineup: tuple[int, ...],
                          nursery: trio.Nursery) -> None:
        """Start the missing sessions concurrently (fills ``sessions`` in place).

        Every bot passed the start check (:func:`preflight`) or was given up
        there (``[faults] broken_bot = "forfeit"``: its dead session is seated
        everywhere). A bot that fails to *restart* later keeps a dead session for
        this game: the runtime then records a crash for its seat and the fallback
        plays it, so one flaky bot cannot stop a league night; it is tried again
        for the next game.
        """

        async def one(j: int) -> None:
            bot = lineup[j]
            if bot in self.given_up:
                sessions[j] = self.given_up[bot]
                return
            try:
                sessions[j] = await _start(self.league, bot, nursery)
            except UserError as exc:
                dead = getattr(exc, "dead_session", None)
                if bot in self.started_ok:
                    if dead is not None:
                        sessions[j] = dead              # its crash (exit status, stderr) goes in the game's fault
                        return
                    if sessions[j] is not None:
                        sessions[j].death = str(exc).split("\n")[0]
                        return
                raise
            self.started_ok.add(bot)

        async with trio.open_nursery() as starters:
            for j in missing:
                starters.start_soon(one, j)

    async def run_unit(self, unit: _Unit) -> None:
        """Play one table shard. Sessions are closed on the way out, also on
        cancellation (closing is shielded)."""
        lineup = unit.table.lineup
        k = len(lineup)
        per_game = self.league.reuse == "game"
        async with trio.open_nursery() as nursery:
            sessions: list[Any] = [None] * k
            try:
                for g in unit.games:
                    missing = []
                    for j, sess in enumerate(sessions):
                        if sess is not None and lineup[j] in self.given_up:
                            continue                    # never passed hello: stays dead, its seats forfeit
                        if sess is None or not sess.alive:
                            if sess is not None:
                                await sess.close()      # reaps a crashed process; idempotent
                            missing.append(j)
                    if missing:
                        await self._start_many(sessions, missing, lineup, nursery)
                    bots = [sessions[p] for p in g.positions]
                    try:
                        await self._play(g, bots)
                    finally:
                        if per_game:
                            await _close_all(sessions)  # closed sessions are not alive: restarted next game
            finally:
                await _close_all(sessions)
                nursery.cancel_scope.cancel()


async def run_league(league: League, ledger: Ledger, *, hook: ProgressHook | None = None,
                     concurrency: int | None = None) -> RunStats:
    """Play every scheduled game missing from ``ledger``; return the run's figures.
    With ``league.shard`` set, only that shard's tables are scheduled (and
    ``RunStats.total`` counts that shard's games).

    Builds run first. Raises :class:`UserError` for build and start failures;
    ``KeyboardInterrupt``/cancellation stop every table promptly and close all
    bot processes (finished games stay committed).
    """
    done = ledger.done_ids()
    total = sched.total_games(league, league.shard)
    stats = RunStats(total=total, done_before=len(done))
    tally = Tally(league.name, live=True)
    if hook is not None:
        for row in ledger.rows():
            tally.add(row)
    if stats.done >= total:
        ledger.commit_staged()
        return stats
    check_bot_clocks(league)
    slots = concurrency or league.concurrency
    warning = memory_warning(league, slots)
    if warning:
        print(warning, file=sys.stderr)
    await run_builds(league)
    ok, failures = await preflight(league, limit=max(8, slots))
    given_up: dict[int, Any] = {}
    if failures:
        forfeit = league.faults.broken_bot == "forfeit"
        stop = [f for f in failures if not forfeit or f.dead is None]   # a command that cannot start
        if stop:                                                         # at all always stops
            for f in stop[:-1]:
                print(f"error: {f.message}", file=sys.stderr)
            hint = ("" if forfeit else
                    '\n  (to play on without a broken bot, its games forfeited, set broken_bot = "forfeit" in [faults])')
            raise UserError(
                f"{stop[-1].message}\n"
                f"{len(stop)} of {len(league.bots)} bots failed the start check before the first game; "
                f"nothing was played or recorded: fix the config and run the same command again{hint}"
            )
        for f in failures:
            given_up[f.index] = f.dead
            print(f"warning: {f.message.splitlines()[0]}; it forfeits its games "
                  "(the referee's fallback plays its seats)", file=sys.stderr)
    ledger.commit_staged()
    ntables = _open_tables(league, done, total)
    shards = max(1, math.ceil(slots / max(1, ntables)))
    runner = _League(league, ledger, stats, tally, hook, started_ok=ok, given_up=given_up)
    limiter = trio.CapacityLimiter(slots)
    stats.started = time.monotonic()
    stats.concurrency = slots
    if hook is not None:
        hook(stats, tally)          # the first progress line: the night starts

    async def unit_task(unit: _Unit, token: object) -> None:
        try:
            await runner.run_unit(unit)
        finally:
            limiter.release_on_behalf_of(token)

    async with trio.open_nursery() as nursery:
        for unit in _units(league, done, shards):
            token = object()
            await limiter.acquire_on_behalf_of(token)
            nursery.start_soon(unit_task, unit, token)
    return stats


def play(league: League, ledger: Ledger, *, hook: ProgressHook | None = None,
         concurrency: int | None = None) -> RunStats:
    """Synchronous entry: ``trio.run(run_league)``, with exception groups
    reduced to the ``KeyboardInterrupt`` or :class:`UserError` inside them."""
    try:
        return trio.run(lambda: run_league(league, ledger, hook=hook, concurrency=concurrency))
    except BaseExceptionGroup as eg:
        exc = user_facing(eg)
        if exc is eg:
            raise
        raise exc from None
