"""Resource limits and sandbox switches for bot processes.

:class:`ResourceLimits` is what a league config's ``[limits]`` table (for every
bot) and a bot's ``limits = { ... }`` (for that bot, key by key on top) turn
into; :func:`parse_limits` does that conversion with clear errors.
:mod:`referee.runtime.sandbox` applies it when a bot starts (see
docs/SECURITY.md for what each switch protects against).

The POSIX rlimits are set as both soft and hard limit in the bot process (the
bot cannot raise them); they are inherited by everything the bot starts.

Errors: :func:`parse_limits` raises :class:`LimitsError` (a ``ValueError``
naming the key) for unknown keys and bad values. A limit the kernel refuses
(e.g. raising a hard limit as an unprivileged user) makes the child fail
before ``exec``; the runtime reports that as the bot failing to start
(``BotStartError``). Nothing here blocks or is cancellable.
"""

from __future__ import annotations

import difflib
import resource
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

MiB = 1 << 20


@dataclass(frozen=True)
class ResourceLimits:
    """Per-bot-process limits (``None`` leaves the inherited limit) and
    sandbox switches. The defaults are the sane defaults every bot gets.

    * ``address_space`` - bytes of virtual memory (RLIMIT_AS), default 2 GiB
    * ``cpu_seconds``   - CPU seconds for the whole process life, i.e. a session
      (RLIMIT_CPU; the kernel kills the bot at the limit), default 3600
    * ``processes``     - processes/threads of the bot's uid (RLIMIT_NPROC: a root
      referee gives each bot a uid of its own, so per bot; shared by the bots of
      one ``user``; see SECURITY.md), default 4096
    * ``file_size``     - largest file the bot may write, bytes (RLIMIT_FSIZE), default 64 MiB
    * ``open_files``    - open file descriptors (RLIMIT_NOFILE), default 1024
    * ``network``       - False: run without network access (own empty network
      namespace); refused with a clear error where the machine cannot do it
    * ``pid_namespace`` - own PID namespace when the machine allows it, so that
      everything the bot forks dies with it
    * ``temp_workdir``  - a fresh temporary working directory (removed
      afterwards) instead of the spec's ``cwd``; relative paths in the command
      are resolved against ``cwd`` first
    * ``clean_env``     - scrub the environment: only the spec's ``env`` plus a
      minimal PATH/HOME/TMPDIR/LANG
    * ``sandbox``       - False: none of the above switches, only the rlimits
      (trusted bots, debugging); ``isolation`` says which sandbox when True
    * ``isolation``     - "auto" (bubblewrap where it works, else "basic"),
      "bwrap" (refused with a clear error where bwrap cannot run) or "basic"
      (the home-made sandbox); "none" is the same as ``sandbox=False``
    * ``require_sandbox`` - refuse to run a bot outside bubblewrap (competition hosts)
    * ``writable``      - bubblewrap: the bot's folder - the ``cwd`` it runs in,
      with ``temp_workdir`` False - is mounted read-write (default read-only; a
      temporary working directory is always writable)
    * ``build_seconds`` - wall-clock limit of the bot's ``build`` command, default 600
    * ``build_network`` - the ``build`` command may use the network (default: not)
    * ``user``          - run the bot as this user (name or uid; the referee must
      run as root). Then the bot cannot read what only the referee's user may,
      and ``processes`` counts only that user's processes: a real fork-bomb cap.
    * ``uid_base``, ``uid_count`` - a root referee without ``user`` runs every
      bot (and build) as a host uid and gid of its own from
      ``uid_base .. uid_base + uid_count - 1`` (no accounts needed; two bots
      running at once never share one). None: ``REFEREE_UID_BASE`` /
      ``REFEREE_UID_COUNT`` from the environment, else 2000000000 and 65536
      (see :func:`referee.runtime.sandbox.uid_range`).

    Where the machine lets the referee make control groups, ``address_space``
    also caps the bot's memory in its group (resident memory, page cache and
    shared memory: memfd, tmpfs) and ``processes`` its number of tasks
    (``pids.max``); see :mod:`referee.runtime.cgroups`. Core dumps are always
    off (RLIMIT_CORE 0).
    """

    address_space: int | None = 2048 * MiB
    cpu_seconds: int | None = 3600
    processes: int | None = 4096
    file_size: int | None = 64 * MiB
    open_files: int | None = 1024
    network: bool = True
    pid_namespace: bool = True
    temp_workdir: bool = True
    clean_env: bool = True
    sandbox: bool = True
    user: str | int | None = None
    isolation: str = "auto"
    require_sandbox: bool = False
    writable: bool = False
    build_seconds: int | None = 600
    build_network: bool = False
    uid_base: int | None = None
    uid_count: int | None = None

    def __post_init__(self) -> None:
        if self.isolation not in ISOLATIONS:
            raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}, got {self.isolation!r}")
        if not self.sandbox and self.isolation not in ("auto", "none"):
            raise ValueError(f"sandbox=False contradicts isolation={self.isolation!r}")
        if not self.sandbox:
            object.__setattr__(self, "isolation", "none")
        elif self.isolation == "none":
            object.__setattr__(self, "sandbox", False)

    def pairs(self) -> list[tuple[int, int]]:
        """``(RLIMIT_*, value)`` for every rlimit that is set (RLIMIT_CORE is
        always 0: no core dumps)."""
        out: list[tuple[int, int]] = [(resource.RLIMIT_CORE, 0)]
        for value, which in (
            (self.address_space, resource.RLIMIT_AS),
            (self.cpu_seconds, resource.RLIMIT_CPU),
            (self.processes, resource.RLIMIT_NPROC),
            (self.file_size, resource.RLIMIT_FSIZE),
            (self.open_files, resource.RLIMIT_NOFILE),
        ):
            if value is not None:
                if value < 0:
                    raise ValueError(f"resource limit must be >= 0, got {value}")
                out.append((which, int(value)))
        return out


