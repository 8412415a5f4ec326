"""Play one game (or one match of several hands) with running bot sessions.

:func:`play_game` drives the hand machine (:class:`referee.core.machine.HandMachine`,
which holds every rule of the protocol) with trio and real bot processes. This
module only does what needs I/O and a clock:

* feeds the machine what happened, one typed input at a time
  (:meth:`HandMachine.feed` with a :mod:`referee.core.inputs` Struct: a reply,
  a line too long, a timeout, a crash, a failed write, a closed pipe, a stale
  line, a bot dead at the start, ``WRITTEN``);
* writes what the machine hands out (:meth:`HandMachine.take_writes`): one
  non-blocking ``write`` in the usual case; a write that does not fit the pipe
  waits at most its timeout (the seat's wall limit + 0.5 s; 0.5 s for an
  ``error``), and a bot that stops reading its stdin is reported as a
  ``timeout``, a closed stdin as a ``crash``;
* waits for the replies the machine awaits (:attr:`HandMachine.waits`): one
  seat alone, or several (a chickens ``play``) concurrently, each under its own
  limit; times each decision from the moment its ``turn`` was written to the
  moment the reply line is read (wall clock, or the bot's CPU time in "cpu"
  mode under a wall ceiling) and tells the machine what came: a line, a line
  too long, the end of the bot's stdout, or nothing in time;
* after a ``timeout`` reads and reports what the bot still writes (stale
  lines) until the end of the game, for at most min(max(wall limit, 250 ms),
  1 s) after the timeout;
* writes the game log (:mod:`referee.runtime.gamelog`), and kills after the
  game the sessions whose output is out of sync (timeout) or that crashed.

A reply already waiting when the referee gets to run after its deadline is
accepted: the referee's own lateness is not a bot's timeout, up to
``LATE_READ_MS`` past the limit; a reply read later still is judged a timeout
(replay refuses an accepted reply measured later, so both apply one bound).

Sequential reply waits share one cancel scope per hand whose deadline is
re-armed lazily (entering and leaving a cancel scope costs more than the rest
of a decision's bookkeeping): the armed deadline may be early by up to a
quarter of the limit (at most 1 s); when it fires, the decision waits out the
rest of its exact limit under its own scope. Every other await disarms it
first and has its own deadline at its call site.

Cancellation (Ctrl-C): the log gets an ``aborted`` footer and is closed, and
the exception propagates; closing the sessions is the owner's job
(``BotSession.close`` is shielded).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import trio

from referee.core.inputs import (
    WRITTEN,
    Crash,
    DeadAtStart,
    PipeClosed,
    Reply,
    StaleLine,
    Timeout,
    TooLong,
    WriteFailed,
)
from referee.core.machine import HandMachine, Observer, Wait, action_json, share_wins
from referee.core.spec import LATE_READ_MS, GameResult, GameSpec

from .framing import LineTooLong, StreamClosed
from .gamelog import GameLog, log_name
from .session import BotSession

__all__ = ["GameWatch", "action_json", "play_game", "share_wins"]


class GameWatch(Observer, Protocol):
    """Someone watching the game as it is played (the live viewer, :mod:`referee.view.live`): the
    machine's observer, told first the log header of the game (:meth:`begin`, before the first hand)
    and last its result (:meth:`end`; ``interrupted``: the game was cancelled). It must not raise."""

    def begin(self, machine: HandMachine, header: dict[str, Any]) -> None: ...
    def end(self, result: GameResult, interrupted: bool) -> None: ...


# lazy re-arming of the hand's reply deadline: the armed deadline may be early
# by up to this fraction of the move limit, at most SLACK_MAX_S
SLACK_FRACTION = 0.25
SLACK_MAX_S = 1.0

_CLOSED = "closed"


class _Driver:
    def __init__(
        self,
        spec: GameSpec,
        bots: Sequence[BotSession],
        log_dir: str | None,
        compress: bool = False,
        watch: GameWatch | None = None,
    ) -> None:
        self.spec = spec
        self.bots = list(bots)
        HandMachine.validate(spec, len(bots))
        self.watch = watch
        self.log: GameLog | None = None
        if log_dir is not None:
            self.log = GameLog(
                os.path.join(log_dir, log_name(spec.game_id, compress)),
                time.monotonic(),
                max_bytes=spec.policy.max_log_bytes,
                compress=compress,
            )
        self.m = HandMachine(
            spec, [b.name for b in bots], first_ids=[b.next_id for b in bots], sink=self.log, observer=watch
        )
        #: writes taken from the machine and not finished yet (the fast path found a pipe full)
        self.pending: list[tuple[int, bytes, float]] = []
        self._now = trio.lowlevel.current_clock().current_time  # trio's clock, without the run-context lookup
        self.nursery: trio.Nursery | None = None
        self.drains: dict[int, tuple[trio.CancelScope, trio.Event, float]] = {}
        self.partial: dict[int, memoryview] = {}
        self._broken: set[int] = set()  # seats whose stdin the fast write path found closed
        # cpu clocks: each such seat's CPU reading taken just before the referee's latest write to it, so
        # that a decision's CPU time counts from the moment its turn was written, however late the
        # referee gets to wait for the reply (on a loaded machine the bot may think before it does)
        self._cpu_seats = frozenset(i for i in range(spec.players) if spec.clock_for(i).mode == "cpu")
        self._cpu_sent: dict[int, float | None] = {}
        # the hand's reply-deadline scope: its armed deadline and the sequential wait it guards
        self._scope: trio.CancelScope | None = None
        self._armed = math.inf
        self._waiting: tuple[Wait, float] | None = None
        self._stash: tuple[bytes | None, Any] | None = None

    # ------------------------------------------------------------------ run
    async def run(self) -> GameResult:
        m = self.m
        if self.log is not None or self.watch is not None:
            header = m.header([self._seat_info(b) for b in self.bots], _utc_now(), _version())
            if self.log is not None:
                self.log.record(header)
            if self.watch is not None:
                self.watch.begin(m, header)
        finished = False
        try:
            async with trio.open_nursery() as nursery:
                self.nursery = nursery
                for i, b in enumerate(self.bots):
                    if not b.alive:
                        m.feed(DeadAtStart(seat=i, death=b.death))
                m.start()
                while m.playing or m.writes or self.pending:
                    with trio.CancelScope() as scope:
                        self._scope = scope
                        self._armed = math.inf
                        await self._drive()
                    self._scope = None
                    if scope.cancelled_caught:
                        await self._resume_wait()  # a lazily armed deadline fired: finish that decision
                await self._finish_drains()
                nursery.cancel_scope.cancel()
            finished = True
        finally:
            tails = [log_tail(b) for b in self.bots]
            capped = self.log.capped if self.log is not None else False
            result = m.close(
                tails,
                interrupted=not finished,
                log_capped=capped,
                log_path=str(self.log.path) if self.log is not None else None,
            )
            if self.log is not None:
                self.log.close()
            for i, b in enumerate(self.bots):
                b.next_id = m.next_ids()[i]
            if self.watch is not None:
                self.watch.end(result, not finished)
        # sessions whose output is out of sync (timeout) or that crashed are killed now
        for b in self.bots:
            if not b.alive and not b.closed:
                await b.kill()
        return result

    @staticmethod
    def _seat_info(b: BotSession) -> dict[str, Any]:
        hello = b.hello
        return {
            "command": b.spec.command,
            "hello": {"name": hello.name, "version": hello.version} if hello is not None else None,
            "sandbox": b.sandbox_info(),
        }

    async def _drive(self) -> None:
        m = self.m
        now = self._now
        bots = self.bots
        scope = self._scope
        assert scope is not None
        while True:
            if (m.writes or self.pending) and not self._write_fast():
                await self._write_all()
                continue
            waits = m.waits
            if len(waits) == 1:
                w = waits[0]
                seat = w.seat
                if w.clock.mode == "cpu" or seat in self.partial:
                    self._disarm()
                    await self._wait_reply(w)
                    continue
                # the usual case, one seat under a wall clock: the wait for its line arms the hand
                # scope's deadline (lazily) instead of opening a cancel scope of its own
                bot = bots[seat]
                t0 = now()
                limit_ms = w.limit_ms
                deadline = t0 + limit_ms / 1000
                armed = self._armed
                if armed > deadline or armed < deadline - min(limit_ms * SLACK_FRACTION / 1000, SLACK_MAX_S):
                    scope.deadline = self._armed = deadline
                self._waiting = (w, t0)
                try:
                    line = await bot.reader.read_line(True)  # True: the turn was just written
                    early: Any = None
                except LineTooLong as exc:
                    line, early = None, exc
                except StreamClosed:
                    line, early = None, _CLOSED
                if now() >= self._armed and scope.cancel_called:
                    # the armed deadline expired while this reply was on its way: leave through the next
                    # checkpoint and let _resume_wait judge this outcome (nothing is lost or applied twice)
                    self._stash = (line, early)
                    await trio.lowlevel.checkpoint()
                self._waiting = None
                if line is not None:
                    ms = (now() - t0) * 1000
                    if ms <= limit_ms + LATE_READ_MS:
                        data = m.feed(Reply(seat=seat, line=line, ms=ms, lineno=bot.reader.lineno))
                        if data is not None:
                            await self._after_refusal(w, data, t0)
                        continue
                self._disarm()
                await self._wait_reply(w, t0, (line, early))
            elif waits:
                self._disarm()
                async with trio.open_nursery() as n:
                    for w in waits:
                        n.start_soon(self._wait_reply, w)
            elif not m.playing:
                return
            else:  # pragma: no cover - the machine always awaits, writes or has ended
                raise RuntimeError("the hand machine neither writes, awaits nor has ended")

    def _write_fast(self) -> bool:
        """The usual case: every write the machine hands out fits its pipe at once.
        Returns False when one may not: the rest is in :attr:`pending`, and
        :meth:`_write_all` does it."""
        m = self.m
        if self.partial or self.pending:
            return False
        bots = self.bots
        cpu_seats = self._cpu_seats
        while m.writes:  # WRITTEN may hand out more (the next hand)
            writes = m.take_writes()
            for i, (seat, data, timeout_s) in enumerate(writes):
                if cpu_seats and seat in cpu_seats:
                    self._cpu_sent[seat] = bots[seat].cpu_seconds()
                try:
                    sent = bots[seat].try_send(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    sent = -1
                if sent != len(data):
                    # give the rest (or the failure) to the general path, in order
                    rest = writes[i:]
                    if sent < 0:
                        self._broken.add(seat)
                    else:
                        rest[0] = (seat, data[sent:], timeout_s)
                    self.pending = rest
                    return False
            if m.barrier:
                m.feed(WRITTEN)
        return True

    # ------------------------------------------------------------------ writes
    async def _write_all(self) -> None:
        """Write what the machine hands out; report failures; let it go on."""
        m = self.m
        while m.writes or self.pending:
            stuck: list[tuple[int, memoryview, float]] = []
            failed: list[tuple[int, str, str]] = []
            awaited = {w.seat for w in m.waits}
            todo, self.pending = self.pending + m.take_writes(), []
            for seat, data, timeout_s in todo:
                bot = self.bots[seat]
                if seat in self._broken:
                    self._broken.discard(seat)
                    failed.append((seat, "crash", ""))
                    continue
                if seat in self.partial:  # an earlier write to it is still unfinished: keep the order
                    self.partial[seat] = memoryview(bytes(self.partial[seat]) + data)
                    continue
                if seat in self._cpu_seats:
                    self._cpu_sent[seat] = bot.cpu_seconds()
                try:
                    sent = bot.try_send(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    failed.append((seat, "crash", ""))
                    continue
                if sent < len(data):
                    rest = memoryview(data)[sent:]
                    if seat in awaited:
                        self.partial[seat] = rest  # finished by its reply wait, under its own limit
                    else:
                        stuck.append((seat, rest, timeout_s))
            if stuck:
                self._disarm()
                results: dict[int, tuple[str, str] | None] = {}

                async def finish(out: dict[int, tuple[str, str] | None], seat: int, rest: memoryview, t: float) -> None:
                    out[seat] = await self._send_rest(seat, rest, t)

                async with trio.open_nursery() as n:
                    for seat, rest, timeout_s in stuck:
                        n.start_soon(finish, results, seat, rest, timeout_s)
                failed.extend((seat, *res) for seat, res in sorted(results.items()) if res is not None)
            for seat, fault, detail in failed:
                bot = self.bots[seat]
                bot.stdin_failed()
                bot.lost()
                if fault == "crash" and not detail:
                    self._disarm()
                    detail = f"its stdin is closed ({await bot.exit_description()})"
                m.feed(WriteFailed(seat=seat, fault=fault, detail=detail))  # type: ignore[arg-type]
        m.feed(WRITTEN)

    async def _send_rest(self, seat: int, rest: memoryview, timeout_s: float) -> tuple[str, str] | None:
        """Finish a write; None when done, else (fault, detail)."""
        bot = self.bots[seat]
        with trio.move_on_after(timeout_s) as scope:
            try:
                if not len(rest):
                    raise trio.BrokenResourceError
                await bot.send_bytes(rest)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return "crash", f"its stdin is closed ({await bot.exit_description()})"
        if scope.cancelled_caught:
            return "timeout", "it stopped reading its stdin (a write to it blocked past the move limit)"
        return None

    async def _write_now(self, seat: int, data: bytes | None) -> None:
        """Write an ``error`` the machine returned for a seat at once (at most 0.5 s)."""
        if data is None:
            return
        bot = self.bots[seat]
        if not bot.pipe_open or bot.closed:
            self.m.feed(PipeClosed(seat=seat))
            return
        self._disarm()
        with trio.move_on_after(0.5) as scope:
            try:
                await bot.send_bytes(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                bot.stdin_failed()
                self.m.feed(PipeClosed(seat=seat))
        if scope.cancelled_caught:
            bot.stdin_failed()
            self.m.feed(PipeClosed(seat=seat))

    # ------------------------------------------------------------------ replies
    async def _resume_wait(self) -> None:
        """Finish the sequential decision whose wait the hand scope's deadline
        interrupted: wait out the rest of its exact limit, then judge it."""
        waiting, self._waiting = self._waiting, None
        if waiting is None:  # pragma: no cover - every other await disarms the scope first
            raise RuntimeError("a reply deadline fired outside a reply wait")
        w, t0 = waiting
        stash, self._stash = self._stash, None
        await self._wait_reply(w, t0, stash, resumed=True)

    async def _after_refusal(self, w: Wait, data: bytes, t0: float) -> None:
        """A refused reply: write the machine's ``error``; a forgiven one (retry)
        leaves the turn awaited, so go on waiting for it."""
        self._disarm()
        await self._write_now(w.seat, data)
        if self.m.awaiting(w.seat) is w:
            await self._wait_reply(w, t0, None, resumed=True)

    async def _wait_reply(
        self, w: Wait, t0: float | None = None, first: tuple[bytes | None, Any] | None = None, resumed: bool = False
    ) -> None:
        """The general reply loop: cpu clock, retries, timeouts, crashes, long lines.
        Returns once the machine no longer awaits this turn. ``first``: an outcome
        already read (line or error; both None = nothing yet)."""
        m = self.m
        seat = w.seat
        bot = self.bots[seat]
        if seat in self.partial and not await self._send_partial(seat, w):
            return
        now = self._now
        if t0 is None:
            t0 = now()
        clock = w.clock
        cpu_mode = clock.mode == "cpu"
        wall_limit = (clock.ceiling_ms() if cpu_mode else w.limit_ms) / 1000
        deadline = t0 + wall_limit
        started = None
        if cpu_mode:  # from the write of the turn (a resumed wait: from now, as before a retry)
            started = self._cpu_sent.pop(seat, None) if not resumed else None
            if started is None:
                started = bot.cpu_seconds()
        if started is None:  # wall clock (or the machine cannot tell CPU time: wall time then)
            cpu_mode = False
            deadline = t0 + w.limit_ms / 1000
        cpu0 = started or 0.0
        fresh = not resumed and first is None
        while m.awaiting(seat) is w:
            line: bytes | None = None
            err: Any = None
            timed_out = False
            if first is not None:
                line, err = first
                first = None
                if line is None and err is None:
                    timed_out = now() >= deadline
                    if not timed_out:
                        continue
            elif cpu_mode:
                # wake up at the earliest moment the CPU budget could be spent, re-check, repeat
                while True:
                    used = (bot.cpu_seconds() or 0.0) - cpu0
                    remaining = w.limit_ms / 1000 - used
                    if remaining <= 0:
                        timed_out = True
                        break
                    with trio.move_on_at(min(deadline, now() + remaining)):
                        line, err = await self._read(bot, fresh)
                        break
                    if now() >= deadline:
                        timed_out = True
                        break
            else:
                with trio.move_on_at(deadline):
                    line, err = await self._read(bot, fresh)
                if line is None and err is None:
                    timed_out = True
            fresh = False
            wall_ms = (now() - t0) * 1000
            ms = wall_ms
            late = line is not None and wall_ms > (wall_limit * 1000 if cpu_mode else w.limit_ms) + LATE_READ_MS
            if cpu_mode:
                ms = max(0.0, ((bot.cpu_seconds() or 0.0) - cpu0) * 1000)
                if line is not None and ms > w.limit_ms:
                    timed_out = True
            if timed_out or late:
                detail = _timeout_detail(w, wall_limit * 1000 if cpu_mode else None, ms, wall_ms)
                await self._time_out(w, t0, detail + (_late_read(wall_ms) if late and not timed_out else ""), ms)
                return
            if err is _CLOSED:
                bot.stdin_failed()
                bot.lost()
                detail = (
                    f"the bot closed its stdout during turn {w.turn_id} "
                    f"({await bot.exit_description()}){bot.stderr_hint()}"
                )
                m.feed(Crash(seat=seat, detail=detail, ms=ms))
                return
            if isinstance(err, LineTooLong):
                data = m.feed(TooLong(seat=seat, head=err.head, detail=str(err), ms=ms, lineno=err.lineno))
            else:
                assert line is not None
                wall = wall_ms if cpu_mode else None
                data = m.feed(Reply(seat=seat, line=line, ms=ms, wall_ms=wall, lineno=bot.reader.lineno))
            if data is not None:
                await self._write_now(seat, data)

    async def _time_out(self, w: Wait, t0: float, detail: str, ms: float) -> None:
        """Judge the awaited turn a timeout: tell the machine, write what it answers, and
        read what the bot still writes as stale lines (while its pipe is open)."""
        seat = w.seat
        bot = self.bots[seat]
        bot.lost()
        data = self.m.feed(Timeout(seat=seat, detail=detail, ms=ms))
        await self._write_now(seat, data)
        if bot.pipe_open and not bot.closed:
            self._start_drain(seat, t0, w)

    async def _send_partial(self, seat: int, w: Wait) -> bool:
        """Send the rest of the turn's write that was cut short before this wait;
        ``False`` when that failed (the machine has been told: a failed write)."""
        bot = self.bots[seat]
        res = await self._send_rest(seat, self.partial.pop(seat), w.clock.ceiling_ms() / 1000 + 0.5)
        if res is None:
            return True
        bot.stdin_failed()
        bot.lost()
        self.m.feed(WriteFailed(seat=seat, fault=res[0], detail=res[1]))  # type: ignore[arg-type]
        return False

    async def _read(self, bot: BotSession, fresh: bool) -> tuple[bytes | None, Any]:
        """The bot's next line: ``(line, None)``, ``(None, LineTooLong)`` or
        ``(None, "closed")``. Cancellation propagates; partial data stays buffered."""
        try:
            return await bot.reader.read_line(fresh), None
        except LineTooLong as exc:
            return None, exc
        except StreamClosed:
            return None, _CLOSED

    def _disarm(self) -> None:
        """Clear the hand scope's armed deadline before an await that is not a
        sequential reply wait (it has its own deadline at its call site)."""
        scope = self._scope
        if scope is not None and self._armed != math.inf:
            scope.deadline = math.inf
            self._armed = math.inf

    # ------------------------------------------------------------------ stale lines
    def _start_drain(self, seat: int, t_turn: float, w: Wait) -> None:
        assert self.nursery is not None
        bot = self.bots[seat]
        until = self._now() + min(max(w.clock.ceiling_ms(), 250), 1000) / 1000
        scope = trio.CancelScope()
        done = trio.Event()
        self.drains[seat] = (scope, done, until)
        self.nursery.start_soon(self._drain, seat, bot, scope, done, t_turn)

    async def _drain(
        self, seat: int, bot: BotSession, scope: trio.CancelScope, done: trio.Event, t_turn: float
    ) -> None:
        """Read and report what a timed-out bot still writes (its late reply is stale)."""
        with scope:
            try:
                while True:
                    try:
                        line = await bot.reader.read_line()
                    except LineTooLong:
                        continue
                    ms = (self._now() - t_turn) * 1000
                    data = self.m.feed(StaleLine(seat=seat, line=line, ms=ms, lineno=bot.reader.lineno))
                    if data is not None:
                        with trio.move_on_after(0.5):
                            try:
                                await bot.send_bytes(data)
                            except (trio.BrokenResourceError, trio.ClosedResourceError):
                                bot.stdin_failed()
                                self.m.feed(PipeClosed(seat=seat))
                        done.set()
            except StreamClosed:
                pass
            finally:
                done.set()

    async def _finish_drains(self) -> None:
        for scope, done, until in self.drains.values():
            with trio.move_on_at(until):
                await done.wait()
            scope.cancel()


def _late_read(wall_ms: float) -> str:
    """What a timeout's detail adds when the reply came but was read past ``LATE_READ_MS``."""
    return (
        f"; its reply was read only after {wall_ms:.0f} ms, more than {LATE_READ_MS:.0f} ms "
        "past the limit: the referee could not run in time (an overloaded host), and a "
        "reply read that late cannot be shown to have come in time"
    )


