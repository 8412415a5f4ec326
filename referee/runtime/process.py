"""One bot process: spawned in the sandbox, stderr drained, lines read, its group killed.

:class:`BotProcess` is the one type for a running bot. It is started by
:meth:`BotProcess.spawn` (in the sandbox of :mod:`referee.runtime.sandbox`,
in its own session and process group, pipes on stdin/stdout/stderr) and used
as an async context manager: leaving the ``async with`` block kills the whole
group and reaps it (shielded, so it also happens on Ctrl-C)::

    async with await BotProcess.spawn(spec, nursery) as proc:
        await proc.send_bytes(b'{"type":"hello",...}\\n')
        line = await proc.reader.read_line()

A background task (in the nursery given to :meth:`spawn`, or a system task)
drains stderr into a 64 KiB ring buffer, so a bot flooding stderr never
blocks. :class:`referee.runtime.session.BotSession` adds the ``hello``
handshake and the ``bye``; ``referee check-bot`` drives a bare process.

State: :attr:`BotProcess.state` is one :class:`ProcState`, changed only by
the process's own transitions: :meth:`lost` (a timeout or crash: out of
sync), :meth:`stdin_failed` (a write to it failed) and :meth:`kill`.
"""

from __future__ import annotations

import enum
import errno
import os
import signal
import subprocess
from types import TracebackType
from typing import Any, Self, cast

import trio

from referee.core.errors import BotStartError

from .framing import LineReader
from .sandbox import SpawnPlan, plan_spawn
from .spec import BotSpec

STDERR_TAIL = 65536


class TailBuffer:
    """The last ``cap`` bytes read from a stream (``data``) and how many bytes
    before them were dropped (``dropped``): a bot's stderr, a build's output."""

    __slots__ = ("cap", "data", "dropped")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.dropped = 0

    async def read_from(self, stream: trio.abc.ReceiveStream) -> None:
        """Read ``stream`` to its end (or until it breaks or is closed); on
        cancellation what was read so far stays."""
        while True:
            try:
                chunk = await stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            if not chunk:
                return
            self.data += chunk
            over = len(self.data) - self.cap
            if over > 0:
                self.dropped += over
                del self.data[:over]


class ProcState(enum.Enum):
    """Where a bot process stands; the properties of :class:`BotProcess` read it."""

    READY = "ready"  # running and in sync: it may play its next turn
    DEAF = "deaf"  # in sync, but a write to its stdin failed: nothing more is written
    LOST = "lost"  # timed out or crashed: out of sync; still gets events until it is killed
    BROKEN = "broken"  # out of sync and its stdin takes no writes
    CLOSED = "closed"  # killed and reaped


#: the transitions: (state, event) -> new state; an event not listed leaves the state as it is
_LOST = {ProcState.READY: ProcState.LOST, ProcState.DEAF: ProcState.BROKEN}
_STDIN_FAILED = {ProcState.READY: ProcState.DEAF, ProcState.LOST: ProcState.BROKEN}


