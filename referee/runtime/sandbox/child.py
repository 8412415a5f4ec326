"""The forked child before ``exec``: what it needs (:class:`Child`), its first
steps, the watcher it becomes, and the mounts of the bot's own namespace."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import re
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

from .. import cgroups
from .linux import (
    MS_BIND,
    MS_NOATIME,
    MS_NODEV,
    MS_NODIRATIME,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_RELATIME,
    MS_REMOUNT,
    PROC_MASKED,
    PROC_READONLY,
    WORKDIR_INODES,
    WORKDIR_KIB,
    libc_handle,
    mount,
)
from .view import inside

# --------------------------------------------------------------------------
# in the forked child


@dataclass
class Child:
    """What the forked child needs (computed before the fork)."""

    pairs: list[tuple[int, int]] = field(default_factory=list)
    flags: int = 0
    lifeline: int = -1
    workdir: str = ""
    ids: tuple[int, int] | None = None
    cgroup: cgroups.BotCgroup | None = None
    private_shm: bool = True
    signal_codes: bool = False
    keep_fds: tuple[int, ...] = ()
    seccomp: bytes | None = None  # the filter: bwrap reads it from fd seccomp.FD; basic installs it before exec
    tmpfs: bool = False  # mount a tmpfs on the workdir (bwrap: in a mount namespace of its own)
    uid_lock: int = -1  # the flock of the bot's own uid (allocate_uid), kept by the watcher
    covers: list[tuple[str, list[str]]] = field(default_factory=list)  # see _covers
    idmaps: list[tuple[str, int, bool]] = field(default_factory=list)  # (path, userns fd, writable): see uid_setup
    keep_writable: list[str] = field(default_factory=list)  # basic as root: all else is read-only
    #: 0o077, but 0o022 with a writable folder (a build): what it makes there must be readable and
    #: executable by the bot, which runs later as another host uid
    umask: int = 0o077
    hidden: list[str] = field(default_factory=list)  # basic: paths covered by nothing (see expose)


#: the watcher's program (a file of this package, standard library only), run as
#: ``python -I -S WATCHER BOT_PID WORKDIR CODES CGROUP_DIR...``
WATCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "watcher.py")
#: check-bot's leftover probe (a POSIX shell script; see the file), run in the sandbox as
#: ``/bin/sh PROBE JUGGLE REPORT_FD ARGV...``
PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.sh")
#: what runs the bot in bwrap: ``/bin/sh -c JUGGLE sh ARGV...`` - the bot's stdin and stdout
#: pipes arrive as fds 3 and 4 (bwrap's own processes hold /dev/null as stdin/stdout, so the
#: bot alone holds its pipes: its closing stdout is seen at once), move back to 0 and 1, and
#: the shell becomes the bot
JUGGLE = 'exec "$@" 0<&3 1>&4 3<&- 4>&-'


def become_watcher(child: Child, pid: int) -> None:
    """In the forked child, after forking the bot (``pid``): become the watcher.
    Never returns."""
    # no pipes of the bot, only the lifeline as fd 3 (lifeline >= 10: dup2 onto a
    # different number clears close-on-exec)
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.dup2(child.lifeline, 3)
        if child.uid_lock >= 0:
            os.dup2(child.uid_lock, 4)  # the bot's uid stays locked until the watcher (after the bot) exits
        os.closerange(5 if child.uid_lock >= 0 else 4, 1 << 16)
        groups = child.cgroup.dirs() if child.cgroup is not None else []
        python = sys.executable
        os.execv(
            python,
            [python, "-I", "-S", WATCHER, str(pid), child.workdir, "1" if child.signal_codes else "0", *groups],
        )
    finally:
        # exec failed: do not leave an unwatched bot behind
        try:
            os.kill(pid, signal.SIGKILL)
        finally:
            os._exit(127)


def prepare(child: Child) -> None:
    """The child's first steps: the working directory and the control groups."""
    if child.workdir:
        os.mkdir(child.workdir, 0o700)
        if child.ids is not None:
            os.chown(child.workdir, child.ids[0], child.ids[1])
    if child.cgroup is not None:
        child.cgroup.create()


def mount_workdir(child: Child, libc: Any, private: bool = False) -> None:
    """In the bot's own mount namespace: a tmpfs of :data:`WORKDIR_KIB` and
    :data:`WORKDIR_INODES` on its temporary folder (``private``: first stop
    mounts propagating to the host). Raises ``OSError``."""
    if private and libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), "cannot make the bot's mounts private")
    opts = b"size=%dk,nr_inodes=%d,mode=0700" % (WORKDIR_KIB, WORKDIR_INODES)
    if child.ids is not None:
        opts += b",uid=%d,gid=%d" % child.ids
    if libc.mount(b"tmpfs", os.fsencode(child.workdir), b"tmpfs", MS_NOSUID | MS_NODEV, opts) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"cannot mount a tmpfs on the bot's temporary folder: {os.strerror(err)}")


def proc_readonly(strict: bool) -> None:
    """In the bot's mount namespace: :data:`PROC_READONLY` read-only, :data:`PROC_MASKED` hidden.
    ``strict`` (a root referee): a knob that cannot be made read-only stops the bot's start;
    otherwise (a user namespace of a non-root referee, whose bots the kernel does not let write
    the host's sysctls anyway) it is best effort."""
    for p in PROC_READONLY:
        if os.path.lexists(p):
            try:
                mount(p, p, None, MS_BIND | MS_REC)
                mount(None, p, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
            except OSError:
                if strict:
                    raise
    for p in PROC_MASKED:
        try:
            if os.path.isdir(p):
                mount("tmpfs", p, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555")
            elif os.path.lexists(p):
                mount("/dev/null", p, None, MS_BIND)
        except OSError:
            pass  # masking is the second line: the bot's uid may not read these anyway


def readonly_host(keep: list[str], shm: bool) -> None:
    """In the bot's mount namespace (root): every mount read-only except the
    bot's own ``keep`` folders (its temporary folder, a writable folder), its
    /proc and (``shm``) its private /dev/shm."""
    for k in keep:
        mount(k, k, None, MS_BIND | MS_REC)
    with open("/proc/self/mountinfo", "rb") as f:
        points = [
            re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), line.split()[4]).decode(
                errors="surrogateescape"
            )
            for line in f
        ]
    libc = libc_handle()
    for mp in points:
        if mp in keep or inside(mp, "/proc") or (shm and mp == "/dev/shm"):
            continue
        try:
            st = os.statvfs(mp)
        except OSError:
            continue  # hidden under another mount
        flags = MS_BIND | MS_REMOUNT | MS_RDONLY
        flags |= st.f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME)
        if st.f_flag & 4096:  # ST_RELATIME
            flags |= MS_RELATIME
        if libc.mount(None, mp.encode(errors="surrogateescape"), None, ctypes.c_ulong(flags), None) != 0:
            err = ctypes.get_errno()
            if err not in (errno.ENOENT, errno.EACCES):
                raise OSError(err, f"cannot make {mp} read-only for the bot: {os.strerror(err)}")


def report_file(ids: tuple[int, int] | None) -> int:
    """An anonymous file (0600, fd >= 10) for the leftover probe's report."""
    fd = os.open(tempfile.gettempdir(), os.O_TMPFILE | os.O_RDWR, 0o600)
    try:
        if ids is not None:
            os.fchown(fd, ids[0], ids[1])
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    finally:
        os.close(fd)
    return high
