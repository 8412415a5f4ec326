"""CPU time of a bot's processes, read from ``/proc`` (Linux): the fallback
where the bot has no control group to read it from (see
:meth:`referee.runtime.sandbox.SpawnPlan.cpu_seconds`).

:func:`tree_cpu_seconds` sums the CPU time of a sandboxed bot's watcher and
every process below it (the bot, and in its own PID namespace everything it
started, orphans included); :func:`group_cpu_seconds` is for a bot started
without a sandbox (it leads its own process group).

:func:`group_cpu_seconds` sums the CPU time of every live process whose
process group is the bot's (each bot runs in its own session and group), and
of every process in the bot's own PID namespace. Per process it takes the
nanosecond run time of its live threads (``/proc/PID/task/TID/schedstat``,
first field; ``/proc/PID/schedstat`` for a single-threaded process) - the
tick counters of ``/proc/PID/stat`` only have 10 ms resolution - or the
ticks when they are higher (they also count threads that already exited),
plus the ticks of its reaped children. Without schedstat (a kernel without
``CONFIG_SCHED_INFO``) it uses the ticks alone. It does no blocking waits; a
process that vanishes mid-read is skipped. Without ``/proc`` it returns
``None`` and the runtime falls back to wall time.

Cost: one ``stat`` and one ``schedstat`` read per process of the bot (plus a
``task`` listing for a multi-threaded one), a few microseconds each.
"""

from __future__ import annotations

import os

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_HAVE_PROC = os.path.exists("/proc/self/stat")
_HAVE_SCHEDSTAT = os.path.exists("/proc/self/schedstat")


def _fields(pid: int | str) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    # after "pid (comm) ": state, ppid, pgrp, ... utime, stime, cutime, cstime at 11..14
    return data[data.rfind(b")") + 2 :].split()


def _seconds(pid: int | str, rest: list[bytes]) -> float:
    """CPU seconds of one process from its ``stat`` fields (see the module docstring)."""
    ticks = (int(rest[11]) + int(rest[12])) / _TICK
    children = (int(rest[13]) + int(rest[14])) / _TICK
    if not _HAVE_SCHEDSTAT:
        return ticks + children
    ns = 0
    try:
        if rest[17] == b"1":  # one thread: the leader's own line
            with open(f"/proc/{pid}/schedstat", "rb") as f:
                ns = int(f.read().split(None, 1)[0])
        else:
            for tid in os.listdir(f"/proc/{pid}/task"):
                try:
                    with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                        ns += int(f.read().split(None, 1)[0])
                except OSError:
                    continue  # a thread that just exited (its time is in the ticks)
    except (OSError, ValueError, IndexError):
        return ticks + children
    return max(ticks, ns / 1e9) + children


def _sandbox_ns(pgid: int) -> str | None:
    """The PID namespace the sandbox made for the bot whose watcher leads group
    ``pgid`` (its ``pid_for_children`` differs from its own), else None."""
    try:
        own = os.readlink(f"/proc/{pgid}/ns/pid")
        children = os.readlink(f"/proc/{pgid}/ns/pid_for_children")
    except OSError:
        return None
    return children if children != own else None


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (``/proc/PID/task/TID/children``)."""
    out = [pid]
    i = 0
    while i < len(out):
        p = out[i]
        i += 1
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children", "rb") as f:
                    out.extend(int(x) for x in f.read().split())
        except OSError:
            continue
    return out


def tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds used so far by ``pid`` and every live process below it
    (plus what they reaped), or ``None`` when ``/proc`` is unavailable or
    ``pid`` is gone. Children that were reaped automatically (``SIGCHLD``
    ignored) leave no trace here once gone: only a control group counts them."""
    if not _HAVE_PROC:
        return None
    total = 0.0
    found = False
    for p in _descendants(pid):
        rest = _fields(p)
        if rest is not None:
            found = True
            total += _seconds(p, rest)
    return total if found else None


def group_cpu_seconds(pgid: int) -> float | None:
    """CPU seconds used so far by the processes of group ``pgid`` - and, when
    the bot runs in its own PID namespace (see ``sandbox.py``), by every
    process of that namespace, so a bot cannot hide its thinking in a child
    that left the group with ``setsid()`` - or ``None`` when ``/proc`` is
    unavailable or the group has no live process."""
    if not _HAVE_PROC:
        return None
    total = 0.0
    found = False
    want = str(pgid).encode()
    ns = _sandbox_ns(pgid)
    if ns is not None:
        # the watcher (pid pgid) and its descendants: the bot is PID 1 of its namespace, so every
        # process it starts, orphans included, stays below it - no scan of all of /proc needed
        for pid in _descendants(pgid):
            rest = _fields(pid)
            if rest is not None:
                found = True
                total += _seconds(pid, rest)
        if found:
            return total
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        rest = _fields(name)
        if rest is None:
            continue
        if rest[2] != want:
            if ns is None:
                continue
            try:
                if os.readlink(f"/proc/{name}/ns/pid") != ns:
                    continue
            except OSError:
                continue
        found = True
        total += _seconds(name, rest)
    return total if found else None