def _timeout_detail(w: Wait, ceiling_ms: float | None, ms: float, wall_ms: float) -> str:
    """A timeout's detail; ``ceiling_ms``: the wall ceiling of a cpu clock (None: a wall clock)."""
    clock = w.clock
    what = "CPU time" if ceiling_ms is not None else "time"
    lim = f"{w.limit_ms:.0f} ms" + (" (bank)" if clock.bank_ms is not None and w.limit_ms < clock.move_ms else "")
    # the CPU actually used tells a CPU-limit timeout from a wall-ceiling one (overloaded machine)
    ceiling = (
        f", wall ceiling {ceiling_ms:.0f} ms (it used {ms:.0f} ms of CPU in {wall_ms:.0f} ms)"
        if ceiling_ms is not None
        else ""
    )
    return f"no reply to turn {w.turn_id} ({w.decide}) within the {what} limit of {lim}{ceiling}"


#: what a game log keeps of a bot's stderr once its budget (``BotSession.log_budget``) is spent
OVER_BUDGET_TAIL = 1024


def log_tail(bot: BotSession) -> str:
    """The stderr tail a game log records for ``bot``: :meth:`stderr_tail`, charged to
    its ``log_budget`` (bytes for the night, shared by its processes); once that is
    spent, only the last :data:`OVER_BUDGET_TAIL` bytes, after a line saying so."""
    tail = bot.stderr_tail()
    budget = bot.log_budget
    if budget is None:
        return tail
    size = len(tail.encode("utf-8", "replace"))
    if size <= budget[0]:
        budget[0] -= size
        return tail
    budget[0] = 0
    kept = tail[-OVER_BUDGET_TAIL:]
    return (
        f"[... {size - len(kept)} bytes of stderr not logged: the bot's log budget for the night is spent ...]\n{kept}"
    )


def _utc_now() -> str:
    """The wall-clock date and time now, UTC, ISO 8601 to the millisecond (the
    log header's ``started``: record times ``t`` are relative to the game's start)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _version() -> str:
    from referee import __version__

    return __version__


async def play_game(
    spec: GameSpec,
    bots: Sequence[BotSession],
    log_dir: Path | str | None = None,
    *,
    compress: bool = False,
    watch: GameWatch | None = None,
) -> GameResult:
    """Play ``spec`` with ``bots[i]`` in seat ``i``; return the result. The log
    goes to ``log_dir/<game_id>.jsonl`` (``.jsonl.zst`` with ``compress``).
    ``watch``: told of every change as the game is played (:class:`GameWatch`).

    Bot misbehaviour never raises: it becomes a fault in the result. Raises
    ``ValueError`` if the number of sessions (or of ``spec.seat_clocks``) does
    not match ``spec.players`` or a clock is invalid, and ``OSError`` if the
    log cannot be written. On cancellation the log is closed with an
    ``aborted`` footer and the exception propagates; closing the sessions is
    the caller's job (``BotSession.close`` is shielded).
    """
    driver = _Driver(spec, bots, os.fspath(log_dir) if log_dir is not None else None, compress, watch)
    return await driver.run()
