"""Linux system calls and constants the sandbox needs (through ctypes): namespaces,
mounts, capabilities, rlimits, and the referee's lifeline pipe."""

from __future__ import annotations

import ctypes
import fcntl
import functools
import os
import resource
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
CAP_VERSION_3 = 0x20080522
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1, 32, 4096, 1024, 2048, 1 << 21
# the new mount API (the same numbers on every architecture)
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442
OPEN_TREE_CLONE, AT_RECURSIVE, AT_EMPTY_PATH, AT_FDCWD = 1, 0x8000, 0x1000, -100
MOVE_MOUNT_F_EMPTY_PATH, MOUNT_ATTR_IDMAP, MOUNT_ATTR_RDONLY = 4, 0x00100000, 0x1
MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV = 0x2, 0x4

#: kernel knobs read-only in every sandbox (runc's read-only /proc paths): a bot
#: writes no sysctl (kernel.core_pattern...), triggers no sysrq
PROC_READONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
#: and what it may not even read (runc's masked paths): files show as /dev/null, folders empty
PROC_MASKED = (
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug",
    "/proc/acpi",
    "/proc/asound",
    "/proc/scsi",
)

#: size of the private /dev/shm (and, with bwrap, /tmp) a sandboxed bot gets
SHM_KIB = 64 * 1024

#: the bot's temporary folder (HOME, TMPDIR), where the referee may mount (as root, or in
#: "basic" with a mount namespace): a tmpfs of its own, at most this big and this many
#: files and folders (beyond: ENOSPC), counted against its memory limit, never on the
#: host's disk, and freed by the kernel when its last process exits (nothing to remove)
WORKDIR_KIB = 256 * 1024
WORKDIR_INODES = 65536

#: the bot's uid and gid inside bwrap's user namespace ("nobody")
SANDBOX_UID = 65534

#: the environment every sandboxed bot gets (plus what the config passes)
LANG = "C.UTF-8"

_libc: Any = None


def libc_handle() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


# --------------------------------------------------------------------------
# the lifeline: a pipe whose write end only the referee holds

_lifeline: tuple[int, int, int] | None = None  # (owner pid, read fd, write fd)


def lifeline_fd() -> int:
    """The read end of this process's lifeline pipe (created on first use).

    Both ends are close-on-exec: only the watcher, which dups the read end to
    fd 3 before ``exec``, keeps a copy; the write end lives only in the referee.
    """
    global _lifeline
    if _lifeline is None or _lifeline[0] != os.getpid():
        r, w = os.pipe2(os.O_CLOEXEC)
        # never 0-3: the child's stdio (and fd 3 in the watcher) are set up over those numbers
        r2, w2 = fcntl.fcntl(r, fcntl.F_DUPFD_CLOEXEC, 10), fcntl.fcntl(w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(r)
        os.close(w)
        _lifeline = (os.getpid(), r2, w2)
    return _lifeline[1]


# what the machine allows: namespaces for "basic"


def unshare(flags: int) -> None:
    if libc_handle().unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")


def map_ids(uid: int, gid: int) -> None:
    """Inside a fresh user namespace: map our own uid/gid to themselves."""
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {gid} 1")


def batch_scheduling() -> None:
    """Put the calling process (and everything it starts: the policy is
    inherited through ``fork`` and ``exec``) under ``SCHED_BATCH``: the same
    CPU share as an ordinary process (its weight is unchanged), but a waking
    batch process does not preempt the one running, it waits for the
    scheduler's tick or for that process to sleep. Every bot runs so: a line
    the referee writes to a bot no longer hands the bot the referee's core at
    once, in the middle of its work for the table. Where the policy cannot be
    set (not Linux), nothing changes. Runs in a forked child: never raises."""
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except (AttributeError, OSError):
        pass


def set_rlimits(pairs: list[tuple[int, int]]) -> None:
    for which, value in pairs:
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            # cannot raise a hard limit: keep the lower inherited one
            soft, hard = resource.getrlimit(which)
            if hard == resource.RLIM_INFINITY or value < hard:
                raise


def drop_capabilities(libc: Any, last_cap: int) -> None:
    """Empty the capability bounding set (needs CAP_SETPCAP, so before any
    change of user): nothing the bot executes can gain a capability."""
    for cap in range(last_cap + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL for caps this kernel lacks: fine


def clear_capabilities(libc: Any) -> None:
    """Drop every capability of the calling process and set no_new_privs."""
    header = (ctypes.c_uint32 * 2)(CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    if libc.capset(header, data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")


@functools.cache
def cap_last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 40


class MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def to_bytes(x: str | bytes | None) -> bytes | None:
    return x.encode() if isinstance(x, str) else x


def mount(
    source: str | bytes | None, target: str | bytes, fstype: str | bytes | None, flags: int, data: Any = None
) -> None:
    libc = libc_handle()
    if libc.mount(to_bytes(source), to_bytes(target), to_bytes(fstype), ctypes.c_ulong(flags), to_bytes(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target!r}: {os.strerror(err)}")


def syscall(number: int, *args: Any) -> int:
    libc = libc_handle()
    conv = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    r = int(libc.syscall(ctypes.c_long(number), *conv))
    if r < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"syscall {number}: {os.strerror(err)}")
    return r
