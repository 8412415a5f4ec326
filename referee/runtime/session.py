"""A bot session: a bot process that has passed the ``hello`` handshake.

:class:`BotSession` is a :class:`referee.runtime.process.BotProcess` (the one
type for a running bot: sandboxed spawn, stderr drain, framed reads, the
group kill, its state) plus the protocol's start and end: the ``hello``
handshake (:meth:`BotSession.start`), turn ids per connection, ``error``
messages and ``bye`` (:meth:`BotSession.close`).

Shutdown (:meth:`close`, :meth:`kill`) runs in a shielded cancel scope: it
still completes when the caller is cancelled (Ctrl-C), sends SIGKILL to the
whole process group and always reaps the process, so no process of a bot
outlives its session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from protocol.messages import ENCODER, PROTOCOL_VERSION, BotHello
from referee.core.errors import BotCrashed, BotError, BotMalformed, BotRefused, BotTimeout, Problem

from .framing import LineTooLong, StreamClosed, decode_line
from .process import STDERR_TAIL, BotProcess, ProcState, close_pipes, kill_group
from .spec import BotSpec, ClockSpec

__all__ = [
    "STDERR_TAIL",
    "BotLineup",
    "BotSession",
    "close_pipes",
    "hello_line",
    "kill_group",
    "open_bots",
    "start_bots",
]


def _referee_version() -> str:
    from referee import __version__

    return __version__


def hello_line(name: str) -> bytes:
    """The referee's ``hello`` to a bot named ``name``, with its newline: one definition for the
    league's sessions and check-bot's probes (a bot cannot tell them apart by it)."""
    return (
        ENCODER.encode({"type": "hello", "protocol": PROTOCOL_VERSION, "name": name, "referee": _referee_version()})
        + b"\n"
    )


class BotSession(BotProcess):
    """A bot process that has passed the ``hello`` handshake.

    Attributes (besides :class:`BotProcess`'s): ``clock``, ``hello`` (the
    bot's own hello: its ``name`` and ``version``), ``alive`` (False once it
    crashed, timed out or was closed: the caller starts a new session for the
    next game), ``next_id`` (turn ids increase per connection), ``death`` (why
    a dead session is dead, when its owner knows more than the process did -
    e.g. the league's failed restart: exit status and stderr; ``play_game``
    puts it in the fault it records).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._init_session()

    def _init_session(self) -> None:
        """A session's own attributes (its constructor's and :meth:`never_started`'s)."""
        self.clock = ClockSpec()
        self.hello: BotHello | None = None
        self.next_id = 1
        self.death: str | None = None
        self._closing: trio.Event | None = None  # set once close() has finished (see close)
        #: the bytes of stderr this bot may still have copied into game logs (shared by every
        #: process of the bot in a night: its owner's per-bot budget, see play_game); None: no budget
        self.log_budget: list[int] | None = None

    # -- start ---------------------------------------------------------------
    @classmethod
    async def start(
        cls,
        spec: BotSpec,
        clock: ClockSpec | None = None,
        nursery: trio.Nursery | None = None,
        *,
        max_line: int = 65536,
    ) -> BotSession:
        """Start the bot and do the ``hello`` handshake within ``clock.startup_ms``.

        ``nursery`` hosts the stderr drain task (it must outlive the session;
        if it is None, a system task is used). Raises :class:`BotStartError`
        (command not found / not executable / bad cwd), :class:`BotTimeout`,
        :class:`BotCrashed`, :class:`BotMalformed` or :class:`BotRefused`
        (protocol version mismatch); in every failure case the process group
        has been killed and reaped. If cancelled, the process is killed too.
        """
        clock = clock or ClockSpec()
        self = await cls.spawn(spec, nursery, max_line=max_line)
        self.clock = clock
        try:
            await self._handshake(clock.startup_ms)
        except BaseException as exc:
            await self.kill()
            if isinstance(exc, BotError):
                # the process ran but failed the handshake: the dead session
                # (alive False, its stderr tail kept) rides along, so that a
                # league can seat it and let play_game record the crash
                self.death = exc.detail
                exc.session = self
            raise
        return self

    @classmethod
    def never_started(cls, spec: BotSpec, death: str) -> BotSession:
        """The dead session of a bot that has no process at all (its build failed, its program is
        missing) and is given up before the night: seated like a bot that crashed before the game
        (``death`` says why, in the fault the game records), never started, nothing to close."""
        self = cls.__new__(cls)
        self._init_state(spec, None, 0, ProcState.CLOSED)
        self._init_session()
        self._stderr_done.set()  # no stderr to drain
        self.death = death
        return self

    async def _handshake(self, startup_ms: int) -> None:
        hello = hello_line(self.name)
        with trio.move_on_after(startup_ms / 1000) as scope:
            try:
                await self.send_bytes(hello)
                line = await self.reader.read_line()
            except (trio.BrokenResourceError, trio.ClosedResourceError, StreamClosed):
                status = await self.exit_description(0.5)
                await self.stderr_settled(0.2)
                raise BotCrashed(
                    f"exited ({status}) before answering hello{self.stderr_hint()}", bot=self.name
                ) from None
            except LineTooLong as exc:
                raise BotMalformed(f"hello: {exc}", bot=self.name, problem=Problem("too_long")) from None
        if scope.cancelled_caught:
            raise BotTimeout(f"no hello within the startup limit of {startup_ms} ms{self.stderr_hint()}", bot=self.name)
        msg = decode_line(line, self.reader.lineno, bot=self.name)
        if not isinstance(msg, BotHello):
            raise BotMalformed(
                f"line {self.reader.lineno}: expected a hello reply, got {type(msg).__name__}",
                bot=self.name,
                problem=Problem("wrong_reply", expected="hello", got=type(msg).__name__),
            )
        if msg.protocol != PROTOCOL_VERSION:
            detail = (
                f"bot speaks protocol version {msg.protocol}, this referee speaks protocol version "
                f"{PROTOCOL_VERSION}; update the bot to protocol {PROTOCOL_VERSION}"
            )
            await self.send_error("malformed", detail)
            raise BotRefused(detail, bot=self.name)
        self.hello = msg

    # -- I/O -----------------------------------------------------------------
    async def send_error(self, fault: str, detail: str, game: str | None = None, turn_id: int | None = None) -> None:
        """Best effort ``error`` message (ignored if the pipe is closed or the bot does not read)."""
        msg: dict[str, Any] = {"type": "error", "fault": fault, "detail": detail}
        if game is not None:
            msg["game"] = game
        if turn_id is not None:
            msg["id"] = turn_id
        if not self.pipe_open:
            return
        with trio.move_on_after(0.5):
            try:
                await self.send_bytes(ENCODER.encode(msg) + b"\n")
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self.stdin_failed()

    # -- shutdown ----------------------------------------------------------------
    async def close(self) -> None:
        """Say ``bye``, close stdin, give the bot ``clock.grace_ms`` to exit, then
        SIGKILL its whole process group and reap it. Idempotent, also while another
        task is closing it (that call then waits for the first: ``bye`` is said once,
        and neither returns before the process is reaped); shielded from
        cancellation; never raises for a bot that is already gone."""
        if self.closed:
            return
        with trio.CancelScope(shield=True):
            if self._closing is not None:
                await self._closing.wait()
                return
            self._closing = trio.Event()
            try:
                if self.alive and self.pipe_open:
                    with trio.move_on_after(self.clock.grace_ms / 1000):
                        try:
                            await self.send_bytes(b'{"type":"bye"}\n')
                        except (trio.BrokenResourceError, trio.ClosedResourceError):
                            pass
                        else:
                            await self.close_stdin()
                        await self.process.wait()
                await self.kill()
            finally:
                self._closing.set()


