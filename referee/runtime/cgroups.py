"""Per-bot control groups: CPU accounting, memory and process limits, and a
kill switch for everything a bot started (Linux).

:func:`layout` finds, once per process, where this machine lets the referee
make control groups: below the referee's own group in the cgroup v2 hierarchy
and/or in the v1 hierarchies of the ``cpuacct``, ``memory`` and ``pids``
controllers, and the ``cpu`` controller (``cpu.shares`` in v1, ``cpu.weight``
in v2) for an equal CPU weight per bot (a "hybrid" machine has both). The rule: on a machine whose main
hierarchy is v2 (mounted at ``/sys/fs/cgroup``) every resource comes from v2
where its controller can be enabled; otherwise a resource comes from its v1
controller, and a v2 hierarchy mounted beside them (``/sys/fs/cgroup/unified``)
only serves to list and kill the bot's processes (``cgroup.kill``). Each
candidate parent is tested by making and removing a group in it.

:class:`BotCgroup` is one bot's set of groups (one directory per hierarchy,
all with the same name). The sandbox creates the directories and writes the
limits in the forked child before the bot starts (so a referee killed before
the fork leaves none behind), and the bot's first process joins them with
:meth:`BotCgroup.join` before ``exec``: everything the bot ever starts is
counted, however it is reaped. The watcher (or the referee) removes them once
the bot is dead: :meth:`BotCgroup.kill` then :meth:`BotCgroup.remove`.

**Fair CPU**: every bot's group gets the same CPU weight (:data:`CPU_SHARES`,
:data:`CPU_WEIGHT`: the kernel's default, the weight of one ordinary process),
so the scheduler shares a busy core between groups, not between processes: a
bot running 24 busy processes gets no more CPU than a bot running one, and the
referee (not in any bot's group, so weighed like one more group) keeps its
share too. Where the ``cpu`` controller cannot be used, ``Layout.weight`` is
None and the log header's ``"cpu"`` says ``"none"``.

Errors: :func:`layout` never raises (no usable group: ``None``).
:meth:`BotCgroup.create` and :meth:`BotCgroup.join` raise ``OSError`` (the
child then fails before the bot starts, reported as a start failure). Reading
and removing never raise. Nothing here blocks for long or is cancellable.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import os
import secrets
import signal
import time
from dataclasses import dataclass, field

#: where a machine mounts its control groups (Linux standard)
_MOUNTINFO = "/proc/self/mountinfo"


@dataclass(frozen=True)
class Layout:
    """Where per-bot groups go: a parent directory per resource (None: not
    available). ``version`` is "v2" or "v1" (the hierarchy accounting CPU)."""

    version: str
    cpu: str | None = None  # parent for CPU accounting (v2 cpu.stat / v1 cpuacct.usage)
    memory: str | None = None  # parent for the memory limit (v2 memory.max / v1 memory.limit_in_bytes)
    pids: str | None = None  # parent for the process limit (pids.max)
    unified: str | None = None  # v2 parent used to list and kill the bot's processes
    weight: str | None = None  # parent for the CPU weight (v2 cpu.weight / v1 cpu.shares)

    def parents(self) -> list[str]:
        """The distinct parent directories, in a fixed order."""
        out: list[str] = []
        for p in (self.unified, self.cpu, self.memory, self.pids, self.weight):
            if p is not None and p not in out:
                out.append(p)
        return out

    @property
    def accounting(self) -> str:
        """How a bot's CPU time is measured: ``cgroup-v2``, ``cgroup-v1`` or ``proc``."""
        return f"cgroup-{self.version}" if self.cpu else "proc"

    @property
    def cpu_weight(self) -> str:
        """What the scheduler weighs the bot's processes by, for the log header:
        ``"cgroup-v1 cpu.shares=1024"``, ``"cgroup-v2 cpu.weight=100"`` or ``"none"``."""
        if self.weight is None:
            return "none"
        if os.path.exists(os.path.join(self.weight, "cpu.shares")):
            return f"cgroup-v1 cpu.shares={CPU_SHARES}"
        return f"cgroup-v2 cpu.weight={CPU_WEIGHT}"


#: every bot group's CPU weight: the kernel's default (that of one ordinary group or
#: nice-0 process), the same for every bot, whatever it runs inside
CPU_SHARES = 1024  # cgroup v1 cpu.shares
CPU_WEIGHT = 100  # cgroup v2 cpu.weight


def _mounts() -> tuple[str | None, dict[str, str]]:
    """``(cgroup2 mount point or None, {v1 controller: mount point})``."""
    v2: str | None = None
    v1: dict[str, str] = {}
    try:
        with open(_MOUNTINFO) as f:
            lines = f.read().splitlines()
    except OSError:
        return None, {}
    for line in lines:
        left, _, right = line.partition(" - ")
        parts, rparts = left.split(), right.split()
        if len(parts) < 5 or len(rparts) < 3:
            continue
        point, fstype, options = parts[4], rparts[0], rparts[2]
        if fstype == "cgroup2" and v2 is None:
            v2 = point
        elif fstype == "cgroup":
            for opt in options.split(","):
                if opt in ("cpu", "cpuacct", "memory", "pids") and opt not in v1:
                    v1[opt] = point
    return v2, v1


