"""The bot pool: the bot processes of one unit's lineup, kept alive across its games.

``async with open_pool(unit, given_up) as pool`` hosts one
:class:`~referee.runtime.BotSession` per lineup position; ``await
pool.seat(positions)`` returns the sessions for a game's seats, starting the
missing ones and restarting the dead ones first (concurrently). On the way out
every session is closed, also on cancellation (closing is shielded and always
reaps the process group), so no bot process outlives its pool.

Bots that failed the league's start check under ``[faults] broken_bot =
"forfeit"`` are never started: their dead session from that check (``given_up``)
is seated everywhere, and ``play_game`` records a crash for the seat and lets
the fallback play it. A bot that passed the start check but fails to *restart*
later keeps a dead session for the next game (the same result), so one flaky
bot cannot stop a league night; it is tried again for the game after.

Errors: :func:`start_bot` raises :class:`BotStartFailed` (a
:class:`~referee.errors.UserError` that says which bot, why and how to check
it); :meth:`BotPool.seat` raises it only for a bot that cannot start at all
and has no earlier session to stand in for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import trio

from referee.errors import UserError
from referee.league.work import Entrant
from referee.runtime import BotError, BotSession


class BotStartFailed(UserError):
    """Bot ``index`` (of ``League.bots``) could not start. ``dead`` is its dead
    session when the process ran but failed its ``hello`` (it holds the exit
    status and the stderr tail, for the fault a game records); None when the
    command could not be started at all."""

    def __init__(self, message: str, index: int, dead: BotSession | None = None) -> None:
        super().__init__(message)
        self.index = index
        self.dead = dead


async def start_bot(entrant: Entrant, nursery: trio.Nursery, *, max_line: int) -> BotSession:
    """Start one bot and let it answer ``hello`` within its ``startup_ms``;
    ``nursery`` hosts its stderr drain. Raises :class:`BotStartFailed`; if
    cancelled, the process is killed."""
    spec = entrant.bot
    try:
        return await BotSession.start(spec, entrant.clock, nursery, max_line=max_line)
    except BotError as exc:
        detail = exc.detail.removeprefix("cannot start: ")
        cause = _likely_cause(spec, exc)
        raise BotStartFailed(
            f"bot '{spec.name}' (bots[{entrant.index}]) could not start: {detail}\n"
            + (f"  likely cause: {cause}\n" if cause else "")
            + f"  command: {spec.command!r}, cwd: {spec.cwd}\n"
            "  (commands run in cwd, which is relative to the config file; try: referee check-bot -- COMMAND)",
            entrant.index,
            exc.session,
        ) from None
    except OSError as exc:
        raise BotStartFailed(
            f"bot '{spec.name}' could not start: {spec.command!r} in {spec.cwd}: {exc.strerror or exc}", entrant.index
        ) from None


def _likely_cause(spec: Any, exc: BotError) -> str | None:
    """What a dead bot's output says about why it failed its hello (check-bot's words,
    :func:`referee.runtime.runtimes.likely_cause`): the error's line, the rest of what it
    wrote on stdout before it died, and its stderr."""
    from referee.runtime.runtimes import likely_cause

    session = exc.session
    if session is None:
        return None
    pending = bytes(getattr(session.reader, "_buf", b"")).decode("utf-8", "replace")  # lines read but not taken
    return likely_cause(f"{exc.detail}\n{pending}", session.stderr_tail(), command=spec.command, limits=spec.limits)


async def close_all(sessions: Sequence[BotSession | None]) -> None:
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


class BotPool:
    """The sessions of one lineup (position ``j`` plays ``lineup[j]``). Made by :func:`open_pool`."""

    def __init__(
        self, lineup: Sequence[Entrant], nursery: trio.Nursery, *, max_line: int, given_up: Mapping[int, BotSession]
    ) -> None:
        self.lineup = tuple(lineup)
        self.sessions: list[BotSession | None] = [None] * len(self.lineup)
        self._nursery = nursery
        self._max_line = max_line
        self._given_up = given_up
        #: the sessions the last renew() replaced: a bot that cannot start at all keeps its old (closed) one
        self._replaced: list[BotSession | None] = [None] * len(self.lineup)
        #: the next session cut's processes, started ahead (:meth:`prestart`), and when they are all up
        self._next: tuple[list[BotSession | None], trio.Event, trio.CancelScope] | None = None

    async def seat(self, positions: Sequence[int]) -> list[BotSession]:
        """The sessions for a game whose seat ``s`` is played by position
        ``positions[s]``, after starting every missing or dead one (a crashed
        process is reaped first)."""
        missing = []
        for j, sess in enumerate(self.sessions):
            if sess is not None and self.lineup[j].index in self._given_up:
                continue  # never passed hello: stays dead, its seats forfeit
            if sess is None or not sess.alive:
                if sess is not None:
                    await sess.close()  # reaps a crashed process; idempotent
                missing.append(j)
        if missing:
            async with trio.open_nursery() as starters:
                for j in missing:
                    starters.start_soon(self._start, j)
        return [self._session(p) for p in positions]

    def _session(self, j: int) -> BotSession:
        sess = self.sessions[j]
        if sess is None:
            raise RuntimeError(f"lineup position {j} has no session after the starts")  # a bug in seat()
        return sess

    async def _start(self, j: int) -> None:
        entrant = self.lineup[j]
        dead = self._given_up.get(entrant.index)
        if dead is not None:
            self.sessions[j] = dead
            return
        try:
            self.sessions[j] = await start_bot(entrant, self._nursery, max_line=self._max_line)
        except BotStartFailed as exc:
            if exc.dead is not None:
                self.sessions[j] = exc.dead  # its crash (exit status, stderr) goes in the game's fault
                return
            earlier = self.sessions[j] or self._replaced[j]
            if earlier is None:
                raise  # cannot start at all, nothing to seat instead
            await earlier.close()  # (renew() may still be closing it in the background: this waits for that)
            self.sessions[j] = earlier
            earlier.death = str(exc).split("\n")[0]  # the old dead session stands in, saying why

    async def close_all(self) -> None:
        """Close every session (the next :meth:`seat` starts fresh ones)."""
        await close_all(self.sessions)

    def prestart(self) -> None:
        """Start the processes of the next session cut now, in the background,
        while the current ones play (a no-op while such a set exists): the
        :meth:`renew` at the cut then finds them ready instead of waiting for
        their starts. They get nothing but ``hello`` before the cut, so each
        still plays one rotation only. A bot whose early start fails is
        started again at the cut (and fails there as :meth:`seat` says)."""
        if self._next is not None:
            return
        sessions: list[BotSession | None] = [None] * len(self.lineup)
        self._next = (sessions, trio.Event(), trio.CancelScope())
        self._nursery.start_soon(self._start_ahead, *self._next)

    async def _start_ahead(self, sessions: list[BotSession | None], done: trio.Event, scope: trio.CancelScope) -> None:
        async def one(j: int) -> None:
            entrant = self.lineup[j]
            if entrant.index in self._given_up:
                return  # seated dead at the cut, as always
            try:
                sessions[j] = await start_bot(entrant, self._nursery, max_line=self._max_line)
            except BotStartFailed as exc:
                sessions[j] = exc.dead  # its crash stands in (or None: tried again at the cut)

        try:
            with scope:
                async with trio.open_nursery() as starters:
                    for j in range(len(self.lineup)):
                        starters.start_soon(one, j)
        finally:
            done.set()

    async def renew(self) -> None:
        """Replace every session by a fresh process (a session cut, see
        :func:`referee.league.work.session_order`): those of :meth:`prestart`
        when there are (waiting for the last of them), else new ones. The old
        ones are closed in the background, in the pool's nursery (``bye``, their
        grace, the kill and the sandbox's release: about 35 ms at a cut that the
        table no longer waits for), so the cut costs at most one start and
        usually nothing; they get nothing but ``bye``, and the pool's exit waits
        for them, so none outlives it. Raises :class:`BotStartFailed` as
        :meth:`seat` does; the old sessions are closed either way (shielded)."""
        fresh: list[BotSession | None] = [None] * len(self.lineup)
        if self._next is not None:
            fresh, done, _scope = self._next
            self._next = None
            await done.wait()
        old, self.sessions = self.sessions, fresh
        self._replaced = old
        self._nursery.start_soon(close_all, old)  # in the background: the table plays on meanwhile
        await self.seat(range(len(self.lineup)))

    async def aclose(self) -> None:
        """Close every session, those started ahead included (shielded)."""
        with trio.CancelScope(shield=True):
            if self._next is not None:
                ahead, done, scope = self._next
                self._next = None
                scope.cancel()
                await done.wait()
                await close_all(ahead)
            await close_all(self.sessions)


@asynccontextmanager
async def open_pool(
    lineup: Sequence[Entrant], *, max_line: int, given_up: Mapping[int, BotSession] | None = None
) -> AsyncIterator[BotPool]:
    """A :class:`BotPool` for ``lineup``; every session is closed on the way
    out (shielded, also on cancellation). ``given_up``: the dead sessions of
    the bots given up before the night, by ``Entrant.index``."""
    async with trio.open_nursery() as nursery:
        pool = BotPool(lineup, nursery, max_line=max_line, given_up=given_up or {})
        try:
            yield pool
        finally:
            await pool.aclose()
            nursery.cancel_scope.cancel()
