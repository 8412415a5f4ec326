"""The bots' seccomp filter: system calls no bot needs, denied.

Bots at one table must not talk to each other, and a bot should reach as
little of the kernel as it can. The filter is built with libseccomp (through
its Python bindings, PyPI ``pyseccomp``: no hand-written BPF), once per
referee process (:func:`program`), and given to bubblewrap as ``--seccomp FD``
(:func:`pass_program`, in the forked child before ``exec``): bwrap installs it
on the bot's process just before it executes the bot's command, so every
process the bot ever starts has it (filters are inherited and cannot be
removed). In the "basic" sandbox the bot's process installs it itself, last
before ``exec`` (:func:`installer`).

Denied, with ``EPERM`` (the call fails, the bot carries on) unless said:

* **file locks** - :data:`LOCKS`: ``flock``, and ``fcntl`` with ``F_GETLK``,
  ``F_SETLK``, ``F_SETLKW``, their ``F_OFD_*`` forms and leases
  (``F_SETLEASE``, ``F_GETLEASE``), and directory notifications
  (``F_NOTIFY``). Every bot sees the same system files (``/etc/passwd``...):
  a lock one bot takes on one of them, another can test - a covert channel
  (two bots read each other's hand through it in every game before this
  filter). ``inotify`` and ``fanotify`` are denied for the same reason (one
  bot opening a shared file is an event another can watch).
* **namespaces** - ``unshare``, ``setns``, and ``clone`` with any namespace
  flag (``CLONE_NEWNS``, ``NEWUSER``, ``NEWPID``, ``NEWNET``, ``NEWIPC``,
  ``NEWUTS``, ``NEWCGROUP``); ``clone3`` gets ``ENOSYS`` (its flags are out of
  a filter's reach; the C library then falls back to ``clone``).
* **the scheduling policy** - ``sched_setscheduler`` to any policy but
  ``SCHED_BATCH`` and ``SCHED_IDLE`` (:data:`POLICIES_DENIED`), and
  ``sched_setattr`` (``ENOSYS``: its policy is in memory a filter cannot
  read): every bot runs under ``SCHED_BATCH`` (the same CPU share, no
  preempting on wake-up: :func:`referee.runtime.sandbox.linux.batch_scheduling`);
  without the filter a bot could switch itself back to ``SCHED_OTHER`` and
  take the core from the referee (or another table's bot) whenever a line
  wakes it. Re-setting the policy a thread has, as mono does for every thread
  it starts, still works.
* **the rest of** :data:`DENIED`, after Docker's default profile: kernel
  keyrings, ``ptrace`` and reading other processes' memory, ``personality``,
  mounting (old and new mount API), ``pivot_root``, ``chroot``, kernel modules,
  ``kexec``, ``reboot``, swap, ``bpf``, ``perf_event_open``, ``userfaultfd``,
  setting the clocks, ``acct``, quotas, ``open_by_handle_at``, ``iopl``, ...
  (see docs/SECURITY.md for the list); ``io_uring_*`` get ``ENOSYS`` (runtimes
  that try it, libuv for one, fall back to ordinary calls), and so does
  ``sched_setattr`` (above).
* **other ABIs**: the filter is for the machine's own architecture; a system
  call through another ABI (i386 ``int 0x80`` or x32 on x86_64) kills the
  process (libseccomp's bad-architecture action: a filter written for one
  ABI's call numbers says nothing about another's).

Everything else is allowed. Errors: :func:`program` never raises: where
libseccomp or its bindings are missing it returns None (and :func:`status`
says why); the sandbox then runs bots without a filter and the game log's
header says ``"seccomp": "none"``.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import tempfile
from collections.abc import Callable
from typing import Any

#: fcntl commands that take, test or watch a lock, a lease or a directory
LOCKS = {
    "F_GETLK": 5,
    "F_SETLK": 6,
    "F_SETLKW": 7,
    "F_OFD_GETLK": 36,
    "F_OFD_SETLK": 37,
    "F_OFD_SETLKW": 38,
    "F_SETLEASE": 1024,
    "F_GETLEASE": 1025,
    "F_NOTIFY": 1026,
}

#: system calls denied outright (EPERM); names this libseccomp does not know are skipped
DENIED = (
    # file locks and file-system notifications: covert channels through shared files
    "flock",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "fanotify_init",
    "fanotify_mark",
    # namespaces
    "unshare",
    "setns",
    # kernel keyrings
    "keyctl",
    "add_key",
    "request_key",
    # other processes
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "personality",
    # mounts and the root
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "open_by_handle_at",
    "name_to_handle_at",
    # the kernel itself
    "init_module",
    "finit_module",
    "delete_module",
    "create_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "lookup_dcookie",
    "syslog",
    "acct",
    "quotactl",
    "quotactl_fd",
    "nfsservctl",
    "uselib",
    "_sysctl",
    "sysfs",
    "ustat",
    "vhangup",
    "iopl",
    "ioperm",
    # the clocks
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "stime",
)

#: system calls that get ENOSYS ("not here"), so that runtimes fall back to older calls
UNAVAILABLE = ("clone3", "io_uring_setup", "io_uring_enter", "io_uring_register", "sched_setattr")

#: scheduling policies a bot may not switch to with ``sched_setscheduler`` (EPERM): every bot
#: runs under SCHED_BATCH (:func:`referee.runtime.sandbox.linux.batch_scheduling`); setting
#: SCHED_BATCH again (what mono does for each thread it starts: the policy it has, its priority)
#: or SCHED_IDLE is allowed. Compared on the low byte (SCHED_RESET_ON_FORK is a high bit).
POLICIES_DENIED = {"SCHED_OTHER": 0, "SCHED_FIFO": 1, "SCHED_RR": 2, "SCHED_DEADLINE": 6}

#: clone flags that make a namespace
NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}

#: the fd number bwrap reads the program from (``--seccomp 5``): set up in the child
FD = 5

_status: dict[bool, str] = {}


@functools.cache
def program(locks: bool = False) -> bytes | None:
    """The filter as a BPF program (built once per process and kind), or None where
    libseccomp or its Python bindings are missing (:func:`status` says why).

    ``locks=True`` is the filter of a build step: the same, but file locks are
    allowed (go, cargo and gradle lock their own files; a build runs before the
    night, at no table, so a lock is no channel to another bot)."""
    try:
        with open("/proc/self/status") as f:
            if "Seccomp:" not in f.read():  # (the line exists where the kernel has seccomp)
                _status[locks] = "none (this kernel has no seccomp)"
                return None
    except OSError:
        pass  # no /proc here: let libseccomp tell
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:  # the bindings, or libseccomp.so.2 under them
        _status[locks] = f"none (libseccomp unavailable: {exc})"
        return None
    try:
        f = sc.SyscallFilter(defaction=sc.ALLOW)
        f.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
        skipped: list[str] = []

        def deny(name: str, err: int, *args: object) -> None:
            try:
                f.add_rule(sc.ERRNO(err), name, *args)
            except (ValueError, RuntimeError, OSError):
                skipped.append(name)  # a call this libseccomp (or architecture) does not know

        for name in DENIED:
            if locks and name == "flock":
                continue
            deny(name, errno.EPERM)
        for name in UNAVAILABLE:
            deny(name, errno.ENOSYS)
        for cmd in () if locks else LOCKS.values():
            deny("fcntl", errno.EPERM, sc.Arg(1, sc.EQ, cmd))
        for bit in NAMESPACE_FLAGS.values():
            deny("clone", errno.EPERM, sc.Arg(0, sc.MASKED_EQ, bit, bit))
        for policy in POLICIES_DENIED.values():
            deny("sched_setscheduler", errno.EPERM, sc.Arg(1, sc.MASKED_EQ, 0xFF, policy))
        with tempfile.TemporaryFile() as out:
            f.export_bpf(out)
            out.seek(0)
            data = out.read()
    except Exception as exc:  # libseccomp refused the filter: run without one, and say so
        _status[locks] = f"none (libseccomp failed: {exc})"
        return None
    what = "namespace clones; file locks allowed (a build)" if locks else "file locks, namespace clones"
    _status[locks] = f"on ({len(DENIED) + len(UNAVAILABLE) - len(skipped)} calls, {what})"
    return data


def status(locks: bool = False) -> str:
    """For the game log's header: ``"on (...)"`` or ``"none (why)"``."""
    program(locks)
    return _status.get(locks, "none")


