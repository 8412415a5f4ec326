"""The local executor: plays units of work with trio and bot processes on this machine.

:class:`LocalExecutor` is the :class:`referee.league.work.Executor` of
``referee run``: each unit gets a bot pool (:func:`referee.league.pool.open_pool`),
each game is played by :func:`referee.runtime.play_game`, which writes its log
into the executor's ``log_dir`` (compressed when ``unit.compress``) before the
game is delivered. With ``reuse =
"game"`` the pool's processes are closed after every game (after its
delivery), so the next game gets fresh ones. The next game's processes (per-game
mode) or the next session cut's are started ahead, while the current game or
rotation plays (:meth:`referee.league.pool.BotPool.prestart`), so a table does
not wait for their starts; they get nothing but ``hello`` before their turn. With ``viewers``
(:class:`referee.view.live.LiveViewers`) every game is watched as it is played:
its frames go to a live file and its viewer page is written next to its log
when it ends (no second replay of the log for the page).

Errors: a log that cannot be written is a :class:`referee.errors.UserError`
(the games recorded so far are safe); a bot that cannot start at all is
:class:`referee.league.pool.BotStartFailed`. Cancellation closes the unit's
bot processes (shielded) and propagates.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from referee.errors import UserError
from referee.league.logbudget import STDERR_LOG_BUDGET
from referee.league.pool import open_pool
from referee.league.work import Deliver, GameDone, Unit
from referee.runtime import BotSession, play_game

if TYPE_CHECKING:  # pragma: no cover
    from referee.view.live import LiveViewers

__all__ = ["STDERR_LOG_BUDGET", "LocalExecutor"]


class LocalExecutor:
    """Plays units here; game logs go to ``log_dir``. ``given_up``: the dead
    sessions of the bots given up before the night (by ``Entrant.index``; the
    start check's, see :func:`referee.league.preflight.prepare`), seated for
    every bot a unit names in ``given_up``; a unit naming a bot without one
    is a ``ValueError`` (a bug in the caller). ``log_budget``: the stderr bytes each bot
    may have copied into the game logs it plays here (:func:`referee.runtime.game.log_tail`)
    when a unit brings no grant of its own (``Unit.log_budgets``: the night's driver shares
    each bot's night budget out among the units, :mod:`referee.league.logbudget`). ``viewers``:
    each game's live frames and viewer page, made as it is played (None: none)."""

    def __init__(
        self,
        log_dir: Path,
        given_up: Mapping[int, BotSession] | None = None,
        log_budget: int = STDERR_LOG_BUDGET,
        viewers: LiveViewers | None = None,
    ) -> None:
        self.log_dir = log_dir
        self.viewers = viewers
        self.given_up: Mapping[int, BotSession] = given_up or {}
        self.log_budget = log_budget
        #: per bot (``Entrant.index``): the stderr bytes it may still have copied into game logs
        self.log_budgets: dict[int, list[int]] = {}

    async def play(self, unit: Unit, deliver: Deliver) -> None:
        """See :meth:`referee.league.work.Executor.play`."""
        unknown = unit.given_up - set(self.given_up)
        if unknown:
            raise ValueError(f"unit {unit.table}: no dead session for the given-up bots {sorted(unknown)}")
        dead = {i: s for i, s in self.given_up.items() if i in unit.given_up}
        per_game = unit.reuse == "game"
        last_cut = max(unit.fresh, default=0)
        budgets = self.log_budgets
        if unit.log_budgets is not None:  # the unit's grants: this unit's logs only
            budgets = {e.index: [g] for e, g in zip(unit.lineup, unit.log_budgets, strict=True)}
        async with open_pool(unit.lineup, max_line=unit.max_line, given_up=dead) as pool:
            for i, game in enumerate(unit.games):
                if i in unit.fresh or (per_game and i > 0):
                    await pool.renew()  # fresh processes from here on: those started ahead, if up
                bots = await pool.seat(game.positions)
                if i + 1 < len(unit.games) and (per_game or i < last_cut):
                    # the next game's processes (per-game mode) or the next cut's start while this
                    # game or rotation plays: nothing but hello reaches them before their turn
                    pool.prestart()
                for p, b in zip(game.positions, bots, strict=True):
                    b.log_budget = budgets.setdefault(unit.lineup[p].index, [self.log_budget])
                before = [b.log_budget[0] if b.log_budget is not None else 0 for b in bots]
                try:
                    t0 = time.monotonic()
                    try:
                        watch = self.viewers.watch(game.game_id) if self.viewers is not None else None
                        result = await play_game(
                            unit.spec(game), bots, self.log_dir, compress=unit.compress, watch=watch
                        )
                    except OSError as exc:
                        raise UserError(
                            f"{self.log_dir}: cannot write the log of {game.game_id}: "
                            f"{exc.strerror or exc}; the games recorded so far are safe: "
                            "fix this and run again to resume"
                        ) from None
                    logged = tuple(
                        was - (b.log_budget[0] if b.log_budget is not None else 0)
                        for was, b in zip(before, bots, strict=True)
                    )
                    deliver(GameDone(game.game_id, result, (time.monotonic() - t0) * 1000.0, stderr_logged=logged))
                finally:
                    if per_game:
                        await pool.close_all()  # closed sessions are not alive: restarted next game