class BotProcess:
    """A running bot process (see the module docstring).

    Attributes: ``spec``, ``name``, ``pid`` (also its process group id),
    ``reader`` (its stdout, :class:`referee.runtime.framing.LineReader`),
    ``state``. Raises nothing on shutdown for a process already gone.
    """

    def __init__(self, spec: BotSpec, process: trio.Process, plan: SpawnPlan | None, max_line: int) -> None:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        self._init_state(spec, plan, process.pid, ProcState.READY)
        self.process = process
        self.reader = LineReader(process.stdout, max_line)
        self._stdin = cast(trio.lowlevel.FdStream, process.stdin)  # a pipe: an FdStream on POSIX

    def _init_state(self, spec: BotSpec, plan: SpawnPlan | None, pid: int, state: ProcState) -> None:
        """What every bot process has, a process or not (also a bot that never started: see
        ``BotSession.never_started``): one place, so that no constructor misses an attribute."""
        self.spec = spec
        self.name = spec.name
        self.pid: int = pid
        self.state = state
        self._plan = plan
        self._info: dict[str, Any] | None = None  # sandbox_info, made once: a process's protection is fixed
        self._stderr = TailBuffer(STDERR_TAIL)
        self._stderr_scope: trio.CancelScope | None = None
        self._stderr_done = trio.Event()

    # -- state -----------------------------------------------------------------
    @property
    def alive(self) -> bool:
        """In sync: it may play its next turn (False once it timed out, crashed or was closed)."""
        return self.state is ProcState.READY or self.state is ProcState.DEAF

    @property
    def pipe_open(self) -> bool:
        """Its stdin still takes writes (as far as the referee knows)."""
        return self.state is ProcState.READY or self.state is ProcState.LOST

    @property
    def closed(self) -> bool:
        return self.state is ProcState.CLOSED

    def lost(self) -> None:
        """It timed out or crashed: its output is out of sync (killed after the game)."""
        self.state = _LOST.get(self.state, self.state)

    def stdin_failed(self) -> None:
        """A write to its stdin failed (closed, or it stopped reading): write nothing more."""
        self.state = _STDIN_FAILED.get(self.state, self.state)

    # -- start -----------------------------------------------------------------
    @classmethod
    async def spawn(
        cls, spec: BotSpec, nursery: trio.Nursery | None = None, *, max_line: int = 65536, probe_leftovers: bool = False
    ) -> Self:
        """Start the bot in its sandbox. ``nursery`` hosts the stderr drain (it
        must outlive the process; None: a system task). ``probe_leftovers``:
        the sandbox reports the processes the bot leaves behind (check-bot).
        Raises :class:`BotStartError` (``reason``: ``not_found``, ``directory``,
        ``not_executable``, ``no_interpreter`` or ``other``) when it cannot start."""
        plan = plan_spawn(spec, probe_leftovers=probe_leftovers)
        process = await _open(spec, plan)
        self = cls(spec, process, plan, max_line)
        self._start_drain(nursery)
        return self

    def _start_drain(self, nursery: trio.Nursery | None) -> None:
        if nursery is not None:
            nursery.start_soon(self._drain_stderr)
        else:
            trio.lowlevel.spawn_system_task(self._drain_stderr)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.kill()

    # -- I/O -------------------------------------------------------------------
    def try_send(self, data: bytes | memoryview) -> int:
        """Write what fits into the pipe now, without waiting: returns the number
        of bytes written. Raises trio.BrokenResourceError / ClosedResourceError
        if the bot's stdin is closed."""
        fd = self._stdin.fileno()
        if fd < 0:
            raise trio.ClosedResourceError("the bot's stdin is closed")
        try:
            return os.write(fd, data)
        except BlockingIOError:
            return 0
        except OSError as exc:
            raise trio.BrokenResourceError(str(exc)) from None

    async def send_bytes(self, data: bytes | memoryview) -> None:
        """Write raw bytes. Raises trio.BrokenResourceError / ClosedResourceError
        when the bot's stdin is closed (the caller reports a crash).

        Fast path: one direct ``os.write`` on the non-blocking pipe; only when
        the pipe is full does it wait (trio ``send_all``, cancellable). The fast
        path does not yield to the scheduler (the reads that follow do)."""
        n = self.try_send(data)
        if n < len(data):
            await self._stdin.send_all(memoryview(data)[n:])

    async def close_stdin(self) -> None:
        """Close the bot's stdin (end of input); never raises."""
        try:
            await self._stdin.aclose()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass

    # -- stderr ----------------------------------------------------------------
    async def _drain_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        try:
            with trio.CancelScope() as scope:
                self._stderr_scope = scope
                await self._stderr.read_from(stream)
        finally:
            self._stderr_done.set()

    async def stderr_settled(self, timeout_s: float) -> None:
        """Wait (at most ``timeout_s``) until stderr has been read to its end."""
        with trio.move_on_after(timeout_s):
            await self._stderr_done.wait()

    def stderr_tail(self) -> str:
        """The end of what the bot wrote to stderr, at most 64 KiB (decoded
        leniently). When earlier output was discarded, the tail starts with the
        line ``[... N earlier bytes dropped ...]``: the marker takes its place
        within the 64 KiB, N counts every byte not shown, and the text after it
        never starts inside a UTF-8 character."""
        buf, dropped = self._stderr.data, self._stderr.dropped
        if not dropped:
            return buf.decode("utf-8", "replace")
        cut = 0
        marker = ""
        for _ in range(4):  # the marker's length depends on N, and N on the cut: settles in two rounds
            marker = f"[... {dropped + cut} earlier bytes dropped ...]\n"
            new_cut = len(marker)
            while new_cut < len(buf) and new_cut - len(marker) < 3 and buf[new_cut] & 0xC0 == 0x80:
                new_cut += 1  # a UTF-8 continuation byte: start at the next whole character
            if new_cut == cut:
                break
            cut = new_cut
        return marker + buf[cut:].decode("utf-8", "replace")

    def stderr_hint(self) -> str:
        """``"; stderr ends: '...'"`` (its last 300 characters), or ``""`` without stderr."""
        tail = self.stderr_tail().strip()
        hint = self._plan.view_hint(tail[-2000:]) if self._plan is not None and tail else ""
        return (f"; stderr ends: {tail[-300:]!r}" if tail else "") + hint

    # -- exit ------------------------------------------------------------------
    def exited(self) -> bool:
        """Whether the process has exited (without waiting)."""
        return self.process.poll() is not None

    async def wait_exit(self, timeout_s: float) -> int | None:
        """Its exit status, waiting at most ``timeout_s`` (None: still running)."""
        with trio.move_on_after(timeout_s):
            return await self.process.wait()
        return None

    async def exit_description(self, wait_s: float = 0.2) -> str:
        """How the process ended (waits up to ``wait_s`` for it to exit)."""
        rc = await self.wait_exit(wait_s)
        await trio.lowlevel.checkpoint()
        if rc is None:
            return "still running, closed its stdout"
        if rc < 0:
            try:
                return f"killed by signal {signal.Signals(-rc).name}"
            except ValueError:
                return f"killed by signal {-rc}"
        return f"exit status {rc}"

    async def kill(self) -> None:
        """SIGKILL the process group at once and reap it; release the sandbox
        (temporary folder, control groups). Shielded, idempotent."""
        if self.state is ProcState.CLOSED:
            return
        with trio.CancelScope(shield=True):
            self.state = ProcState.CLOSED
            await kill_group(self.process)
            if self._plan is not None:
                await self._plan.release()
            await self.stderr_settled(0.5)
            if self._stderr_scope is not None:
                self._stderr_scope.cancel()
            await close_pipes(self.process)

    # -- accounting ------------------------------------------------------------
    def cpu_seconds(self) -> float | None:
        """CPU seconds the bot has used so far, every process it started
        included: from its control group where it has one (children reaped in
        any way count), else from ``/proc`` (see
        :meth:`referee.runtime.sandbox.SpawnPlan.cpu_seconds`); None when the
        machine cannot tell (the clock then falls back to wall time)."""
        if self._plan is None:
            from .cpu import group_cpu_seconds

            return group_cpu_seconds(self.pid)
        return self._plan.cpu_seconds(self.pid)

    def sandbox_info(self) -> dict[str, Any]:
        """What protects this bot (for the game log's header): e.g. ``{"sandbox":
        "bwrap", "accounting": "cgroup-v1", "memory": "cgroup+rlimit", "pids":
        "cgroup", ...}``; see :meth:`referee.runtime.sandbox.SpawnPlan.sandbox_info`."""
        if self._info is None:  # (every game's log header asks: a session plays many)
            self._info = self._plan.sandbox_info() if self._plan is not None else {"sandbox": "unknown"}
        return dict(self._info)

    def leftovers(self) -> Any:
        """The processes the bot left behind when it exited, as the sandbox reports
        them (spawned with ``probe_leftovers``; see ``SpawnPlan.leftovers``)."""
        return self._plan.leftovers() if self._plan is not None else None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} pid={self.pid} {self.state.value}>"