#: what every JVM under the filter gets: no shared-memory performance file, whose flock()
#: the filter denies (the JVM would print a warning on the bot's stdout at every start)
JAVA_OPTION = "-XX:-UsePerfData"


def java_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` with :data:`JAVA_OPTION` added to ``JAVA_TOOL_OPTIONS`` (which
    every JVM reads, the compiler's included; it says so on stderr)."""
    current = env.get("JAVA_TOOL_OPTIONS", "")
    if "UsePerfData" in current:
        return env
    return {**env, "JAVA_TOOL_OPTIONS": f"{current} {JAVA_OPTION}".strip()}


def pass_program(data: bytes, fd: int = FD) -> None:
    """In the forked child, before ``exec``: make ``fd`` (inheritable) the read
    end of a pipe holding ``data`` and nothing more, for ``bwrap --seccomp fd``.
    Raises ``OSError``. (A pipe, not a file: no file-size limit applies, and
    each bwrap reads its own copy.)"""
    r, w = os.pipe()
    try:
        os.write(w, data)  # a few KiB: far below a pipe's buffer, never blocks
    finally:
        os.close(w)
    if r != fd:
        os.dup2(r, fd)
        os.close(r)
    os.set_inheritable(fd, True)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


def installer(data: bytes, libc: Any) -> Callable[[], None]:
    """For the "basic" sandbox: a function that installs the filter ``data``
    on the calling process (``no_new_privs``, then ``PR_SET_SECCOMP``), to be
    called last in the forked child before ``exec``; everything it needs is
    made here, before the fork. It raises ``OSError``."""
    buf = ctypes.create_string_buffer(data, len(data))
    prog = _SockFprog(len(data) // 8, ctypes.addressof(buf))

    def install() -> None:
        _ = buf  # kept alive with the closure
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")
        if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_SECCOMP): {os.strerror(err)}")

    return install