async def start_bots(
    specs: list[BotSpec], clock: ClockSpec, nursery: trio.Nursery, *, max_line: int = 65536
) -> list[BotSession]:
    """Start several bots concurrently. If any fails, the others are closed and
    the first :class:`BotError` is raised."""
    sessions: list[BotSession | None] = [None] * len(specs)
    errors: list[BotError] = []

    async def one(i: int) -> None:
        try:
            sessions[i] = await BotSession.start(specs[i], clock, nursery, max_line=max_line)
        except BotError as exc:
            errors.append(exc)

    try:
        async with trio.open_nursery() as n:
            for i in range(len(specs)):
                n.start_soon(one, i)
    except BaseException:
        for s in sessions:
            if s is not None:
                await s.kill()
        raise
    if errors:
        for s in sessions:
            if s is not None:
                await s.close()
        raise errors[0]
    return [s for s in sessions if s is not None]


class BotLineup:
    """A fixed lineup of running bots, made by :func:`open_bots`: ``sessions[i]``
    plays ``specs[i]``; ``nursery`` is the one their sessions run in (a caller may
    start more bots there: it closes those itself)."""

    def __init__(
        self, specs: list[BotSpec], clock: ClockSpec, nursery: trio.Nursery, sessions: list[BotSession], max_line: int
    ) -> None:
        self.specs = specs
        self.clock = clock
        self.nursery = nursery
        self.sessions = sessions
        self.max_line = max_line

    async def restart(self, i: int) -> BotSession:
        """Replace bot ``i`` by a fresh process of the same spec (the old one closed).
        Raises :class:`BotError` if the new one cannot start."""
        await self.sessions[i].close()
        self.sessions[i] = await BotSession.start(self.specs[i], self.clock, self.nursery, max_line=self.max_line)
        return self.sessions[i]


@asynccontextmanager
async def open_bots(specs: list[BotSpec], clock: ClockSpec, *, max_line: int = 65536) -> AsyncIterator[BotLineup]:
    """Start the bots of ``specs`` concurrently (:func:`start_bots`) and give
    them as a :class:`BotLineup`; none of their processes outlives the block.

    If one cannot start, the others are closed and its :class:`BotError` is
    raised on entry. On a normal exit each bot is told ``bye`` and closed (its
    ``grace_ms``, then SIGKILL); when the block raises - an exception, or
    :exc:`trio.Cancelled` because an enclosing scope was cancelled - every
    process is killed at once instead. Either way the shutdown runs in a
    shielded scope, so a cancellation arriving during it cannot leave a process
    behind; the exception (or the cancellation) then propagates unchanged (not
    wrapped in an exception group by the nursery the bots run in; only several
    exceptions at once come out as a group).
    """
    try:
        async with trio.open_nursery() as nursery:
            lineup = BotLineup(
                specs, clock, nursery, await start_bots(specs, clock, nursery, max_line=max_line), max_line
            )
            ok = False
            try:
                yield lineup
                ok = True
            finally:
                with trio.CancelScope(shield=True):
                    for s in lineup.sessions:
                        if ok:
                            await s.close()
                        else:
                            await s.kill()
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # the nursery wraps what the block (or the start) raised: give the caller that one exception
        if len(group.exceptions) == 1 and not isinstance(group.exceptions[0], BaseExceptionGroup):
            raise group.exceptions[0] from None
        raise