async def _open(spec: BotSpec, plan: SpawnPlan) -> trio.Process:
    """Open the process of ``plan``; a failure is a :class:`BotStartError` with its ``reason``."""
    argv = plan.argv
    try:
        try:
            proc: trio.Process = await plan.open(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            return proc
        except BaseException:
            plan.cleanup()
            raise
    except FileNotFoundError as exc:
        missing = spec.cwd if spec.cwd and not await trio.Path(spec.cwd).is_dir() else (exc.filename or argv[0])
        raise BotStartError(
            f"cannot start: {missing!r} not found (command {argv!r}); check the path or use a shell string",
            bot=spec.name,
            reason="not_found",
        ) from None
    except PermissionError:
        if _is_directory(argv[0], spec.cwd):
            raise BotStartError(
                f"cannot start: {argv[0]!r} is a directory, not a program; give the bot's "
                "executable or script inside it (e.g. python3 DIR/bot.py)",
                bot=spec.name,
                reason="directory",
            ) from None
        raise BotStartError(
            f"cannot start: {argv[0]!r} is not executable (chmod +x, or run it via its interpreter)",
            bot=spec.name,
            reason="not_executable",
        ) from None
    except OSError as exc:
        if exc.errno != errno.ENOEXEC:
            raise BotStartError(f"cannot start {argv!r}: {exc}", bot=spec.name) from None
        raise BotStartError(
            f"cannot start: {argv[0]!r} is not a program the system can run (a script without a `#!` line?); "
            f"add a first line such as `#!/usr/bin/env python3`, or run it through its interpreter "
            f"(e.g. `python3 {argv[0]}`)",
            bot=spec.name,
            reason="no_interpreter",
        ) from None
    except subprocess.SubprocessError as exc:
        raise BotStartError(f"cannot start {argv!r}: {exc}", bot=spec.name) from None


def _is_directory(program: str, cwd: str | None) -> bool:
    """Whether ``program`` (an argv[0] that could not be executed) names a
    directory: as a path (relative to ``cwd``), or found on ``PATH``."""
    if "/" in program:
        return os.path.isdir(os.path.join(cwd or os.getcwd(), program))
    return any(
        os.path.isdir(os.path.join(d or ".", program)) for d in os.environ.get("PATH", os.defpath).split(os.pathsep)
    )


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
