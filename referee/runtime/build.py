"""A bot's ``build`` command, run in the bot's sandbox.

:func:`run_build` runs the command the way the bot itself would run (the
sandbox of :mod:`referee.runtime.sandbox`, the bot's limits and control
group, its scrubbed environment plus its ``env``), with these differences:
it runs in the bot's folder (``cwd``), which is writable (in bubblewrap: the
only writable folder besides a private ``/tmp``); it has no network unless
the bot's limits say ``build_network = true``; its wall time is bounded by
``build_seconds``; its stdin is ``/dev/null`` and its stdout and stderr are
kept together (the last 64 KiB). When the command ends - or times out -
everything it started is killed: its PID namespace and its control group
(a daemon started by a build does not survive it).

Errors: :func:`run_build` raises :class:`~referee.errors.UserError` for limits
the machine cannot meet (as :func:`~referee.runtime.sandbox.plan_spawn`) and
:class:`BuildStartError` when the command cannot be started at all; a failing
or timed-out build is a :class:`BuildResult`, not an exception. Cancellation
kills the build and everything it started before it propagates.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass, field, replace
from typing import Any

import trio

from .limits import ResourceLimits
from .process import TailBuffer
from .sandbox import plan_spawn
from .session import close_pipes, kill_group
from .spec import BotSpec

#: bytes of build output kept (the end)
OUTPUT_TAIL = 65536


class BuildStartError(Exception):
    """The build command could not be started (not found, not executable...)."""


@dataclass
class BuildResult:
    """How a build ended: ``returncode`` (None when it timed out and was
    killed), its output's last :data:`OUTPUT_TAIL` bytes (stdout and stderr
    together), the wall time, and the sandbox it ran in."""

    returncode: int | None
    output: str
    seconds: float
    timed_out: bool = False
    sandbox: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def tail(self, lines: int = 15) -> str:
        """The last ``lines`` lines of the output ("(no output)" when empty)."""
        text = self.output.rstrip().splitlines()
        return "\n".join(text[-lines:]) or "(no output)"


def build_limits(limits: ResourceLimits | None) -> ResourceLimits:
    """The limits a build of a bot with ``limits`` runs under: the same, but in
    its folder (no temporary working directory), that folder writable, and the
    network only with ``build_network``."""
    base = limits if limits is not None else ResourceLimits()
    return replace(base, temp_workdir=False, writable=True, network=base.build_network)


async def run_build(
    name: str,
    command: list[str] | str,
    cwd: str,
    *,
    env: dict[str, str] | None = None,
    limits: ResourceLimits | None = None,
) -> BuildResult:
    """Run bot ``name``'s build ``command`` in ``cwd`` inside its sandbox (see
    the module docstring); ``env`` as :class:`~referee.runtime.spec.BotSpec`'s.
    Returns when the command has ended (or was killed at ``build_seconds``)
    and everything it started is gone."""
    lim = build_limits(limits)
    spec = BotSpec(name=f"{name}-build", command=command, cwd=cwd, env=env, limits=lim, build=True)
    plan = plan_spawn(spec)
    t0 = time.monotonic()
    try:
        try:
            proc: trio.Process = await plan.open(
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
            )
        except BaseException:
            with trio.CancelScope(shield=True):
                await plan.release()
            raise
    except OSError as exc:
        raise BuildStartError(exc.strerror or str(exc)) from None
    except subprocess.SubprocessError as exc:
        raise BuildStartError(str(exc)) from None
    output = TailBuffer(OUTPUT_TAIL)
    drained = trio.Event()

    async def drain() -> None:
        stream = proc.stdout
        assert stream is not None
        try:
            await output.read_from(stream)
        finally:
            drained.set()

    timed_out = False
    ended = False

    async def end() -> None:
        # kill the build's process group and everything in its sandbox (PID namespace,
        # control group), reap it, remove its control groups - once (a reaped pid may be reused)
        nonlocal ended
        if not ended:
            ended = True
            await kill_group(proc)
            await plan.release()

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain)
            timeout = lim.build_seconds if lim.build_seconds is not None else float("inf")
            with trio.move_on_after(timeout) as scope:
                await proc.wait()
            timed_out = scope.cancelled_caught
            with trio.CancelScope(shield=True):
                await end()
                with trio.move_on_after(1.0):
                    await drained.wait()  # the rest of what it wrote (nothing of it holds the pipe now)
                nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await end()
            await close_pipes(proc)
    rc = None if timed_out else proc.returncode
    return BuildResult(
        returncode=rc,
        output=output.data.decode("utf-8", "replace"),
        seconds=time.monotonic() - t0,
        timed_out=timed_out,
        sandbox=plan.sandbox_info(),
    )
