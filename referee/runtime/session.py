"""One running bot process: start, hello handshake, framed I/O, shutdown.

A :class:`BotSession` owns a subprocess started in its own session and
process group (``start_new_session=True``) with pipes on stdin/stdout/stderr.
A background task (in the nursery given to :meth:`BotSession.start`) drains
stderr into a 64 KiB ring buffer, so a bot flooding stderr never blocks.

Shutdown (:meth:`close`, :meth:`kill`) runs in a shielded cancel scope: it
still completes when the caller is cancelled (Ctrl-C), sends SIGKILL to the
whole process group and always reaps the process, so no process of a bot
outlives its session.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
from typing import Any

import msgspec
import trio

from protocol.messages import ENCODER, PROTOCOL_VERSION, BotHello

from referee.core.errors import BotCrashed, BotError, BotMalformed, BotRefused, BotStartError, BotTimeout
from .framing import LineReader, LineTooLong, StreamClosed, decode_line
from .sandbox import plan_spawn
from .spec import BotSpec, ClockSpec

STDERR_TAIL = 65536


def _referee_version() -> str:
    from referee import __version__

    return __version__


class BotSession:
    """A bot process that has passed the ``hello`` handshake.

    Attributes: ``spec``, ``name`` (the league's name for it), ``hello`` (the
    bot's own hello: its ``name`` and ``version``), ``pid`` (also its process
    group id), ``alive`` (False once it crashed, timed out or was closed: the
    caller starts a new session for the next game), ``next_id`` (turn ids
    increase per connection), ``death`` (why a dead session is dead, when its
    owner knows more than the process did - e.g. the league's failed restart:
    exit status and stderr; ``play_game`` puts it in the fault it records).
    """

    def __init__(self, spec: BotSpec, clock: ClockSpec, process: trio.Process, max_line: int) -> None:
        self.spec = spec
        self.name = spec.name
        self.clock = clock
        self.process = process
        self.pid: int = process.pid
        self.alive = True
        self.pipe_open = True
        self.hello: BotHello | None = None
        self.next_id = 1
        self.reader = LineReader(process.stdout, max_line)  # type: ignore[arg-type]
        self._stdin = process.stdin
        self._stderr = bytearray()
        self._stderr_dropped = 0  # bytes of stderr discarded from the front of the ring
        self._stderr_scope: trio.CancelScope | None = None
        self._stderr_done = trio.Event()
        self._closed = False
        self.death: str | None = None

    # -- start ---------------------------------------------------------------
    @classmethod
    async def start(
        cls, spec: BotSpec, clock: ClockSpec | None = None, nursery: trio.Nursery | None = None, *, max_line: int = 65536
    ) -> "BotSession":
        """Start the bot and do the ``hello`` handshake within ``clock.startup_ms``.

        ``nursery`` hosts the stderr drain task (it must outlive the session;
        if it is None, a system task is used). Raises :class:`BotStartError`
        (command not found / not executable / bad cwd), :class:`BotTimeout`,
        :class:`BotCrashed`, :class:`BotMalformed` or :class:`BotRefused`
        (protocol version mismatch); in every failure case the process group
        has been killed and reaped. If cancelled, the process is killed too.
        """
        clock = clock or ClockSpec()
        # the sandbox (referee/runtime/sandbox.py): temp cwd, scrubbed env, rlimits,
        # PID/network namespaces, a watcher that kills the bot if the referee dies
        plan = plan_spawn(spec)
        argv = plan.argv
        try:
            try:
                process = await trio.lowlevel.open_process(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=plan.cwd,
                    env=plan.env,
                    start_new_session=True,
                    preexec_fn=plan.preexec,
                )
            except BaseException:
                plan.cleanup()
                raise
        except FileNotFoundError as exc:
            missing = spec.cwd if spec.cwd and not os.path.isdir(spec.cwd) else (exc.filename or argv[0])
            raise BotStartError(
                f"cannot start: {missing!r} not found (command {argv!r}); check the path or use a shell string",
                bot=spec.name,
            ) from None
        except PermissionError:
            if _is_directory(argv[0], spec.cwd):
                raise BotStartError(f"cannot start: {argv[0]!r} is a directory, not a program; give the bot's "
                                    "executable or script inside it (e.g. python3 DIR/bot.py)", bot=spec.name) from None
            raise BotStartError(f"cannot start: {argv[0]!r} is not executable (chmod +x, or run it via its interpreter)",
                                bot=spec.name) from None
        except OSError as exc:
            if exc.errno != errno.ENOEXEC:
                raise BotStartError(f"cannot start {argv!r}: {exc}", bot=spec.name) from None
            raise BotStartError(
                f"cannot start: {argv[0]!r} is not a program the system can run (a script without a `#!` line?); "
                f"add a first line such as `#!/usr/bin/env python3`, or run it through its interpreter "
                f"(e.g. `python3 {argv[0]}`)", bot=spec.name) from None
        except subprocess.SubprocessError as exc:
            raise BotStartError(f"cannot start {argv!r}: {exc}", bot=spec.name) from None
        self = cls(spec, clock, process, max_line)
        self._plan = plan
        try:
            if nursery is not None:
                nursery.start_soon(self._drain_stderr)
            else:
                trio.lowlevel.spawn_system_task(self._drain_stderr)
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

    async def _handshake(self, startup_ms: int) -> None:
        hello = ENCODER.encode({"type": "hello", "protocol": PROTOCOL_VERSION, "name": self.name,
                                "referee": _referee_version()}) + b"\n"
        with trio.move_on_after(startup_ms / 1000) as scope:
            try:
                await self.send_bytes(hello)
                line = await self.reader.read_line()
            except (trio.BrokenResourceError, trio.ClosedResourceError, StreamClosed):
                status = await self._exit_status(0.5)
                with trio.move_on_after(0.2):
                    await self._stderr_done.wait()
                raise BotCrashed(
                    f"exited ({status}) before answering hello{self._stderr_hint()}", bot=self.name
                ) from None
            except LineTooLong as exc:
                raise BotMalformed(f"hello: {exc}", bot=self.name) from None
        if scope.cancelled_caught:
            raise BotTimeout(f"no hello within the startup limit of {startup_ms} ms{self._stderr_hint()}", bot=self.name)
        msg = decode_line(line, self.reader.lineno, bot=self.name)
        if not isinstance(msg, BotHello):
            raise BotMalformed(
                f"line {self.reader.lineno}: expected a hello reply, got {type(msg).__name__}", bot=self.name
            )
        if msg.protocol != PROTOCOL_VERSION:
            detail = (f"bot speaks protocol version {msg.protocol}, this referee speaks protocol version "
                      f"{PROTOCOL_VERSION}; update the bot to protocol {PROTOCOL_VERSION}")
            await self.send_error("malformed", detail)
            raise BotRefused(detail, bot=self.name)
        self.hello = msg

    # -- I/O -----------------------------------------------------------------
    def try_send(self, data: bytes) -> int:
        """Write what fits into the pipe now, without waiting: returns the number
        of bytes written. Raises trio.BrokenResourceError / ClosedResourceError
        if the bot's stdin is closed."""
        fd = self._stdin.fileno()  # type: ignore[union-attr]
        if fd < 0:
            raise trio.ClosedResourceError("the bot's stdin is closed")
        try:
            return os.write(fd, data)
        except BlockingIOError:
            return 0
        except OSError as exc:
            raise trio.BrokenResourceError(str(exc)) from None

    async def send_bytes(self, data: bytes) -> None:
        """Write raw bytes. Raises trio.BrokenResourceError / ClosedResourceError
        when the bot's stdin is closed (the caller reports a crash).

        Fast path: one direct ``os.write`` on the non-blocking pipe; only when
        the pipe is full does it wait (trio ``send_all``, cancellable). The fast
        path does not yield to the scheduler (the reads that follow do)."""
        stdin = self._stdin
        fd = stdin.fileno()  # type: ignore[union-attr]
        if fd < 0:
            raise trio.ClosedResourceError("the bot's stdin is closed")
        try:
            n = os.write(fd, data)
        except BlockingIOError:
            n = 0
        except OSError as exc:
            raise trio.BrokenResourceError(str(exc)) from None
        if n < len(data):
            await stdin.send_all(memoryview(data)[n:])  # type: ignore[union-attr]

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
                self.pipe_open = False

    # -- stderr ----------------------------------------------------------------
    async def _drain_stderr(self) -> None:
        stream = self.process.stderr
        buf = self._stderr
        try:
            with trio.CancelScope() as scope:
                self._stderr_scope = scope
                while True:
                    try:
                        data = await stream.receive_some(65536)  # type: ignore[union-attr]
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        break
                    if not data:
                        break
                    buf += data
                    if len(buf) > STDERR_TAIL:
                        self._stderr_dropped += len(buf) - STDERR_TAIL
                        del buf[: len(buf) - STDERR_TAIL]
        finally:
            self._stderr_done.set()

    def stderr_tail(self) -> str:
        """The end of what the bot wrote to stderr, at most 64 KiB (decoded
        leniently). When earlier output was discarded, the tail starts with the
        line ``[... N earlier bytes dropped ...]``: the marker takes its place
        within the 64 KiB, N counts every byte not shown, and the text after it
        never starts inside a UTF-8 character."""
        buf = self._stderr
        if not self._stderr_dropped:
            return buf.decode("utf-8", "replace")
        cut = 0
        marker = ""
        for _ in range(4):  # the marker's length depends on N, and N on the cut: settles in two rounds
            marker = f"[... {self._stderr_dropped + cut} earlier bytes dropped ...]\n"
            new_cut = len(marker)
            while new_cut < len(buf) and new_cut - len(marker) < 3 and buf[new_cut] & 0xC0 == 0x80:
                new_cut += 1  # a UTF-8 continuation byte: start at the next whole character
            if new_cut == cut:
                break
            cut = new_cut
        return marker + buf[cut:].decode("utf-8", "replace")

    def _stderr_hint(self) -> str:
        tail = self.stderr_tail().strip()
        if not tail:
            return ""
        return "; stderr ends: " + repr(tail[-300:])

    async def _exit_status(self, wait_s: float) -> str:
        with trio.move_on_after(wait_s):
            await self.process.wait()
        rc = self.process.returncode
        await trio.sleep(0)
        if rc is None:
            return "still running, closed its stdout"
        if rc < 0:
            try:
                return f"killed by signal {signal.Signals(-rc).name}"
            except ValueError:
                return f"killed by signal {-rc}"
        return f"exit status {rc}"

    async def exit_description(self) -> str:
        """How the process ended (waits up to 0.2 s for it to exit)."""
        return await self._exit_status(0.2)

    # -- shutdown ----------------------------------------------------------------
    async def close(self) -> None:
        """Say ``bye``, close stdin, give the bot ``clock.grace_ms`` to exit, then
        SIGKILL its whole process group and reap it. Idempotent; shielded from
        cancellation; never raises for a bot that is already gone."""
        if self._closed:
            return
        with trio.CancelScope(shield=True):
            if self.alive and self.pipe_open:
                with trio.move_on_after(self.clock.grace_ms / 1000):
                    try:
                        await self.send_bytes(b'{"type":"bye"}\n')
                        await self._stdin.aclose()  # type: ignore[union-attr]
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        pass
                    await self.process.wait()
            await self._terminate()

    async def kill(self) -> None:
        """SIGKILL the process group at once and reap it (no ``bye``). Shielded, idempotent."""
        if self._closed:
            return
        with trio.CancelScope(shield=True):
            await self._terminate()

    async def _terminate(self) -> None:
        self._closed = True
        self.alive = False
        self.pipe_open = False
        await kill_group(self.process)
        plan = getattr(self, "_plan", None)
        if plan is not None:
            await plan.release()  # the bot's temporary working directory and control groups
        with trio.move_on_after(0.5):
            await self._stderr_done.wait()
        if self._stderr_scope is not None:
            self._stderr_scope.cancel()
        await close_pipes(self.process)

    @property
    def closed(self) -> bool:
        return self._closed

    # -- accounting --------------------------------------------------------------
    def cpu_seconds(self) -> float | None:
        """CPU seconds the bot has used so far, every process it started
        included: from its control group where it has one (children reaped in
        any way count), else from ``/proc`` (see
        :meth:`referee.runtime.sandbox.SpawnPlan.cpu_seconds`); None when the
        machine cannot tell (the clock then falls back to wall time)."""
        plan = getattr(self, "_plan", None)
        if plan is None:
            from .cpu import group_cpu_seconds

            return group_cpu_seconds(self.pid)
        return plan.cpu_seconds(self.pid)

    def sandbox_info(self) -> dict[str, Any]:
        """What protects this bot (for the game log's header): e.g. ``{"sandbox":
        "bwrap", "accounting": "cgroup-v1", "memory": "cgroup+rlimit", "pids":
        "cgroup", ...}``; see :meth:`referee.runtime.sandbox.SpawnPlan.sandbox_info`."""
        plan = getattr(self, "_plan", None)
        return plan.sandbox_info() if plan is not None else {"sandbox": "unknown"}

    def __repr__(self) -> str:
        return f"<BotSession {self.name!r} pid={self.pid} alive={self.alive}>"


def _is_directory(program: str, cwd: str | None) -> bool:
    """Whether ``program`` (an argv[0] that could not be executed) names a
    directory: as a path (relative to ``cwd``), or found on ``PATH``."""
    if "/" in program:
        return os.path.isdir(os.path.join(cwd or os.getcwd(), program))
    return any(os.path.isdir(os.path.join(d or ".", program))
               for d in os.environ.get("PATH", os.defpath).split(os.pathsep))


async def kill_group(process: trio.Process) -> None:
    """SIGKILL the process group led by ``process`` (started with its own
    session), reap the leader, and SIGKILL the group again: it may outlive its
    leader for a moment. Call it shielded: it waits for the exit."""
    _killpg(process.pid)
    await process.wait()
    _killpg(process.pid)


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def close_pipes(process: trio.Process) -> None:
    """Close the process's stdin/stdout/stderr pipes, ignoring ones already broken."""
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            try:
                await stream.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass


async def start_bots(specs: list[BotSpec], clock: ClockSpec, nursery: trio.Nursery, *, max_line: int = 65536) -> list[BotSession]:
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


_ = msgspec  # imported for type users
