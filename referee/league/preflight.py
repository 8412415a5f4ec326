"""Before the first game of a run: the memory warning, the builds and the start check.

:func:`prepare` does all three, in this order:

* :func:`memory_warning`: if the tables played at once, every bot at its
  memory limit, could need more memory than the machine has, one
  ``warning:`` line (the run goes on);
* :func:`run_builds`: every bot's ``build`` command, once, in its working
  directory;
* :func:`start_check`: every bot is started once and must answer ``hello``
  (each within its ``startup_ms``), then closed again.

Nothing is written to the ledger before these have passed.

A build is cached (:mod:`referee.league.buildcache`): it runs again only when
the bot's folder or its build command changed since its last successful build
of the night, or with ``rebuild`` (``--rebuild``).

Errors: with ``[faults] broken_bot = "stop"`` (the default) a failing build
raises :class:`referee.errors.UserError` with the tail of its output, and a
bot that fails the start check stops the run with one error per failing bot.
With ``"forfeit"`` every such bot forfeits its games instead (one ``warning:``
line each, a failed build's with the tail of its output): a build that fails,
times out or cannot start, a program that is missing or not executable, a
process that fails its hello; the others play on. Cancellation kills a
running build or bot.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import msgspec
import trio

from referee.errors import UserError
from referee.league.config import League
from referee.league.pool import BotStartFailed, start_bot
from referee.league.work import Entrant, UnitMaker
from referee.runtime import BotSession
from referee.runtime.limits import LimitsError, parse_limits


def to_stderr(line: str) -> None:
    """Say one line to the person running the command (the default ``say`` of the league's steps)."""
    print(line, file=sys.stderr)


async def prepare(
    league: League,
    maker: UnitMaker,
    slots: int,
    say: Callable[[str], None] = to_stderr,
    hellos: dict[int, dict[str, Any]] | None = None,
    only: Collection[int] | None = None,
    rebuild: bool = False,
) -> dict[int, BotSession]:
    """Warn about memory, run the builds and the start check for a run of
    ``slots`` tables at once (see the module docstring); ``say`` gets each
    ``warning:`` line and the ``error:`` line of every failing bot but the last
    (whose message the raised error carries). Returns the bots given up (``broken_bot = "forfeit"``) with
    their dead sessions, by bot index; raises :class:`UserError` to stop the run. ``hellos``, when
    given, receives each passing bot's ``hello`` (as plain data) by bot index. ``only``: the bot
    indices to build and check (the others passed before: a ladder's config that gained bots).
    ``rebuild``: build every bot, even one whose build is cached."""
    warning = memory_warning(league, slots)
    if warning:
        say(warning)
    forfeit = league.faults.broken_bot == "forfeit"
    unbuilt = await run_builds(league, only=only, cache=True, rebuild=rebuild, give_up=forfeit)
    entrants = [maker.entrant(i) for i in range(len(league.bots)) if only is None or i in only]
    checked = [e for e in entrants if e.index not in unbuilt]
    _, failures = await start_check(checked, max_line=league.faults.max_line, limit=max(8, slots), hellos=hellos)
    if failures and not forfeit:
        for f in failures[:-1]:
            say(f"error: {f}")
        raise UserError(
            f"{failures[-1]}\n"
            f"{len(failures)} of {len(entrants)} bots failed the start check before the first game; "
            "nothing was played or recorded: fix the config and run the same command again\n"
            '  (to play on without a broken bot, its games forfeited, set broken_bot = "forfeit" in [faults])'
        )
    given_up: dict[int, BotSession] = {}
    fallback = "it forfeits its games (the referee's fallback plays its seats)"
    for e in entrants:
        if e.index in unbuilt:
            head, sep, tail = unbuilt[e.index].partition("; last lines of its output:")
            say(f"warning: {head}; {fallback}{sep}{tail}")
            given_up[e.index] = BotSession.never_started(e.bot, f"its build failed: {head}")
    for f in failures:
        first = str(f).splitlines()[0]
        say(f"warning: {first}; {fallback}")
        # a command that cannot start at all has no process: a session that never started stands in
        given_up[f.index] = (
            f.dead if f.dead is not None else BotSession.never_started(maker.entrant(f.index).bot, first)
        )
    return dict(sorted(given_up.items()))


async def run_builds(
    league: League,
    *,
    build: bool = True,
    only: Collection[int] | None = None,
    cache: bool = False,
    rebuild: bool = False,
    give_up: bool = False,
    records_dir: Path | None = None,
) -> dict[int, str]:
    """Run every bot's ``build`` command once, in its working directory, inside
    the bot's sandbox (``referee.runtime.build``: the bot's limits, its folder
    writable, no network unless ``build_network``, at most ``build_seconds``;
    nothing it starts survives it). From here on the league's output folder and
    config, and each bot's folder from the other bots, are hidden from every bot
    in bubblewrap (``referee.runtime.sandbox.protect_paths``). With ``build``
    False only the paths are protected (a cluster worker whose host has built);
    with ``only``, only those bots (by index) are built. With ``cache``, a bot
    whose folder and build command are those of its last successful build of
    this night (``OUT/builds.json``, :mod:`referee.league.buildcache`) is not
    built again, unless ``rebuild``; ``records_dir``: where the cache's records
    are kept instead of ``OUT`` (a cluster worker whose host does not see OUT).

    A build that fails, times out or cannot start raises :class:`UserError` with
    the tail of its output; with ``give_up``, every bot is built and the failures
    are returned instead (bot index -> that message), the others' builds done.
    Cancellation kills the build.
    """
    from referee.league import buildcache
    from referee.runtime.build import BuildStartError, run_build

    limits = _protect_paths(league)
    where = records_dir if records_dir is not None else league.out
    records = buildcache.load_records(where) if cache else {}
    not_the_bots = [league.out, league.path]
    failed: dict[int, str] = {}
    for i, (bot, lim) in enumerate(zip(league.bots, limits, strict=True)):
        if bot.build is None or not build or (only is not None and i not in only):
            continue
        before = buildcache.folder_state(bot.cwd, not_the_bots) if cache else None
        if (
            before is not None
            and not rebuild
            and buildcache.is_current(records.get(bot.name), bot.build, bot.env, before)
        ):
            continue
        env = bot.env
        if env and not (lim.sandbox and lim.clean_env):
            env = {**os.environ, **env}  # without the scrubbed environment, a dict would replace it all
        problem = None
        try:
            result = await run_build(bot.name, bot.build, bot.cwd, env=env, limits=lim)
        except BuildStartError as exc:
            problem = f"bot '{bot.name}': build command {bot.build!r} could not start: {exc}"
        else:
            if result.ok:
                after = buildcache.folder_state(bot.cwd, not_the_bots) if before is not None else None
                if before is not None and after is not None:
                    records[bot.name] = buildcache.record_build(bot.build, bot.env, before, after)
                    _save_records(where, records)
                elif records.pop(bot.name, None) is not None:
                    _save_records(where, records)
                continue
            problem = _build_failed(bot, lim, result)
        if cache and records.pop(bot.name, None) is not None:
            _save_records(where, records)
        if not give_up:
            raise UserError(problem)
        failed[i] = problem
    return failed


def _protect_paths(league: League) -> list[Any]:
    """Every bot's parsed limits, after hiding the night's output folder and config and each bot's
    folder from the other bots (and refusing a bot whose view would show a protected path)."""
    from referee.runtime.sandbox import bot_folders, bot_view, check_view, protect_paths

    limits = []
    for i, bot in enumerate(league.bots):
        try:
            limits.append(parse_limits(bot.limits))
        except LimitsError as exc:
            raise UserError(f"bots[{i}].limits: {exc}") from None
    protect_paths(
        secret=[str(league.out), str(league.path)],
        bot_folders=[
            f
            for bot, lim in zip(league.bots, limits, strict=True)
            for f in bot_folders(bot.command, bot.cwd, named_cwd=not lim.temp_workdir)
        ],
    )
    for bot, lim in zip(league.bots, limits, strict=True):
        # a mount that shows a protected path, a link out of its folder: refused before any build
        if lim.sandbox and lim.isolation != "none":
            check_view(bot.name, bot_view(bot.command, bot.cwd, None, not lim.temp_workdir, bot.data), bot.data)
    return limits


def _build_failed(bot: Any, lim: Any, result: Any) -> str:
    """What a failed build (``result``: its :class:`~referee.runtime.build.BuildResult`) says."""
    tail = result.tail().replace("\n", "\n    ")
    if result.timed_out:
        return (
            f"bot '{bot.name}': build command {bot.build!r} did not finish within {lim.build_seconds} s and "
            f"was killed (in {bot.cwd}; raise limits.build_seconds if it needs longer); last lines of its "
            f"output:\n    {tail}"
        )
    return (
        f"bot '{bot.name}': build command {bot.build!r} failed with exit status {result.returncode} "
        f"(in {bot.cwd}); last lines of its output:\n    {tail}"
    )


def _save_records(where: Path, records: dict[str, Any]) -> None:
    from referee.league.buildcache import RECORD_NAME, save_records

    try:
        save_records(where, records)
    except OSError as exc:
        raise UserError(f"{where / RECORD_NAME}: cannot write the build cache: {exc.strerror or exc}") from None


async def start_check(
    entrants: Sequence[Entrant], *, max_line: int, limit: int = 8, hellos: dict[int, dict[str, Any]] | None = None
) -> tuple[set[int], list[BotStartFailed]]:
    """Start every bot once and let it answer ``hello`` (at most ``limit`` at
    once), then close it again. Returns the bot indices that passed and the
    failures, in bot order (each with the dead session of a bot whose process
    ran). ``hellos``, when given, receives every passing bot's ``hello`` as
    plain data (``protocol``, ``name``, ``version``), by bot index."""
    ok: set[int] = set()
    failures: list[BotStartFailed] = []
    limiter = trio.CapacityLimiter(max(1, limit))

    async def one(entrant: Entrant, nursery: trio.Nursery) -> None:
        async with limiter:
            try:
                sess = await start_bot(entrant, nursery, max_line=max_line)
            except BotStartFailed as exc:
                failures.append(exc)
                return
            if hellos is not None:
                hellos[entrant.index] = {k: v for k, v in msgspec.to_builtins(sess.hello).items() if k != "type"}
            await sess.close()
            ok.add(entrant.index)

    async with trio.open_nursery() as nursery:
        for entrant in entrants:
            nursery.start_soon(one, entrant, nursery)
    failures.sort(key=lambda f: f.index)
    return ok, failures


def memory_warning(league: League, slots: int) -> str | None:
    """A warning if ``slots`` tables of the largest size could need more memory
    than the machine has, each seat at its own bot's memory limit: every table
    seating the bots of the largest limits (the worst case; a bot may sit at
    several tables at once, one process each); else None."""
    try:
        phys = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    seats = max((s for v in league.variants for s in v.sizes), default=0)
    limits: list[int] = []
    for b in league.bots:
        try:
            limit = parse_limits(b.limits).address_space
        except LimitsError:
            return None
        if limit is None:
            return None  # no memory limit: nothing to add up
        limits.append(limit)
    if not limits or seats <= 0:
        return None
    limits.sort(reverse=True)
    top = (limits + [limits[0]] * seats)[:seats]  # fewer bots than seats (fill = "repeat"): the largest again
    per_table = sum(top)
    need = slots * per_table
    if phys <= 0 or need <= phys:
        return None
    gib, mib = 1024**3, 2**20
    if len(set(top)) == 1:
        each = f"{top[0] // mib} MiB memory limit per bot"
    else:
        each = f"the largest memory limits {' + '.join(str(x // mib) for x in top)} = {per_table // mib} MiB a table"
    return (
        f"warning: {slots} tables at once x {seats} seats, {each}: {need / gib:.1f} GiB, more than this "
        f"machine's {phys / gib:.1f} GiB of memory; if the bots use their limit, the machine runs out of "
        "memory. Lower `concurrency` (or -j N) or the bots' memory limit ([limits] memory_mb, or a bot's "
        "limits = { memory_mb = ... })"
    )
