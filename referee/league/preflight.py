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

Errors: a failing build raises :class:`referee.errors.UserError` with the
tail of its output. A bot that fails the start check stops the run with one
error per failing bot (``[faults] broken_bot = "stop"``, the default); with
``"forfeit"`` a bot whose process ran but failed its hello forfeits its games
instead (one ``warning:`` line), while a command that cannot start at all
still stops the run. Cancellation kills a running build or bot.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Collection, Sequence
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
) -> dict[int, BotSession]:
    """Warn about memory, run the builds and the start check for a run of
    ``slots`` tables at once (see the module docstring); ``say`` gets each
    ``warning:`` line and the ``error:`` line of every failing bot but the last
    (whose message the raised error carries). Returns the bots given up (``broken_bot = "forfeit"``) with
    their dead sessions, by bot index; raises :class:`UserError` to stop the run. ``hellos``, when
    given, receives each passing bot's ``hello`` (as plain data) by bot index. ``only``: the bot
    indices to build and check (the others passed before: a ladder's config that gained bots)."""
    warning = memory_warning(league, slots)
    if warning:
        say(warning)
    await run_builds(league, only=only)
    entrants = [maker.entrant(i) for i in range(len(league.bots)) if only is None or i in only]
    _, failures = await start_check(entrants, max_line=league.faults.max_line, limit=max(8, slots), hellos=hellos)
    if not failures:
        return {}
    forfeit = league.faults.broken_bot == "forfeit"
    stop = [f for f in failures if not forfeit or f.dead is None]  # a command that cannot start at all always stops
    if stop:
        for f in stop[:-1]:
            say(f"error: {f}")
        hint = (
            ""
            if forfeit
            else '\n  (to play on without a broken bot, its games forfeited, set broken_bot = "forfeit" in [faults])'
        )
        raise UserError(
            f"{stop[-1]}\n"
            f"{len(stop)} of {len(entrants)} bots failed the start check before the first game; "
            f"nothing was played or recorded: fix the config and run the same command again{hint}"
        )
    for f in failures:
        say(f"warning: {str(f).splitlines()[0]}; it forfeits its games (the referee's fallback plays its seats)")
    return {f.index: f.dead for f in failures if f.dead is not None}  # every one of them: none stopped the run


async def run_builds(league: League, *, build: bool = True, only: Collection[int] | None = None) -> None:
    """Run every bot's ``build`` command once, in its working directory, inside
    the bot's sandbox (``referee.runtime.build``: the bot's limits, its folder
    writable, no network unless ``build_network``, at most ``build_seconds``;
    nothing it starts survives it). From here on the league's output folder and
    config, and each bot's folder from the other bots, are hidden from every bot
    in bubblewrap (``referee.runtime.sandbox.protect_paths``). With ``build``
    False only the paths are protected (a cluster worker whose host has built);
    with ``only``, only those bots (by index) are built.

    Raises :class:`UserError` with the tail of the build's output if it fails,
    times out or cannot start. Cancellation kills the build.
    """
    from referee.runtime.build import BuildStartError, run_build
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
            for bot, lim in zip(league.bots, limits)
            for f in bot_folders(bot.command, bot.cwd, named_cwd=not lim.temp_workdir)
        ],
    )
    for bot, lim in zip(league.bots, limits):
        # a mount that shows a protected path, a link out of its folder: refused before any build
        if lim.sandbox and lim.isolation != "none":
            check_view(bot.name, bot_view(bot.command, bot.cwd, None, not lim.temp_workdir, bot.data), bot.data)
    for i, (bot, lim) in enumerate(zip(league.bots, limits)):
        if bot.build is None or not build or (only is not None and i not in only):
            continue
        env = bot.env
        if env and not (lim.sandbox and lim.clean_env):
            env = {**os.environ, **env}  # without the scrubbed environment, a dict would replace it all
        try:
            result = await run_build(bot.name, bot.build, bot.cwd, env=env, limits=lim)
        except BuildStartError as exc:
            raise UserError(f"bot '{bot.name}': build command {bot.build!r} could not start: {exc}") from None
        if result.ok:
            continue
        tail = result.tail().replace("\n", "\n    ")
        if result.timed_out:
            raise UserError(
                f"bot '{bot.name}': build command {bot.build!r} did not finish within {lim.build_seconds} s and "
                f"was killed (in {bot.cwd}; raise limits.build_seconds if it needs longer); last lines of its "
                f"output:\n    {tail}"
            )
        raise UserError(
            f"bot '{bot.name}': build command {bot.build!r} failed with exit status {result.returncode} "
            f"(in {bot.cwd}); last lines of its output:\n    {tail}"
        )


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
    """A warning if ``slots`` tables of the largest size, each bot at its memory
    limit, could need more memory than the machine has; else None."""
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
            return None  # no memory limit: nothing to multiply
        per_bot = max(per_bot, limit)
    need = slots * seats * per_bot
    if phys <= 0 or need <= phys:
        return None
    gib = 1024**3
    return (
        f"warning: {slots} tables at once x {seats} seats x {per_bot // 2**20} MiB memory limit per bot = "
        f"{need / gib:.1f} GiB, more than this machine's {phys / gib:.1f} GiB of memory; if the bots use "
        "their limit, the machine runs out of memory. Lower `concurrency` (or -j N) or the bots' memory "
        "limit ([limits] memory_mb, or a bot's limits = { memory_mb = ... })"
    )