# --------------------------------------------------------------------------
# config keys


class LimitsError(ValueError):
    """A bad ``limits`` key or value; ``key`` names it (None: the whole table)."""

    def __init__(self, key: str | None, message: str) -> None:
        self.key = key
        self.message = message
        super().__init__(f"{key}: {message}" if key else message)


#: the sandboxes a ``sandbox`` key may name (``isolation``; "auto" is what ``true`` means)
ISOLATIONS = ("auto", "bwrap", "basic", "none")

_INT_FIELDS = ("address_space", "cpu_seconds", "processes", "file_size", "open_files", "build_seconds")
#: whole numbers >= 1 without a "no limit" (false)
_UID_FIELDS = ("uid_base", "uid_count")
_BOOL_FIELDS = ("network", "pid_namespace", "temp_workdir", "clean_env", "require_sandbox", "writable", "build_network")
#: convenience keys in MiB
_MIB_ALIASES = {"memory_mb": "address_space", "file_size_mb": "file_size"}

#: every key a ``limits`` table accepts
CONFIG_KEYS: tuple[str, ...] = (*_INT_FIELDS, *_MIB_ALIASES, *_BOOL_FIELDS, "sandbox", "user", *_UID_FIELDS)


def parse_limits(*tables: Mapping[str, Any] | None, base: ResourceLimits | None = None) -> ResourceLimits:
    """Build limits from config tables applied in order on top of ``base`` (the
    defaults): e.g. ``parse_limits(league_table, bot_table)``.

    Integer keys (``address_space``, ``cpu_seconds``, ``processes``,
    ``file_size``, ``open_files``; ``memory_mb`` and ``file_size_mb`` in MiB)
    take a whole number >= 1, or ``false`` for "no limit" (``build_seconds``
    likewise); switch keys (``network``, ``pid_namespace``, ``temp_workdir``,
    ``clean_env``, ``require_sandbox``, ``writable``, ``build_network``) take
    true/false; ``sandbox`` takes "bwrap", "basic" or "none", or the old
    true (bwrap where it works, else basic) / false (none); ``user`` a user
    name or uid; ``uid_base`` and ``uid_count`` a whole number >= 1. Raises :class:`LimitsError` naming the key.
    """
    limits = base if base is not None else ResourceLimits()
    valid = {f.name for f in fields(ResourceLimits)} - {"isolation"}
    for table in tables:
        if not table:
            continue
        if not isinstance(table, Mapping):
            raise LimitsError(None, f"expected a table such as {{ memory_mb = 512 }}, got {table!r}")
        changes: dict[str, Any] = {}
        for key, value in table.items():
            name = _MIB_ALIASES.get(key, key)
            if name not in valid:
                close = difflib.get_close_matches(key, CONFIG_KEYS, n=1, cutoff=0.5)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise LimitsError(None, f"unknown key '{key}'{hint}; valid keys here: {', '.join(CONFIG_KEYS)}")
            if name == "sandbox":
                if value is True or value is False:
                    changes["sandbox"], changes["isolation"] = value, "auto" if value else "none"
                elif value in ("bwrap", "basic", "none"):
                    changes["sandbox"], changes["isolation"] = value != "none", value
                else:
                    raise LimitsError(
                        key,
                        f'expected "bwrap", "basic" or "none" (or true: bwrap where it works, '
                        f"else basic; false: none), got {value!r}",
                    )
                continue
            if name == "user":
                if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
                    raise LimitsError(key, f"expected a user name or uid, got {value!r}")
                changes[name] = value
                continue
            if name in _UID_FIELDS:
                if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                    raise LimitsError(key, f"expected a whole number >= 1 (a host uid or a count), got {value!r}")
                changes[name] = value
                continue
            if name in _BOOL_FIELDS:
                if not isinstance(value, bool):
                    raise LimitsError(key, f"expected true or false, got {value!r}")
                changes[name] = value
                continue
            if value is False:
                changes[name] = None
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise LimitsError(key, f"expected a whole number >= 1 (or false for no limit), got {value!r}")
            changes[name] = value * MiB if key in _MIB_ALIASES else value
        limits = replace(limits, **changes)
    return limits