def _own_paths() -> dict[str, str]:
    """This process's group per hierarchy: ``{"": v2 path, "memory": path, ...}``."""
    out: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _hid, controllers, path = line.rstrip("\n").split(":", 2)
                if controllers == "":
                    out[""] = path
                for c in controllers.split(","):
                    if c:
                        out[c] = path
    except (OSError, ValueError):
        pass
    return out


def _usable(parent: str, files: tuple[str, ...] = ()) -> bool:
    """Can we make a group below ``parent`` (with ``files`` in it), and remove it?"""
    probe = os.path.join(parent, f"referee-probe-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        os.mkdir(probe)
    except OSError:
        return False
    try:
        return all(os.path.exists(os.path.join(probe, name)) for name in files)
    finally:
        try:
            os.rmdir(probe)
        except OSError:
            pass


def _enable_v2(parent: str, wanted: tuple[str, ...]) -> set[str]:
    """Enable ``wanted`` controllers for the children of ``parent`` (where it is
    allowed: a group holding processes may not, except the root); return the
    ones now enabled."""
    try:
        with open(os.path.join(parent, "cgroup.controllers")) as f:
            available = set(f.read().split())
        with open(os.path.join(parent, "cgroup.subtree_control")) as f:
            enabled = set(f.read().split())
    except OSError:
        return set()
    for c in wanted:
        if c in available and c not in enabled:
            try:
                with open(os.path.join(parent, "cgroup.subtree_control"), "w") as f:
                    f.write(f"+{c}")
                enabled.add(c)
            except OSError:
                pass
    return enabled & set(wanted)


#: False: bots' groups get no CPU weight (``referee bench load --weights off``, to compare)
_FAIR_CPU = [True]


def set_fair_cpu(on: bool) -> None:
    """Give the bots started from now on an equal CPU weight (the default) or
    not (their processes then compete one by one, as without control groups).
    For the load benchmark's comparison; a league never turns it off."""
    _FAIR_CPU[0] = on


def layout() -> Layout | None:
    """Where this process can make per-bot control groups, or None (probed once)."""
    lay = _probe()
    if lay is not None and lay.weight is not None and not _FAIR_CPU[0]:
        return dataclasses.replace(lay, weight=None)
    return lay


@functools.cache
def _probe() -> Layout | None:
    if not os.path.exists("/proc/self/cgroup"):
        return None
    v2, v1 = _mounts()
    own = _own_paths()
    unified = None
    v2_controllers: set[str] = set()
    if v2 is not None and "" in own:
        parent = os.path.normpath(v2 + own[""])
        if _usable(parent, ("cgroup.procs",)):
            unified = parent
            v2_controllers = _enable_v2(parent, ("cpu", "memory", "pids"))
    pure_v2 = v2 is not None and os.path.normpath(v2) == "/sys/fs/cgroup"

    def v1_parent(controller: str, probe_file: str) -> str | None:
        point = v1.get(controller)
        if point is None or controller not in own:
            return None
        parent = os.path.normpath(point + own[controller])
        return parent if _usable(parent, (probe_file,)) else None

    if unified is not None and (pure_v2 or not v1):
        mem = unified if "memory" in v2_controllers and _usable(unified, ("memory.max",)) else None
        pids = unified if "pids" in v2_controllers and _usable(unified, ("pids.max",)) else None
        cpu = unified if _usable(unified, ("cpu.stat",)) else None
        if mem is None:
            mem = v1_parent("memory", "memory.limit_in_bytes")
        if pids is None:
            pids = v1_parent("pids", "pids.max")
        weight = unified if "cpu" in v2_controllers and _usable(unified, ("cpu.weight",)) else None
        if weight is None:
            weight = v1_parent("cpu", "cpu.shares")
        return Layout("v2", cpu=cpu, memory=mem, pids=pids, unified=unified, weight=weight)
    cpu = v1_parent("cpuacct", "cpuacct.usage")
    mem = v1_parent("memory", "memory.limit_in_bytes")
    pids = v1_parent("pids", "pids.max")
    weight = v1_parent("cpu", "cpu.shares")
    if weight is None and unified is not None and "cpu" in v2_controllers and _usable(unified, ("cpu.weight",)):
        weight = unified
    if cpu is None and unified is not None and _usable(unified, ("cpu.stat",)):
        return Layout("v2", cpu=unified, memory=mem, pids=pids, unified=unified, weight=weight)
    if cpu is None and mem is None and pids is None and unified is None and weight is None:
        return None
    return Layout("v1", cpu=cpu, memory=mem, pids=pids, unified=unified, weight=weight)


# --------------------------------------------------------------------------
# one bot's groups


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


@dataclass
class BotCgroup:
    """One bot's groups: ``name`` below each parent of ``layout``."""

    layout: Layout
    name: str
    memory_bytes: int | None = None
    pids_max: int | None = None
    created: bool = field(default=False, compare=False)

    def dirs(self) -> list[str]:
        return [os.path.join(p, self.name) for p in self.layout.parents()]

    def _dir(self, parent: str | None) -> str | None:
        return os.path.join(parent, self.name) if parent is not None else None

    # -- in the forked child, before the bot starts ------------------------
    def create(self) -> None:
        """Make the directories and write the limits. Raises ``OSError``."""
        for d in self.dirs():
            os.mkdir(d, 0o755)
        lay = self.layout
        mem = self._dir(lay.memory)
        if mem is not None and self.memory_bytes is not None:
            value = str(self.memory_bytes)
            if os.path.exists(os.path.join(mem, "memory.max")):  # v2
                _write(os.path.join(mem, "memory.max"), value)
                if os.path.exists(os.path.join(mem, "memory.swap.max")):
                    _write(os.path.join(mem, "memory.swap.max"), "0")
            else:  # v1
                _write(os.path.join(mem, "memory.limit_in_bytes"), value)
                memsw = os.path.join(mem, "memory.memsw.limit_in_bytes")
                if os.path.exists(memsw):
                    try:
                        _write(memsw, value)  # no swapping out to dodge the limit
                    except OSError:
                        pass
        pids = self._dir(lay.pids)
        if pids is not None and self.pids_max is not None:
            _write(os.path.join(pids, "pids.max"), str(self.pids_max))
        weight = self._dir(lay.weight)
        if weight is not None:
            if os.path.exists(os.path.join(weight, "cpu.shares")):  # v1
                _write(os.path.join(weight, "cpu.shares"), str(CPU_SHARES))
            else:  # v2
                _write(os.path.join(weight, "cpu.weight"), str(CPU_WEIGHT))
        self.created = True

    def weight_value(self) -> int | None:
        """The group's CPU weight as the kernel has it now (``cpu.shares`` or
        ``cpu.weight``), or None without one (or unreadable)."""
        d = self._dir(self.layout.weight)
        if d is None:
            return None
        for name in ("cpu.shares", "cpu.weight"):
            text = _read(os.path.join(d, name))
            if text is not None:
                try:
                    return int(text)
                except ValueError:
                    return None
        return None

    def join(self) -> None:
        """Move the calling process into every group. Raises ``OSError``."""
        for d in self.dirs():
            _write(os.path.join(d, "cgroup.procs"), "0")

    # -- reading -------------------------------------------------------------
    def cpu_seconds(self) -> float | None:
        """CPU seconds used by every process that ever ran in the group
        (children reaped in any way included), or None if unreadable."""
        d = self._dir(self.layout.cpu)
        if d is None:
            return None
        text = _read(os.path.join(d, "cpuacct.usage"))
        if text is not None:
            try:
                return int(text) / 1e9
            except ValueError:
                return None
        text = _read(os.path.join(d, "cpu.stat"))
        if text is None:
            return None
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
        return None

    def pids(self) -> list[int]:
        """Pids of the processes in the group now (empty when none or unreadable)."""
        for d in self.dirs():
            text = _read(os.path.join(d, "cgroup.procs"))
            if text is not None:
                return [int(x) for x in text.split()]
        return []

    # -- the end ---------------------------------------------------------------
    def kill(self) -> None:
        """SIGKILL every process in the group (``cgroup.kill`` where there is
        one, else each listed process). Never raises."""
        d = self._dir(self.layout.unified)
        if d is not None and os.path.exists(os.path.join(d, "cgroup.kill")):
            try:
                _write(os.path.join(d, "cgroup.kill"), "1")
                return
            except OSError:
                pass
        for _ in range(100):  # a process may fork while we kill; a few rounds settle it
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def remove(self) -> bool:
        """Remove the directories (the groups must be empty); True when none is
        left. Never raises."""
        left = False
        for d in reversed(self.dirs()):
            try:
                os.rmdir(d)
            except FileNotFoundError:
                pass
            except OSError:
                left = True
        return not left

    def destroy(self, wait_s: float = 2.0) -> bool:
        """Kill, then remove, retrying while the kernel finishes killing (up to
        ``wait_s``, blocking). True when the groups are gone."""
        deadline = time.monotonic() + wait_s
        delay = 0.001
        while True:
            self.kill()
            if self.remove():
                _PENDING.pop(self.name, None)
                return True
            if time.monotonic() >= deadline:
                _PENDING[self.name] = self
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


#: groups whose removal had to wait (by name); retried by :func:`sweep` and at exit
_PENDING: dict[str, BotCgroup] = {}


def sweep() -> None:
    """Retry removing groups left busy earlier (non-blocking)."""
    for cg in list(_PENDING.values()):
        cg.kill()
        if cg.remove():
            _PENDING.pop(cg.name, None)


@atexit.register
def _remove_pending() -> None:
    for cg in list(_PENDING.values()):
        cg.destroy(wait_s=2.0)
