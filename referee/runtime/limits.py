"""Resource limits for bot processes (one small module, hardened later).

:class:`ResourceLimits` lists optional POSIX rlimits; :func:`preexec_for`
turns them into a ``preexec_fn`` that runs in the child between ``fork`` and
``exec`` and applies them with :func:`resource.setrlimit`.

Errors: a limit the kernel refuses (e.g. raising a hard limit as an
unprivileged user) makes ``setrlimit`` fail in the child; the child then
exits before ``exec`` and the runtime reports that as the bot failing to
start (``BotStartError``). Nothing here blocks or is cancellable.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class ResourceLimits:
    """Optional per-process limits; ``None`` leaves the inherited limit.

    * ``address_space`` - bytes of virtual memory (RLIMIT_AS)
    * ``cpu_seconds``   - CPU seconds for the whole process life (RLIMIT_CPU)
    * ``processes``     - processes/threads of the user (RLIMIT_NPROC)
    * ``file_size``     - largest file the bot may write, bytes (RLIMIT_FSIZE)
    """

    address_space: int | None = None
    cpu_seconds: int | None = None
    processes: int | None = None
    file_size: int | None = None

    def pairs(self) -> list[tuple[int, int]]:
        """``(RLIMIT_*, value)`` for every limit that is set."""
        out: list[tuple[int, int]] = []
        for value, which in (
            (self.address_space, resource.RLIMIT_AS),
            (self.cpu_seconds, resource.RLIMIT_CPU),
            (self.processes, resource.RLIMIT_NPROC),
            (self.file_size, resource.RLIMIT_FSIZE),
        ):
            if value is not None:
                if value < 0:
                    raise ValueError(f"resource limit must be >= 0, got {value}")
                out.append((which, int(value)))
        return out


def preexec_for(limits: ResourceLimits | None) -> Callable[[], None] | None:
    """A ``preexec_fn`` applying ``limits`` in the child, or ``None`` if there are none.

    The soft and hard limit are both set to the value (a bot cannot raise it).
    """
    if limits is None:
        return None
    pairs = limits.pairs()
    if not pairs:
        return None

    def apply() -> None:  # runs in the forked child: keep it tiny
        for which, value in pairs:
            resource.setrlimit(which, (value, value))

    return apply
