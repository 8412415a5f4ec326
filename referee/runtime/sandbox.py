"""The bot sandbox: how a bot process is started so that it cannot outlive,
starve or snoop on the referee, the other bots or the league's files.

:func:`plan_spawn` turns a :class:`~referee.runtime.spec.BotSpec` into a
:class:`SpawnPlan` - the argv, working directory, environment and
``preexec_fn`` to hand to :func:`trio.lowlevel.open_process` (with
``start_new_session=True``) - and :meth:`SpawnPlan.release` (or the blocking
:meth:`SpawnPlan.cleanup`) removes what the plan created once the process
group is dead.

Three sandboxes (``[limits] sandbox``, see docs/SECURITY.md):

* ``"bwrap"`` - bubblewrap (the default where it is installed and works)::

    referee ──pipe──> watcher (python -I -S, pid W, own session; host namespaces)
                        └── bwrap (in the bot's cgroup; dies with the watcher)
                              └── bwrap's init, PID 1 of a new PID namespace
                                    └── the bot (new user namespace, uid 65534 inside - on the
                                        host a uid of its own, never 0 - no capabilities,
                                        read-only /proc/sys, own session, own IPC/UTS/cgroup
                                        [and network] namespaces, a fresh /proc, minimal
                                        /dev, tmpfs /tmp; only its own files and the
                                        system paths a runtime needs are mounted)

* ``"basic"`` - the home-made sandbox for machines without bwrap: the watcher
  forks the bot into a new PID namespace (and network namespace for
  ``network = false``; as a non-root user also a user namespace), where it is
  PID 1, in its own session, with a private /proc (its kernel knobs
  read-only) and /dev/shm and, having done its mounts, no capabilities
  left. It sees the host's file system - read-only, but for its own
  folders, where the referee is root.
* ``"none"`` - only the rlimits (trusted bots, debugging).

In the first two the **watcher** is the process the runtime sees (its pid is
the process group id). It holds no pipe of the bot (its stdio is /dev/null),
is in none of the bot's groups or namespaces (the bot can neither name nor
signal it), waits for the bot and exits with the bot's status. It holds the
read end of the referee's *lifeline* pipe, whose write end only the referee
holds: when the referee dies in any way - even SIGKILL - the watcher sees
end-of-file at once, kills the bot with everything it started (its PID
namespace and its control group) and removes its working directory and
groups. The bot (bwrap, or the bot itself in "basic") has the watcher as
parent and dies with it (``PR_SET_PDEATHSIG``): killing the watcher's process
group, as the runtime does to end a bot, ends the bot. (Why not a parent-death
signal tied to the referee? The kernel sends it when the parent *thread*
exits, and trio forks in a worker thread that exits after 10 s idle.)

**Host uids.** A root referee never runs a bot as root: without ``user``
every bot and build gets a host uid and gid of its own (:func:`allocate_uid`,
``uid_base`` / ``uid_count``), so bots cannot read each other's or the
referee's files and each has its own RLIMIT_NPROC. Before dropping to that
uid the child (still root, in a mount namespace of the bot's own) makes
what the bot needs reachable (:func:`_covers`, :func:`_expose`: an
interpreter under the 0700 /root) and mounts its writable folder idmapped.

**Control groups** (:mod:`referee.runtime.cgroups`): where the machine lets
the referee make them, every bot gets its own (CPU accounting, the memory
limit counting page cache and shared memory, the process limit); the bot's
first process joins before ``exec``.

**Seccomp** (:mod:`referee.runtime.seccomp`): in "bwrap" and "basic" the bot
runs under a filter denying file locks and the calls no bot needs. **The
temporary folder**: where the bot's process may mount (root, or "basic" with a
mount namespace), a bounded tmpfs of its own (:data:`WORKDIR_KIB`,
:data:`WORKDIR_INODES`); a host folder is removed off trio's loop.

Errors: :func:`plan_spawn` raises ``UserError`` for impossible requests
(``sandbox = "bwrap"`` or ``require_sandbox`` where bwrap cannot run, network
isolation unavailable, an unknown user, another user without root). The
first call probes what the machine allows by starting ``/bin/true`` the same
way (tens of milliseconds, once per process, blocking). A failure inside the
child before ``exec`` makes the child exit before the bot starts; the runtime
reports that as the bot failing to start. Nothing here is cancellable except
:meth:`SpawnPlan.release`, which is shielded by its callers; cleanup never
raises.
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import fcntl
import functools
import os
import re
import resource
import secrets
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from referee.errors import UserError

from . import cgroups, seccomp

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_CAP_VERSION_3 = 0x20080522
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 1, 32, 4096, 1024, 2048, 1 << 21
# the new mount API (the same numbers on every architecture)
_SYS_OPEN_TREE, _SYS_MOVE_MOUNT, _SYS_MOUNT_SETATTR = 428, 429, 442
_OPEN_TREE_CLONE, _AT_RECURSIVE, _AT_EMPTY_PATH, _AT_FDCWD = 1, 0x8000, 0x1000, -100
_MOVE_MOUNT_F_EMPTY_PATH, _MOUNT_ATTR_IDMAP, _MOUNT_ATTR_RDONLY = 4, 0x00100000, 0x1
_MOUNT_ATTR_NOSUID, _MOUNT_ATTR_NODEV = 0x2, 0x4

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
_LANG = "C.UTF-8"

#: the sandboxes, in the order "auto" tries them
MODES = ("bwrap", "basic", "none")

_libc: Any = None


def _libc_handle() -> Any:
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


# --------------------------------------------------------------------------
# the watcher (runs as ``python -I -S -c WATCHER bot_pid workdir codes cgroup_dir...``)

WATCHER = r"""
import os, select, signal, sys, time
pid = int(sys.argv[1]); workdir = sys.argv[2]; codes = sys.argv[3] == "1"; groups = sys.argv[4:]
def rmtree(top):
    if not top:
        return
    for root, dirs, files in os.walk(top, topdown=False):
        for name in files:
            try: os.unlink(os.path.join(root, name))
            except OSError: pass
        for name in dirs:
            p = os.path.join(root, name)
            try:
                if os.path.islink(p): os.unlink(p)
                else: os.rmdir(p)
            except OSError: pass
    try: os.rmdir(top)
    except OSError: pass
def kill_groups():
    for d in groups:
        try:
            with open(os.path.join(d, "cgroup.kill"), "w") as f: f.write("1")
            return
        except OSError: pass
    for _ in range(100):
        pids = []
        for d in groups:
            try:
                with open(os.path.join(d, "cgroup.procs")) as f: pids = f.read().split()
                break
            except OSError: pass
        if not pids:
            return
        for p in pids:
            try: os.kill(int(p), signal.SIGKILL)
            except OSError: pass
def remove_groups():
    if not groups:
        return
    deadline = time.monotonic() + 2.0
    while True:
        kill_groups()
        left = False
        for d in reversed(groups):
            try: os.rmdir(d)
            except FileNotFoundError: pass
            except OSError: left = True
        if not left or time.monotonic() > deadline:
            return
        time.sleep(0.005)
referee_gone = False
try:
    pidfd = os.pidfd_open(pid)
except (AttributeError, OSError):
    pidfd = None
if pidfd is not None:
    p = select.poll()
    p.register(3, select.POLLIN | select.POLLHUP)
    p.register(pidfd, select.POLLIN)
    while True:
        try:
            ready = p.poll()
        except InterruptedError:
            continue
        if any(fd == 3 for fd, ev in ready):
            referee_gone = True  # end of file (or an error) on the lifeline: the referee is gone
        break
else:
    while True:
        r, _, _ = select.select([3], [], [], 0.25)
        if r:
            referee_gone = True
            break
        if os.waitpid(pid, os.WNOHANG)[0]:
            remove_groups(); rmtree(workdir)
            os._exit(0)
if referee_gone:
    try: os.kill(pid, signal.SIGKILL)
    except OSError: pass
    kill_groups()
while True:
    try:
        _, status = os.waitpid(pid, 0)
        break
    except InterruptedError:
        continue
    except ChildProcessError:
        status = 0
        break
remove_groups()
rmtree(workdir)
if referee_gone:
    os.killpg(0, signal.SIGKILL)
sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
if not sig and codes and os.WIFEXITED(status) and 128 < os.WEXITSTATUS(status) <= 128 + 64:
    sig = os.WEXITSTATUS(status) - 128   # bwrap reports a bot killed by signal N as exit status 128 + N
if sig:
    try: signal.signal(sig, signal.SIG_DFL)
    except (OSError, ValueError): pass
    os.kill(os.getpid(), sig)
os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)
"""

#: what runs the bot inside a sandbox where it needs a wrapper: ``sh -c INNER sh
#: JUGGLE REPORT_FD ARGV...``. JUGGLE=1 (bwrap): the bot's stdin and stdout pipes
#: arrive as fds 3 and 4 (bwrap's own processes hold /dev/null as stdin/stdout, so
#: the bot alone holds its pipes: its closing stdout is seen at once) and move back to
#: 0 and 1. Without REPORT_FD the shell then becomes the bot (``exec``). With it
#: (check-bot's leftover probe) the bot runs as the shell's child; once it has exited
#: the shell lists the processes still alive in the sandbox's PID namespace (other
#: than PID 1 and itself) into the report file and exits with the bot's status
INNER = r"""
if [ "$1" = 1 ]; then exec 0<&3 1>&4 3<&- 4>&-; fi
fd=$2; shift 2
[ -z "$fd" ] && exec "$@"
"$@"
s=$?
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  [ "$p" = 1 ] && continue
  [ "$p" = $$ ] && continue
  read -r st < "$d/stat" 2>/dev/null || continue
  case "${st##*) }" in Z*) continue;; esac
  read -r c < "$d/comm" 2>/dev/null || c='?'
  echo "$p $c" >> "/proc/self/fd/$fd"
done
exit $s
"""


# --------------------------------------------------------------------------
# what the machine allows: namespaces for "basic"


def _unshare(flags: int) -> None:
    if _libc_handle().unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")


def _map_ids(uid: int, gid: int) -> None:
    """Inside a fresh user namespace: map our own uid/gid to themselves."""
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {gid} 1")


def _ns_flags(network: bool, user: bool, mount: bool = False) -> int:
    flags = _CLONE_NEWPID
    if mount:
        flags |= _CLONE_NEWNS
    if not network:
        flags |= _CLONE_NEWNET
    if user:
        flags |= _CLONE_NEWUSER
    return flags


@functools.lru_cache(maxsize=None)
def namespace_support(network: bool) -> tuple[bool, str]:
    """Can "basic" bots get their own PID namespace (and, with
    ``network=False``, their own network namespace)? Returns ``(ok,
    how_or_why)``: ``how`` is "root" or "user namespace"; ``why`` is the reason
    it is not possible. Probed once per process by starting ``/bin/true`` the
    way a bot would be started."""
    if not sys.platform.startswith("linux"):
        return False, f"namespaces need Linux (this is {sys.platform})"
    uid, gid = os.getuid(), os.getgid()
    errors: list[str] = []
    for user in (False, True) if uid == 0 else (True,):
        flags = _ns_flags(network, user)

        def probe(flags: int = flags, user: bool = user) -> None:
            _unshare(flags)
            if user:
                _map_ids(uid, gid)

        try:
            rc = subprocess.run(
                ["/bin/true"],
                preexec_fn=probe,
                timeout=10,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            ).returncode
        except (OSError, subprocess.SubprocessError) as exc:
            errors.append(str(exc))
            continue
        if rc == 0:
            return True, "user namespace" if user else "root"
        errors.append(f"probe exited with {rc}")
    why = "; ".join(errors) or "unknown"
    return False, (
        f"this machine does not allow new {'network and ' if not network else ''}PID namespaces "
        f"for uid {uid} ({why}); run the referee as root, or enable unprivileged user namespaces "
        "(e.g. sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces > 0)"
    )


@functools.lru_cache(maxsize=None)
def private_proc_support(network: bool) -> bool:
    """Can a "basic" bot in its own PID namespace also get its own mount
    namespace with a private ``/proc``? (Some containers forbid mounting proc.)
    Probed once per process by starting ``/bin/true`` exactly the way a bot is
    started."""
    ok, how = namespace_support(network)
    if not ok:
        return False
    flags = _ns_flags(network, how == "user namespace", mount=True)
    try:
        rc = subprocess.run(
            ["/bin/true"],
            preexec_fn=_basic_preexec(_Child(flags=flags, lifeline=lifeline_fd())),
            timeout=10,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        ).returncode
    except (OSError, subprocess.SubprocessError):
        return False
    return rc == 0


# --------------------------------------------------------------------------
# what the machine allows: bubblewrap


@functools.lru_cache(maxsize=None)
def bwrap_path() -> str | None:
    """The ``bwrap`` executable (``REFEREE_BWRAP`` or the PATH), or None."""
    path = os.environ.get("REFEREE_BWRAP") or shutil.which("bwrap")
    return path if path and os.access(path, os.X_OK) else None


#: the bwrap options that not every version has (0.8.0: --disable-userns, --size)
_NEW_OPTIONS = ("disable-userns", "size")


@functools.lru_cache(maxsize=None)
def bwrap_support(network: bool = True, uid: int | None = None) -> tuple[bool, str]:
    """Can bwrap start a bot here (with ``network`` or without it; as the
    referee's user, or - the referee being root - as ``uid``)? Returns ``(ok,
    why)``; probed once per process and argument pair by starting ``/bin/true``
    in a sandbox built exactly like a bot's. ``uid`` -1: as a uid of the bots'
    range (:func:`allocate_uid`), as a root referee runs its bots."""
    if not sys.platform.startswith("linux"):
        return False, f"bubblewrap needs Linux (this is {sys.platform})"
    path = bwrap_path()
    if path is None:
        return False, (
            "bubblewrap is not installed (no `bwrap` on the PATH); install it "
            "(Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
        )
    errors: list[str] = []
    lock = None
    if uid == -1:
        uid, lock = allocate_uid()
    try:
        return _bwrap_probe(path, network, uid, errors)
    finally:
        if lock is not None and uid is not None:
            release_uid(uid, lock)


def _bwrap_probe(path: str, network: bool, uid: int | None, errors: list[str]) -> tuple[bool, str]:
    for features in (frozenset(_NEW_OPTIONS), frozenset()):
        args = _bwrap_args(path, features, network=network, binds=[], masks=[], chdir="/", hostname=True)
        ids = None if uid is None else (uid, _gid_of(uid))
        try:
            run = subprocess.run(
                [*args, "--", "/bin/true"],
                preexec_fn=_as_user(ids),
                timeout=10,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            errors.append(str(exc))
            continue
        if run.returncode == 0:
            _BWRAP_FEATURES[path] = features
            return True, "bwrap" + ("" if features else " (an old version: without --disable-userns and --size)")
        errors.append(
            run.stderr.decode(errors="replace").strip().splitlines()[-1:][0]
            if run.stderr.strip()
            else f"exit status {run.returncode}"
        )
    who = "" if uid is None else f" as uid {uid}"
    return False, (
        f"bubblewrap ({path}) cannot start a sandbox here{who}: {errors[0]}; it needs user "
        "namespaces (sysctl user.max_user_namespaces > 0, and on Debian/Ubuntu "
        "kernel.unprivileged_userns_clone=1 or an AppArmor profile allowing bwrap)"
    )


_BWRAP_FEATURES: dict[str, frozenset[str]] = {}


def _gid_of(uid: int) -> int:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_gid
    except KeyError:
        return uid


def _as_user(ids: tuple[int, int] | None) -> Callable[[], None] | None:
    if ids is None:
        return None

    def switch() -> None:
        os.setgroups([])
        os.setgid(ids[1])
        os.setuid(ids[0])

    return switch


#: the system paths a runtime needs, mounted read-only (the ones that exist)
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = ("ld.so.cache", "alternatives", "localtime", "nsswitch.conf", "passwd", "group")
#: /etc files only a bot with network access needs (name resolution, TLS certificates)
_ETC_NET = ("hosts", "resolv.conf", "gai.conf", "services", "ssl/certs", "pki/tls/certs")
#: /etc folders some runtimes reach through symlinks (Debian's Python, JDKs) or read (mono's dllmap config,
#: without which it cannot load its own native library)
_ETC_GLOBS = ("python3", "java", "mono")
#: folders never mounted whole (a named file in them is mounted alone)
_NEVER_WHOLE = (
    "/",
    "/tmp",
    "/var/tmp",
    "/dev/shm",
    "/dev",
    "/proc",
    "/sys",
    "/run",
    "/etc",
    "/var",
    "/home",
    "/root",
    "/usr",
    "/opt",
    "/mnt",
    "/media",
    "/srv",
    "/boot",
)


@functools.lru_cache(maxsize=None)
def _system_args(network: bool) -> tuple[str, ...]:
    """The read-only system mounts (each one costs bwrap a fraction of a millisecond)."""
    out: list[str] = []
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            out += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            out += ["--ro-bind", d, d]
    names = list(_ETC) + (list(_ETC_NET) if network else [])
    try:
        names += sorted(n for n in os.listdir("/etc") if n.startswith(_ETC_GLOBS))
    except OSError:
        pass
    for name in names:
        path = os.path.join("/etc", name)
        if os.path.exists(path):  # (a dangling symlink would stop bwrap)
            out += ["--ro-bind", path, path]
    return tuple(out)


@functools.lru_cache(maxsize=None)
def _proc_args() -> tuple[str, ...]:
    """bwrap: the kernel knobs of the bot's /proc read-only, the masked ones hidden."""
    out: list[str] = []
    for p in PROC_READONLY:
        if os.path.lexists(p):
            out += ["--ro-bind", p, p]
    for p in PROC_MASKED:
        if os.path.isdir(p):
            out += ["--tmpfs", p, "--remount-ro", p]
        elif os.path.lexists(p):
            out += ["--ro-bind", "/dev/null", p]
    return tuple(out)


def _bwrap_args(
    path: str,
    features: frozenset[str],
    *,
    network: bool,
    binds: list[tuple[str, bool]],
    masks: list[str],
    chdir: str,
    hostname: bool = True,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The bwrap command line up to (not including) ``--``: ``binds`` are
    ``(path, writable)`` mounted at the same path, ``masks`` are paths inside
    them hidden from the bot."""
    args = [path, "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    if "disable-userns" in features:
        args.append("--disable-userns")
    args += ["--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if hostname:
        args += ["--hostname", "referee-bot"]
    if not network:
        args.append("--unshare-net")
    args += ["--new-session", "--die-with-parent", *_system_args(network), "--proc", "/proc", *_proc_args()]
    args += ["--dev", "/dev"]
    size = ["--size", str(SHM_KIB * 1024)] if "size" in features else []
    args += [*size, "--tmpfs", "/dev/shm", *size, "--tmpfs", "/tmp"]
    for src, writable in binds:
        args += ["--bind" if writable else "--ro-bind", src, src]
    for mask in masks:
        if os.path.isdir(mask):
            args += ["--tmpfs", mask, "--remount-ro", mask]
        else:
            args += ["--ro-bind", "/dev/null", mask]
    args += ["--chdir", chdir]
    if seccomp_fd is not None:  # the filter (referee.runtime.seccomp), read from this fd
        args += ["--seccomp", str(seccomp_fd)]
    return args


# --------------------------------------------------------------------------
# which sandbox, and whether the limits can be met


def sandbox_mode(limits: Any) -> tuple[str, str | None]:
    """``(mode, problem)``: the sandbox a bot with ``limits`` gets here
    ("bwrap", "basic" or "none"), and why that is not what it asked for (None
    when fine). ``sandbox = true`` ("auto") means bwrap where it works, else
    basic; ``require_sandbox`` refuses anything but bwrap."""
    if limits is None:
        from .limits import ResourceLimits

        limits = ResourceLimits()
    wanted = getattr(limits, "isolation", "auto") if getattr(limits, "sandbox", True) else "none"
    require = getattr(limits, "require_sandbox", False)
    if wanted in ("none", "basic"):
        if require:
            return wanted, (
                f'require_sandbox = true, but sandbox = "{wanted}"; use sandbox = "bwrap" '
                "(or true) to run the bots in bubblewrap, or drop require_sandbox"
            )
        return wanted, None
    network = getattr(limits, "network", True)
    ok, why = bwrap_support(network, _bwrap_uid(limits))
    if ok:
        return "bwrap", None
    if wanted == "bwrap":
        return "bwrap", f'sandbox = "bwrap" is not possible here: {why}; or use sandbox = "basic"'
    if require:
        return "bwrap", (
            f"require_sandbox = true (bots only in bubblewrap), but {why}; this host cannot run the league as asked"
        )
    _warn_fallback(why)
    return "basic", None


_WARNED: list[str] = []


def _warn_fallback(why: str) -> None:
    """One ``warning:`` line per process when ``sandbox = true`` falls back to "basic"."""
    if _WARNED:
        return
    _WARNED.append(why)
    print(
        f"warning: the bots run in the basic sandbox, not in bubblewrap: {why} "
        '(set sandbox = "basic" to accept this without a warning, or require_sandbox = true to refuse it)',
        file=sys.stderr,
        flush=True,
    )


def _bwrap_uid(limits: Any) -> int | None:
    user = getattr(limits, "user", None)
    if user is None:
        return -1 if os.geteuid() == 0 else None
    try:
        return _resolve_user(user)[0]
    except ValueError:
        return None


def limits_problem(limits: Any) -> str | None:
    """Why this machine cannot do what ``limits`` asks (bwrap asked for or
    required where it cannot run, ``network = false`` without network
    namespaces, ``user`` when not root or unknown), or None."""
    if limits is None:
        return None
    mode, problem = sandbox_mode(limits)
    if problem:
        return problem
    if mode == "none":
        return None
    if mode == "basic" and getattr(limits, "network", True) is False:
        ok, why = namespace_support(False)
        if not ok:
            return (
                f"network = false (run bots without network access) is not possible here: {why}; "
                "set network = true to run the bots with network access"
            )
    user = getattr(limits, "user", None)
    if user is not None:
        try:
            uid, _gid = _resolve_user(user)
            if getattr(limits, "temp_workdir", True):
                _check_reachable(os.path.join(tempfile.gettempdir(), "x"), uid, user)
        except (ValueError, UserError) as exc:
            return str(exc)
    return None


def _resolve_user(user: str | int) -> tuple[int, int]:
    """``(uid, gid)`` of ``user``; ``ValueError`` with a clear text if unknown or
    if switching users needs root and the referee is not root."""
    import pwd

    try:
        entry = pwd.getpwuid(int(user)) if isinstance(user, int) or str(user).isdigit() else pwd.getpwnam(str(user))
    except KeyError:
        raise ValueError(f"user = {user!r}: no such user on this machine") from None
    if entry.pw_uid != os.geteuid() and os.geteuid() != 0:
        raise ValueError(
            f"user = {user!r}: running bots as another user needs the referee to run as root "
            f"(it runs as uid {os.geteuid()}); leave user out to run them as yourself"
        )
    return entry.pw_uid, entry.pw_gid


def _check_reachable(path: str, uid: int, user: Any, what: str = "the bots' temporary folders are made in") -> None:
    """``UserError`` unless every folder above ``path`` lets ``uid`` pass."""
    parent = os.path.dirname(path)
    while True:
        st = os.stat(parent)
        if not (st.st_mode & 0o001 or (st.st_uid == uid and st.st_mode & 0o100)):
            raise UserError(
                f"user = {user!r}: {what} {os.path.dirname(path)}, but that user "
                f"cannot enter {parent}; "
                + (
                    "set TMPDIR to a folder it can reach (e.g. /var/tmp)"
                    if "temporary" in what
                    else "make it reachable (chmod o+x) or move it"
                )
            )
        if parent == "/":
            return
        parent = os.path.dirname(parent)


def check_limits(limits: Any, where: str = "limits") -> None:
    """Raise :class:`UserError` (``where: reason``) if ``limits`` asks for
    something this machine cannot do (see :func:`limits_problem`)."""
    problem = limits_problem(limits)
    if problem:
        raise UserError(f"{where}: {problem}")


# --------------------------------------------------------------------------
# a host uid of its own for every bot (a root referee without ``user``)

#: the default range of host uids (and gids) a root referee gives its bots: above
#: systemd's container range (up to 0x6FFFFFFF) and below its foreign range (0x7FFE0000)
UID_BASE = 2_000_000_000
UID_COUNT = 65536
#: where referee processes on one host lock the uids their bots run as (one file per uid)
UID_LOCK_DIR = "/run/referee-uids"

_UIDS_IN_USE: set[int] = set()
_UID_POOL_LOCK = threading.Lock()


def uid_range(limits: Any = None) -> tuple[int, int]:
    """``(first, count)``: the host uids a root referee runs its bots as -
    ``limits.uid_base`` / ``uid_count``, else ``REFEREE_UID_BASE`` /
    ``REFEREE_UID_COUNT`` from the environment, else :data:`UID_BASE` and
    :data:`UID_COUNT`. ``UserError`` for a bad value or a range that holds
    uid 0 or reaches past 2**32 - 2."""
    out = []
    for key, env, default in (
        ("uid_base", "REFEREE_UID_BASE", UID_BASE),
        ("uid_count", "REFEREE_UID_COUNT", UID_COUNT),
    ):
        value = getattr(limits, key, None)
        if value is None:
            text = os.environ.get(env, "").strip()
            if text:
                if not text.isdigit() or int(text) < 1:
                    raise UserError(f"{env}={text!r}: expected a whole number >= 1")
                value = int(text)
            else:
                value = default
        out.append(int(value))
    first, count = out
    if first < 1 or count < 1 or first + count > (1 << 32) - 2:
        raise UserError(
            f"uid_base = {first}, uid_count = {count}: the bots' host uids must lie in 1 .. 4294967293 "
            "(never 0, never (uid_t) -1)"
        )
    return first, count


def _uid_lock_dir() -> str:
    """The lock folder (root's own, 0700), made on first use."""
    for top in (UID_LOCK_DIR, os.path.join(tempfile.gettempdir(), "referee-uids-0")):
        try:
            os.makedirs(top, mode=0o700, exist_ok=True)
            st = os.lstat(top)
        except OSError:
            continue
        if st.st_uid == os.geteuid() and not os.path.islink(top) and not st.st_mode & 0o022:
            return top
    raise UserError(f"cannot make a private folder to lock the bots' uids in ({UID_LOCK_DIR})")


def allocate_uid(limits: Any = None) -> tuple[int, int]:
    """A host uid no other bot runs as right now: ``(uid, lock_fd)``. The
    uid is taken in this process (a set) and on this host (an exclusive
    ``flock`` on ``UID_LOCK_DIR/UID``, which every referee process honours).
    The lock lives as long as ``lock_fd`` or a copy of it: the bot's watcher
    keeps one until the bot is dead, so a uid is reused only once nothing
    runs as it any more - even when the referee was killed. Referee
    processes start their search at different places in the range (from
    their pid). Release with :func:`release_uid`. ``UserError`` when every
    uid of the range is taken."""
    first, count = uid_range(limits)
    top = _uid_lock_dir()
    start = (os.getpid() * 7919) % count
    with _UID_POOL_LOCK:
        for i in range(count):
            uid = first + (start + i) % count
            if uid in _UIDS_IN_USE:
                continue
            fd = os.open(os.path.join(top, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
            os.close(fd)
            _UIDS_IN_USE.add(uid)
            return uid, high
    raise UserError(
        f"all {count} bot uids from {first} are in use on this host; raise uid_count "
        "(limits, or REFEREE_UID_COUNT) or run fewer bots at once"
    )


def release_uid(uid: int, lock_fd: int) -> None:
    """Give back a uid of :func:`allocate_uid` (its watcher may hold the lock a little longer)."""
    with _UID_POOL_LOCK:
        _UIDS_IN_USE.discard(uid)
    try:
        os.close(lock_fd)
    except OSError:
        pass


def _can_enter(st: os.stat_result, uid: int, gid: int, bits: int = 0o1) -> bool:
    """Do the permission bits of ``st`` give ``uid``/``gid`` all of ``bits`` (as o: 1 x, 4 r)?"""
    if st.st_uid == uid:
        return (st.st_mode >> 6) & bits == bits
    if st.st_gid == gid:
        return (st.st_mode >> 3) & bits == bits
    return st.st_mode & bits == bits


def _covers(paths: list[str], uid: int, gid: int) -> list[tuple[str, list[str]]]:
    """Where ``uid`` cannot reach the host ``paths`` a bot needs (a folder on
    the way it may not enter: the interpreter in /root/.pyenv, /root being
    0700): ``(folder, [paths inside it])``, the outermost such folder each.
    The child covers each folder with an empty tmpfs that holds only those
    paths, bind-mounted (:func:`_expose`): the bot reaches what it needs and
    nothing else of that folder."""
    out: dict[str, list[str]] = {}
    for p in paths:
        p = os.path.abspath(p)
        parts = p.strip("/").split("/")
        cur = "/"
        for part in parts[:-1]:
            cur = os.path.join(cur, part)
            try:
                st = os.stat(cur)
            except OSError:
                break
            if not _can_enter(st, uid, gid):
                out.setdefault(cur, [])
                if p not in out[cur]:
                    out[cur].append(p)
                break
    return sorted(out.items())


def _idmap_userns(owner: tuple[int, int], ids: tuple[int, int]) -> int:
    """An fd of a user namespace mapping ``owner`` (uid, gid) to ``ids``: the
    idmapping of a ``writable`` folder's mount, on which the bot (``ids``)
    owns what ``owner`` owns on disk and writes files ``owner`` owns."""
    proc = subprocess.Popen(
        ["/bin/sleep", "60"],
        preexec_fn=lambda: _unshare(_CLONE_NEWUSER),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with open(f"/proc/{proc.pid}/uid_map", "w") as f:
            f.write(f"{owner[0]} {ids[0]} 1")
        with open(f"/proc/{proc.pid}/gid_map", "w") as f:
            f.write(f"{owner[1]} {ids[1]} 1")
        fd = os.open(f"/proc/{proc.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(fd)
        return high
    finally:
        proc.kill()
        proc.wait()


# --------------------------------------------------------------------------
# what a bot may see (bwrap)

#: paths no bot ever sees: the league's output folder and config (see protect_paths)
_PROTECTED: set[str] = set()
#: other bots' own folders: hidden from a bot whose own folders they do not overlap
_OTHERS: set[str] = set()


def protect_paths(secret: list[str] | tuple[str, ...] = (), bot_folders: list[str] | tuple[str, ...] = ()) -> None:
    """Register paths hidden from every bot in bubblewrap from now on (for this
    process): ``secret`` ones (a league's output folder and config) are never
    visible, and no bot whose sandbox would mount one of them - equal to it,
    holding it or inside it, also by a link - starts (:func:`check_view`);
    ``bot_folders`` (the bots' own folders) are refused the same way to every
    bot whose own folder is not that very folder. Both are kept as given and
    resolved (``realpath``)."""
    for p in secret:
        _PROTECTED.update({os.path.abspath(p), os.path.realpath(p)})
    for p in bot_folders:
        _OTHERS.update({os.path.abspath(p), os.path.realpath(p)})


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _is_system(path: str) -> bool:
    return any(_inside(path, d) for d in _SYSTEM_DIRS)


def _program_path(word: str, env: dict[str, str] | None) -> str | None:
    if "/" in word:
        return word if os.path.isabs(word) and os.path.exists(word) else None
    path = (env or {}).get("PATH", os.environ.get("PATH", os.defpath))
    return shutil.which(word, path=path)


def _folder_for(path: str) -> str | None:
    """What to mount for a named file or folder: a folder itself; a file's
    folder - the install prefix for ``.../bin/prog`` - or the file alone in
    folders never mounted whole (``/tmp``...); None for such a folder itself."""
    path = os.path.normpath(path)
    if os.path.isdir(path):
        return None if path in _NEVER_WHOLE else path
    folder = os.path.dirname(path)
    if os.path.basename(folder) in ("bin", "sbin") and os.path.dirname(folder) not in _NEVER_WHOLE:
        folder = os.path.dirname(folder)
    elif os.path.basename(folder) == "shims" and os.path.dirname(folder) not in _NEVER_WHOLE:
        # a version manager's shim (pyenv, rbenv, asdf: ~/.pyenv/shims/python3) is a script that
        # runs the manager from its root, which holds the real interpreters: the whole root
        folder = os.path.dirname(folder)
    return path if folder in _NEVER_WHOLE else folder


def _command_words(command: list[str] | str) -> list[str]:
    """The words of a command: an argv list, or a shell string's words (``sh -c`` too)."""
    if isinstance(command, str):
        text = command
    elif len(command) >= 3 and command[0] == "/bin/sh" and command[1] == "-c":
        text = command[2]
    else:
        return list(command)
    try:
        return shlex.split(text)
    except ValueError:
        return []


@dataclass
class BotView:
    """What a bot's sandbox shows of the host besides the system (see
    :func:`bot_view`). Paths are resolved (``realpath``) unless said otherwise.

    ``folder``: the bot's own folder - its ``cwd`` when its config names one,
    else the folder of the first file its command names that is not an
    interpreter - or None (``python3 -m pkg``); ``REFEREE_BOT_DIR``.
    ``prefixes``: interpreters' install prefixes (a venv, pyenv, nvm; as
    named and resolved). ``named``: the other folders of files the command
    names outside the bot's folder. ``data``: the read-only data folders.
    ``links_out``: ``(named path, target)`` of links in the bot's folder that
    lead out of it (refused by :func:`check_view` unless into the system or a
    prefix)."""

    folder: str | None
    prefixes: list[str] = field(default_factory=list)
    named: list[str] = field(default_factory=list)
    data: list[str] = field(default_factory=list)
    links_out: list[tuple[str, str]] = field(default_factory=list)

    def mounts(self) -> list[str]:
        """Every host path to mount (sorted by depth; a path may lie inside another one)."""
        found = [*self.prefixes, *self.named, *self.data, *([self.folder] if self.folder else [])]
        return sorted({os.path.normpath(p) for p in found if not _is_system(p)}, key=lambda p: (p.count("/"), p))


def bot_view(
    command: list[str] | str, base: str, env: dict[str, str] | None, named_cwd: bool, data: tuple[str, ...] = ()
) -> BotView:
    """What a bot whose ``command`` (as configured: relative paths from
    ``base``) sees of the host: its own folder, interpreters' prefixes, other
    folders its command names, its data folders. Nothing here depends on the
    directory the referee runs in. Never raises (:func:`check_view` judges)."""
    words = _command_words(command)
    base_real = os.path.realpath(base)
    folder = base_real if named_cwd and base_real not in _NEVER_WHOLE else None
    folder_lex = os.path.normpath(os.path.abspath(base)) if folder else None
    view = BotView(folder)
    files: list[tuple[str, str]] = []  # (as named, resolved): not interpreters
    for i, word in enumerate(words):
        if i == 0:
            if "/" in word and not os.path.isabs(word):  # ./bot, bin/bot: from its folder
                word = os.path.join(base, word)
            path = _program_path(word, env)
            if path is not None and not os.path.isabs(path):
                path = os.path.join(base, path)
            interp = path is not None and (
                "/" not in word
                or os.path.basename(os.path.dirname(os.path.normpath(path))) in ("bin", "sbin", "shims")
                or _is_system(os.path.normpath(path))
            )
        else:
            full = word if os.path.isabs(word) else os.path.join(base, word)
            path = full if word and os.path.exists(full) else None
            # a program in a bin/ folder after a launcher (env VAR=1 .venv/bin/python bot.py): an interpreter
            interp = path is not None and os.path.basename(os.path.dirname(os.path.normpath(path))) in (
                "bin",
                "sbin",
                "shims",
            )
        if path is None:
            continue
        lex, real = os.path.normpath(os.path.abspath(path)), os.path.realpath(path)
        if interp:  # a symlink (a venv's python) needs its target too
            view.prefixes += [f for f in dict.fromkeys([_folder_for(lex), _folder_for(real)]) if f is not None]
        else:
            files.append((lex, real))
    for lex, real in files:
        if view.folder is None and not _is_system(real):
            own = _folder_for(lex)
            if own is None:
                continue
            folder_lex, view.folder = own, os.path.realpath(own)
        if _is_system(real) or (view.folder and _inside(real, view.folder)):
            continue
        if any(_inside(real, os.path.realpath(p)) for p in view.prefixes):
            continue
        if folder_lex is not None and _inside(lex, folder_lex):
            view.links_out.append((lex, real))  # named inside its folder, but a link leads out of it
            continue
        view.named += [f for f in dict.fromkeys([_folder_for(lex), _folder_for(real)]) if f is not None]
    view.data = [os.path.realpath(d) for d in data]
    return view


def own_paths(argv: list[str], base: str, env: dict[str, str] | None, named_cwd: bool) -> list[str]:
    """The host paths a bot's sandbox mounts besides the system (see
    :func:`bot_view`), sorted by depth."""
    return bot_view(argv, base, env, named_cwd).mounts()


def check_view(name: str, view: BotView, data: tuple[str, ...] = ()) -> None:
    """Refuse (``UserError`` naming the bot and the path) a view that shows a
    protected path (:func:`protect_paths`): a mount equal to one, holding one
    or inside one - a link named in the command counts at its target -, a link
    in the bot's folder leading out of it (other than into the system and
    interpreters' prefixes), a data folder that does not exist."""
    for given, real in zip(data, view.data):
        if not os.path.isdir(real):
            what = "is not a folder" if os.path.exists(real) else "does not exist"
            raise UserError(f"bot {name!r}: data folder {given} {what} (give read-only data as folders)")
    secret = sorted(p for p in _PROTECTED if os.path.lexists(p))  # (one removed since it was registered: gone)
    # bots that name the same folder (scripts side by side, one program run twice) share it
    own = {f for f in (view.folder, *view.named) if f}
    others = sorted(o for o in _OTHERS if os.path.realpath(o) not in own and o not in own)
    extra = {*view.prefixes, *view.data}  # not the bot's own: also refused inside another bot's folder
    for m in view.mounts():
        for p in secret:
            how = _overlap(m, p)
            if how:
                raise UserError(
                    f"bot {name!r}: its sandbox would mount {m}, which {how} {p}, a path no bot may see "
                    "(an output or log folder, a ledger, a config, a seed or deal file); give the bot a folder "
                    "of its own that holds none of them (cwd, or its program in that folder), or keep them "
                    "out of the bot's folder"
                )
        for o in others:
            how = _overlap(m, o)
            if how and (how != "lies inside" or m in extra):  # its own folders may lie inside a bigger one
                raise UserError(
                    f"bot {name!r}: its sandbox would mount {m}, which {how} {o}, another bot's folder; "
                    "give every bot a folder of its own"
                )
    for lex, real in view.links_out:
        what = next(
            (f", which {how} {p}, a path no bot may see" for p in secret if (how := _overlap(real, p))),
            next((f", which {how} {o}, another bot's folder" for o in others if (how := _overlap(real, o))), ""),
        )
        if what:
            raise UserError(f"bot {name!r}: {lex} (named in its command) leads by a link to {real}{what}")
        raise UserError(
            f"bot {name!r}: {lex} (named in its command) leads by a link to {real}, outside its folder "
            f"{view.folder}; links out of a bot's folder are followed only into system and interpreter "
            "folders: put the file in the bot's folder, or give its folder with data = [...] / --data"
        )


def _overlap(mount: str, protected: str) -> str | None:
    """How ``mount`` meets ``protected``: "is", "holds", "lies inside", or None."""
    p = os.path.realpath(protected)
    if mount in (protected, p):
        return "is"
    if _inside(protected, mount) or _inside(p, mount):
        return "holds"
    if _inside(mount, protected) or _inside(mount, p):
        return "lies inside"
    return None


def _outermost(paths: list[str]) -> list[str]:
    """``paths`` (sorted by depth) without those inside another one."""
    out: list[str] = []
    for p in paths:
        if not any(_inside(p, q) for q in out):
            out.append(p)
    return out


@functools.lru_cache(maxsize=None)
def sdk_folder() -> str | None:
    """The bot SDK's package folder (``protocol/``: public code, standard library
    only), mounted read-only for every bot so that bots written with it - the
    sample bots insert the folder above their own into ``sys.path`` - find it."""
    try:
        import protocol

        return os.path.dirname(os.path.realpath(protocol.__file__))
    except (ImportError, TypeError):
        return None


def bot_folders(command: list[str] | str, cwd: str, named_cwd: bool) -> list[str]:
    """A bot's own folder (its ``cwd`` when its config names one, else the
    folder of its program or script: :func:`bot_view`), to refuse to the other
    bots (:func:`protect_paths`); empty when it has none."""
    folder = bot_view(command, cwd, None, named_cwd).folder
    return [folder] if folder else []


def _masks(binds: list[str], own: list[str]) -> list[str]:
    """Registered paths inside the mounted ``binds`` that this bot must not see."""
    out = []
    for p in sorted(_PROTECTED | _OTHERS):
        if not os.path.lexists(p) or not any(_inside(p, b) and p != b for b in binds):
            continue
        if p not in _PROTECTED and any(_inside(o, p) for o in own):
            continue  # another bot's folder that holds this bot's own files (a shared folder)
        out.append(p)
    return out


#: a path in a bot's error output: absolute, or relative with ``./`` / ``../``
_PATH_IN_TEXT = re.compile(r"""(?:(?<=[\s'"(=:,\[])|^)((?:/|\.\.?/)[^\s'"():,\]]+)""")
#: host paths a bot is never pointed at by a hint (its private or system folders)
_NO_HINT = ("/proc", "/sys", "/dev", "/run", "/etc")


def unseen_paths(text: str, mounts: list[str], folder: str | None) -> list[str]:
    """The paths named in ``text`` (a bot's stderr or fault detail) that exist
    on this machine but not in a sandbox mounting ``mounts`` (besides the
    system); relative ones (``../data/t.json``) are taken from the bot's
    ``folder`` - the bot runs in a temporary folder."""
    out: list[str] = []
    for m in _PATH_IN_TEXT.finditer(text):
        word = m.group(1).rstrip(".;")
        if not os.path.isabs(word):
            if folder is None:
                continue
            word = os.path.join(folder, word)
        host = os.path.normpath(word)
        if host in out or any(_inside(host, d) for d in _NO_HINT) or _is_system(host) or not os.path.exists(host):
            continue
        real = os.path.realpath(host)
        if not os.path.isabs(m.group(1)) or not any(_inside(real, b) for b in mounts):
            out.append(host)
    return out


def unseen_hint(text: str, mounts: list[str], folder: str | None) -> str:
    """The hint of :meth:`SpawnPlan.view_hint` (``""`` when ``text`` names no such path)."""
    paths = unseen_paths(text, mounts, folder)
    if not paths:
        return ""
    path = paths[0]
    real = os.path.realpath(path)
    if folder is not None and _inside(real, folder):
        return (
            f"; {path} exists on this machine and in the bot's folder {folder}, but the bot runs in a "
            "temporary folder: open it relative to REFEREE_BOT_DIR (the bot's folder), or give the bot a cwd"
        )
    where = real if os.path.isdir(real) else os.path.dirname(real)
    return (
        f"; {path} exists on this machine but not in the bot's sandbox, which shows only its own folder "
        f'({folder or "none"}) and the system: give the bot that folder read-only with data = ["{where}"] '
        f"in its [[bots]] entry of the league config (referee play, duel, check-bot: --data {where})"
    )


# --------------------------------------------------------------------------
# the plan


_SHELL_WORD = re.compile(r"(?<![^\s])([A-Za-z0-9_./+@%:,-]+)(?![^\s])")


def _absolutize(arg: str, base: str) -> str:
    """``arg`` as an absolute path if it names an existing file or folder
    (relative to ``base``), its folders resolved (``realpath``: a ``..`` after
    a folder the sandbox does not mount, ``/srv/a/../bots/bot.py``, would not
    resolve inside it) and its last part kept (a venv's ``python`` link stays
    a link); other words unchanged."""
    if not arg or arg.startswith("-") or arg in (".", ".."):
        return arg
    path = arg if os.path.isabs(arg) else os.path.join(base, arg)
    if (os.path.isabs(arg) or "/" in arg or "." in arg) and os.path.exists(path):
        if os.path.isdir(path):
            return os.path.realpath(path)
        return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    return arg


def resolve_command(command: list[str] | str, base: str) -> list[str]:
    """The argv to run ``command`` from another working directory: every
    argument naming an existing file or folder relative to ``base`` (e.g.
    ``bots/mine.py``) is made absolute. A shell string gets the same treatment
    for its plain words and runs as ``/bin/sh -c STRING``."""
    if isinstance(command, str):
        fixed = _SHELL_WORD.sub(lambda m: shlex.quote(_absolutize(m.group(1), base)), command)
        return ["/bin/sh", "-c", fixed]
    argv = list(command)
    return [argv[0] if "/" not in argv[0] else _absolutize(argv[0], base)] + [_absolutize(a, base) for a in argv[1:]]


def minimal_env(extra: dict[str, str] | None, home: str) -> dict[str, str]:
    """The scrubbed environment: ``PATH`` (the referee's), ``HOME`` and
    ``TMPDIR`` (the bot's working directory), ``LANG``/``LC_ALL`` C.UTF-8, then
    ``extra`` (what the config passes) on top."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": home,
        "TMPDIR": home,
        "LANG": _LANG,
        "LC_ALL": _LANG,
        "PYTHONUNBUFFERED": "1",
    }
    if extra:
        env.update(extra)
    return env


@dataclass
class SpawnPlan:
    """Arguments for ``open_process`` and the clean-up owed afterwards.

    ``pass_fds`` must be passed to ``open_process`` too (check-bot's leftover
    probe; empty otherwise). ``mode`` is the sandbox ("bwrap", "basic",
    "none"); ``cgroup`` the bot's control groups (None: none could be made).
    """

    argv: list[str]
    cwd: str | None
    env: dict[str, str] | None
    preexec: Callable[[], None] | None
    workdir: str | None = None  # temporary directory this plan created
    namespaces: str = "none"  # "pid", "pid+net" or "none"
    notes: list[str] = field(default_factory=list)
    mode: str = "none"
    cgroup: cgroups.BotCgroup | None = None
    pass_fds: tuple[int, ...] = ()
    mounts: list[str] = field(default_factory=list)  # bwrap: the host paths mounted besides the system
    limits: Any = None
    command: list[str] | None = None  # the bot's own argv, where ``argv`` wraps it (bwrap, probe)
    seccomp: str = "none"  # the seccomp filter the bot runs under (referee.runtime.seccomp.status)
    tmpfs: bool = False  # the temporary folder is a tmpfs of the bot's own (WORKDIR_KIB, WORKDIR_INODES)
    uid: int | None = None  # the host uid the bot runs as (None: the referee's)
    view: BotView | None = None  # what of the host the bot sees (its folder, mounts)
    _report_fd: int | None = None
    _uid_lock: int | None = None  # allocate_uid's lock of ``uid``
    _idmap_fds: dict[tuple[int, int], int] = field(default_factory=dict)  # owner -> user namespace (idmaps)
    _idmapped_writable: str | None = None  # a writable folder the bot wrote as its owner: see cleanup

    # -- while the bot runs -----------------------------------------------------
    async def open(self, *, stdin: int, stdout: int, stderr: int) -> Any:
        """``trio.lowlevel.open_process`` of this plan (its argv, cwd, environment,
        pre-exec step and passed fds, in a new session): the one place a bot or a
        build is started. Returns the ``trio.Process``; ``OSError`` as ``open_process``."""
        import trio

        return await trio.lowlevel.open_process(
            self.argv,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=self.cwd,
            env=self.env,
            start_new_session=True,
            preexec_fn=self.preexec,
            pass_fds=self.pass_fds,
        )

    def cpu_seconds(self, pid: int) -> float | None:
        """CPU seconds used so far by the bot started with this plan (``pid``:
        the process the runtime started): from its control group - every
        process it ever ran, however reaped - else from ``/proc``
        (:mod:`referee.runtime.cpu`); None when neither can tell."""
        if self.cgroup is not None:
            used = self.cgroup.cpu_seconds()
            if used is not None:
                return used
        from .cpu import group_cpu_seconds, tree_cpu_seconds

        if self.mode == "none":
            return group_cpu_seconds(pid)
        return tree_cpu_seconds(pid)

    def sandbox_info(self) -> dict[str, Any]:
        """What protects this bot, for the game log's header: the sandbox, how
        its CPU time is measured and how its memory and processes are limited."""
        lay = self.cgroup.layout if self.cgroup is not None else None
        limits = self.limits
        info: dict[str, Any] = {
            "sandbox": self.mode,
            "accounting": lay.accounting if lay is not None else ("proc-group" if self.mode == "none" else "proc"),
            "memory": ("cgroup+rlimit" if lay is not None and lay.memory else "rlimit"),
            "pids": ("cgroup" if lay is not None and lay.pids else "rlimit"),
            "cpu": lay.cpu_weight if lay is not None else "none",
            "namespaces": self.namespaces,
            "network": bool(getattr(limits, "network", True)),
            "seccomp": self.seccomp,
        }
        if self.workdir is not None or self.tmpfs:
            info["workdir"] = f"tmpfs {WORKDIR_KIB // 1024} MiB, {WORKDIR_INODES} files" if self.tmpfs else "host"
        if getattr(limits, "user", None) is not None and self.mode != "none":
            info["user"] = limits.user
        if self.uid is not None and getattr(limits, "user", None) is None:
            info["uid"] = "own"  # a host uid of its own (the number differs from run to run: not logged)
        return info

    def leftovers(self) -> list[str] | None:
        """After the bot exited (plans made with ``probe_leftovers``): the
        processes it left running in its sandbox ("PID COMMAND", PIDs of its
        namespace), at the moment it exited - the sandbox then killed them.
        None when the sandbox cannot tell (no PID namespace)."""
        if self._report_fd is None:
            return None
        try:
            data = os.pread(self._report_fd, 1 << 16, 0)
        except OSError:
            return None
        return [line for line in data.decode(errors="replace").splitlines() if line.strip()]

    def view_hint(self, text: str) -> str:
        """For a bot that failed (``text``: its stderr, a fault's detail) on a
        path that exists on this machine but not in its bubblewrap sandbox:
        what it sees and the fix (``data``/``--data``, or ``REFEREE_BOT_DIR``);
        ``""`` otherwise."""
        if self.mode != "bwrap" or self.view is None:
            return ""
        return unseen_hint(text, self.mounts, self.view.folder)

    # -- after the bot is gone -------------------------------------------------
    def cleanup(self) -> None:
        """Remove the temporary working directory and the control groups (after
        the process group is dead; a group still emptying is retried later and
        at exit). Never raises; safe to call twice."""
        if self.workdir is not None:
            _force_rmtree(self.workdir)
            _LIVE_WORKDIRS.discard(self.workdir)
            self.workdir = None
        if self.cgroup is not None:
            cg = self.cgroup
            cg.kill()
            if cg.remove():
                self.cgroup = None
            else:
                cgroups._PENDING[cg.name] = cg
        if self._report_fd is not None:
            try:
                os.close(self._report_fd)
            except OSError:
                pass
            self._report_fd = None
            self.pass_fds = ()
        for fd in self._idmap_fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self._idmap_fds = {}
        if self._idmapped_writable is not None:
            _strip_setid(self._idmapped_writable)
            self._idmapped_writable = None
        if self._uid_lock is not None and self.uid is not None:
            release_uid(self.uid, self._uid_lock)
            self._uid_lock = None

    async def release(self) -> None:
        """:meth:`cleanup`, waiting (up to 2 s, trio sleeps) for the kernel to
        finish killing the bot's processes so that its control groups can be
        removed. Call it shielded, after the process is reaped. The temporary
        folder is removed in a worker thread: a folder of 100k files (where it
        is not a tmpfs) takes seconds, and trio's loop must not stall."""
        import trio

        if self.workdir is not None:
            await trio.to_thread.run_sync(_force_rmtree, self.workdir)

        cg = self.cgroup
        if cg is not None:
            delay = 0.001
            with trio.move_on_after(2.0):
                while True:
                    cg.kill()
                    if cg.remove():
                        break
                    await trio.sleep(delay)
                    delay = min(delay * 2, 0.05)
        self.cleanup()
        cgroups.sweep()


#: temporary folders of bots not cleaned up yet; whatever is left when the
#: referee exits normally (e.g. Ctrl-C interrupted a shutdown) is removed at exit
_LIVE_WORKDIRS: set[str] = set()


@atexit.register
def _remove_leftover_workdirs() -> None:
    for path in list(_LIVE_WORKDIRS):
        _force_rmtree(path)
    _LIVE_WORKDIRS.clear()


def _force_rmtree(path: str) -> None:
    def onerror(func: Any, p: str, exc: Any) -> None:
        try:
            os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
            func(p)
        except OSError:
            pass

    if os.path.lexists(path):
        shutil.rmtree(path, onerror=onerror)


def plan_spawn(spec: Any, *, probe_leftovers: bool = False) -> SpawnPlan:
    """How to start the bot of ``spec`` (a ``BotSpec``) in its sandbox.

    With ``spec.limits`` None the defaults of
    :class:`~referee.runtime.limits.ResourceLimits` apply. The temporary
    working directory and the control groups (when asked for / possible) are
    named here but created by the child itself, so a referee killed before the
    fork leaves nothing behind; the caller must call :meth:`SpawnPlan.release`
    (or :meth:`SpawnPlan.cleanup`) once the process is gone, also when the
    start fails. ``probe_leftovers`` (check-bot): run the bot under a shell
    that reports the processes it leaves behind (:meth:`SpawnPlan.leftovers`);
    the caller must then pass ``plan.pass_fds`` to ``open_process``. Raises
    :class:`UserError` for impossible requests.
    """
    from .limits import ResourceLimits

    limits = spec.limits if spec.limits is not None else ResourceLimits()
    mode, problem = sandbox_mode(limits)
    if problem:
        raise UserError(f"bot {spec.name!r}: limits: {problem}")
    if mode == "none":
        argv = spec.argv() if hasattr(spec, "argv") else resolve_command(spec.command, os.getcwd())
        return SpawnPlan(
            argv=argv, cwd=spec.cwd, env=spec.env, preexec=_rlimits_only(limits.pairs()), mode="none", limits=limits
        )
    check_limits(limits, f"bot {spec.name!r}: limits")
    base = os.path.abspath(spec.cwd) if spec.cwd else os.getcwd()
    label = re.sub(r"[^A-Za-z0-9_.-]", "_", spec.name)[:40]
    token = secrets.token_hex(6)
    workdir = None
    if limits.temp_workdir:
        workdir = os.path.join(tempfile.gettempdir(), f"referee-bot-{label}-{token}")
        _LIVE_WORKDIRS.add(workdir)
        cwd = workdir
        argv = resolve_command(spec.command, base)
    else:
        cwd = os.path.realpath(base)  # mounted at its resolved path
        argv = resolve_command(spec.command, base)
    data = tuple(getattr(spec, "data", ()) or ())
    env = minimal_env(spec.env, cwd) if limits.clean_env else None
    view = bot_view(spec.command, base, env, named_cwd=not limits.temp_workdir, data=data)
    if _exec_error(argv, base, env) is None:  # (a command that cannot run is reported as such)
        check_view(spec.name, view, data)  # a protected path, a link out of its folder: refused
    if env is not None:
        env.setdefault("REFEREE_BOT_DIR", view.folder or cwd)
    else:
        env = dict(os.environ) if spec.env is None else dict(spec.env)
    ids: tuple[int, int] | None = None
    if limits.user is not None:
        try:
            ids = _resolve_user(limits.user)
        except ValueError as exc:
            raise UserError(f"bot {spec.name!r}: limits: {exc}") from None
        if workdir:
            _check_reachable(workdir, ids[0], limits.user)
    lay = cgroups.layout()
    cg = None
    if lay is not None:
        cg = cgroups.BotCgroup(
            lay, f"referee-bot-{label}-{token}", memory_bytes=limits.address_space, pids_max=limits.processes
        )
    plan = SpawnPlan(
        argv=argv,
        cwd=None if workdir else cwd,
        env=env,
        preexec=None,
        workdir=workdir,
        mode=mode,
        cgroup=cg,
        limits=limits,
        view=view,
    )
    try:
        if ids is None and os.geteuid() == 0:
            # no bot ever runs as host uid 0: each gets a uid (and gid) of its own
            uid, plan._uid_lock = allocate_uid(limits)
            ids = (uid, uid)
        plan.uid = ids[0] if ids is not None else None
        if mode == "bwrap" or probe_leftovers:
            # the bot is started through a wrapper whose own exec succeeds: check its command first
            error = _exec_error(plan.argv, base, env)
            if error is not None:
                return _as_failing(plan, plan.argv, base)
        if mode == "bwrap":
            _plan_bwrap(plan, spec, limits, base, cwd, ids, probe_leftovers)
        else:
            _plan_basic(plan, spec, limits, base, ids, probe_leftovers)
    except BaseException:
        plan.cleanup()
        raise
    if cg is None:
        plan.notes.append("no control group: CPU time from /proc, memory and processes by rlimits only")
    return plan


def _uid_setup(
    plan: SpawnPlan, spec: Any, ids: tuple[int, int], needed: list[str], writable: str | None
) -> tuple[list[tuple[str, list[str]]], list[tuple[str, int, bool]]]:
    """What the child prepares, as root, so that the bot running as ``ids``
    reaches the host paths it ``needed`` (:func:`_covers`) and may read them
    and write its ``writable`` folder: ``(covers, idmaps)``. A needed path the
    bot's uid may not read itself (a bot folder of mode 0700), and the
    writable folder, are mounted idmapped (``(path, user namespace fd,
    writable)``): on that mount the path's owner is the bot - read-only but
    for the writable folder, where what the bot writes belongs to the owner
    on disk. ``UserError`` saying which path, which uid and what to do where
    the machine cannot do that."""
    covers = _covers(needed, ids[0], ids[1])
    idmaps: list[tuple[str, int, bool]] = []
    for p in sorted({os.path.abspath(x) for x in needed}, key=lambda x: x.count("/")):
        try:
            st = os.stat(p)
        except OSError:
            continue  # made later (its temporary folder), or not there (the bot will say so)
        if p == plan.workdir or (st.st_uid, st.st_gid) == ids:
            continue
        rw = p == writable
        bits = 0o5 if stat.S_ISDIR(st.st_mode) else 0o4
        if not rw and _can_enter(st, ids[0], ids[1], bits):
            continue
        owner = (st.st_uid, st.st_gid)
        try:
            if owner not in plan._idmap_fds:
                plan._idmap_fds[owner] = _idmap_userns(owner, ids)
        except OSError as exc:
            mode = f"mode {stat.S_IMODE(st.st_mode):04o}, owner uid {st.st_uid}"
            raise UserError(
                f"bot {spec.name!r} runs as host uid {ids[0]}, which may not "
                f"{'write' if rw else 'read'} {p} ({mode}), and this machine cannot mount it idmapped for "
                f"the bot ({exc.strerror or exc}); make it {'the bot user' if rw else 'readable for others'}'s "
                f"(chown, or chmod o+r{'x' if bits == 0o5 else ''}), or set limits.user to its owner"
            ) from None
        idmaps.append((p, plan._idmap_fds[owner], rw))
        if rw:
            plan._idmapped_writable = p
    return covers, idmaps


def _strip_setid(folder: str) -> None:
    """After a bot wrote ``folder`` through an idmapped mount - its files belong
    to the folder's owner on disk, perhaps root - clear every setuid and setgid
    bit it set there (the mount itself is nosuid; this is for everyone else who
    may run a file from the folder). Never raises."""
    for top, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(top, name)
            try:
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode) and st.st_mode & (stat.S_ISUID | stat.S_ISGID):
                    os.chmod(path, stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
            except OSError:
                pass


def _report_file(ids: tuple[int, int] | None) -> int:
    """An anonymous file (0600, fd >= 10) for the leftover probe's report."""
    fd = os.open(tempfile.gettempdir(), os.O_TMPFILE | os.O_RDWR, 0o600)
    try:
        if ids is not None:
            os.fchown(fd, ids[0], ids[1])
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    finally:
        os.close(fd)
    return high


def _exec_error(argv: list[str], cwd: str, env: dict[str, str] | None) -> OSError | None:
    """The error ``exec`` of ``argv`` would raise here (not found, a directory,
    not executable, not a program), or None. Checked up front where the bot is
    started through a wrapper (bwrap, the leftover probe), whose own ``exec``
    succeeds either way."""
    import errno

    prog = argv[0]
    if "/" in prog:
        path: str | None = os.path.join(cwd, prog)
    else:
        path = shutil.which(prog, path=(env or {}).get("PATH", os.environ.get("PATH", os.defpath)))
    if path is None or not os.path.exists(path):
        return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), prog)
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        return PermissionError(errno.EACCES, os.strerror(errno.EACCES), prog)
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError:
        return None
    if magic[:2] != b"#!" and magic != b"\x7fELF":
        return OSError(errno.ENOEXEC, os.strerror(errno.ENOEXEC), prog)
    return None


def _as_failing(plan: SpawnPlan, argv: list[str], cwd: str) -> SpawnPlan:
    """A plan that fails in ``open_process`` exactly as ``argv`` cannot be
    executed (so the runtime reports it as always), starting nothing."""
    plan.argv, plan.cwd, plan.preexec = list(argv), cwd, None
    plan.notes.append("the command cannot be executed")
    if plan._report_fd is not None:
        os.close(plan._report_fd)
        plan._report_fd, plan.pass_fds = None, ()
    return plan


def _plan_bwrap(
    plan: SpawnPlan, spec: Any, limits: Any, base: str, cwd: str, ids: tuple[int, int] | None, probe_leftovers: bool
) -> None:
    path = bwrap_path()
    assert path is not None
    features = _BWRAP_FEATURES.get(path, frozenset())
    named = not limits.temp_workdir
    needed = plan.view.mounts() if plan.view is not None else []
    own = _outermost(needed)
    # only the bot's named folder (its cwd) can be writable; all else is read-only
    folder = plan.view.folder if plan.view is not None and plan.view.folder else os.path.realpath(base)
    rw = bool(limits.writable) and named
    binds = [(p, False) for p in own if not (rw and p == folder)]
    if rw:
        binds.append((folder, True))
        binds.sort(key=lambda b: b[0].count("/"))  # a writable folder inside a read-only one: mounted after it
    sdk = sdk_folder()
    if sdk is not None and not any(_inside(sdk, p) for p in own):
        binds.append((sdk, False))
    if plan.workdir:
        binds.append((plan.workdir, True))
    covers: list[tuple[str, list[str]]] = []
    idmaps: list[tuple[str, int, bool]] = []
    if ids is not None:
        covers, idmaps = _uid_setup(plan, spec, ids, [p for p, _w in binds], folder if rw else None)
    masks = _masks([b for b, _ in binds], needed)
    report = ""
    if probe_leftovers:
        plan._report_fd = _report_file(ids)
        plan.pass_fds = (plan._report_fd,)
        report = str(plan._report_fd)
    inner = ["/bin/sh", "-c", INNER, "sh", "1", report, *plan.argv]
    plan.tmpfs = bool(plan.workdir) and os.geteuid() == 0  # (mounting needs root on the host)
    locks = bool(getattr(spec, "build", False))
    bpf = seccomp.program(locks)
    plan.seccomp = seccomp.status(locks)
    fd = seccomp.FD if bpf is not None else None
    if bpf is not None and plan.env is not None:
        plan.env = seccomp.java_env(plan.env)
    args = _bwrap_args(path, features, network=limits.network, binds=binds, masks=masks, chdir=cwd, seccomp_fd=fd)
    plan.command = list(plan.argv)
    plan.argv = [*args, "--", *inner]
    plan.cwd = None
    plan.mounts = [b for b, _ in binds]
    plan.namespaces = "pid+net" if not limits.network else "pid"
    child = _Child(
        pairs=limits.pairs(),
        lifeline=lifeline_fd(),
        workdir=plan.workdir or "",
        ids=ids,
        umask=0o022 if rw else 0o077,
        cgroup=plan.cgroup,
        bwrap=True,
        signal_codes=True,
        keep_fds=plan.pass_fds,
        seccomp=bpf,
        tmpfs=plan.tmpfs,
        uid_lock=plan._uid_lock if plan._uid_lock is not None else -1,
        covers=covers,
        idmaps=idmaps,
    )
    plan.preexec = _bwrap_preexec(child, plan.argv, plan.env)


def _plan_basic(
    plan: SpawnPlan, spec: Any, limits: Any, base: str, ids: tuple[int, int] | None, probe_leftovers: bool
) -> None:
    named = not limits.temp_workdir
    folder = plan.view.folder if plan.view is not None and plan.view.folder else os.path.realpath(base)
    rw = folder if limits.writable and named else None
    covers: list[tuple[str, list[str]]] = []
    idmaps: list[tuple[str, int, bool]] = []
    hidden: list[str] = []
    if ids is not None and os.geteuid() == 0:
        needed = plan.view.mounts() if plan.view is not None else []
        sdk = sdk_folder()
        if sdk is not None:
            needed.append(sdk)
        if plan.workdir:
            needed.append(plan.workdir)
        covers, idmaps = _uid_setup(plan, spec, ids, needed, rw)
        # what the bwrap sandbox would hide (the league's output and config, other bots' folders),
        # hidden inside the idmapped folders, where the bot's uid could otherwise read it
        hidden = _masks([p for p, _fd, _w in idmaps], needed)
    ok, how = namespace_support(limits.network)
    use_ns = ok and limits.pid_namespace
    private_proc = use_ns and private_proc_support(limits.network)
    flags = _ns_flags(limits.network, how == "user namespace", private_proc) if use_ns else 0
    if probe_leftovers and private_proc:
        plan._report_fd = _report_file(ids)
        plan.pass_fds = (plan._report_fd,)
        plan.command = list(plan.argv)
        plan.argv = ["/bin/sh", "-c", INNER, "sh", "0", str(plan._report_fd), *plan.argv]
    workdir = plan.workdir or ""
    child = _Child(
        pairs=limits.pairs(),
        flags=flags,
        lifeline=lifeline_fd(),
        workdir=workdir,
        ids=ids,
        umask=0o022 if rw else 0o077,
        cgroup=plan.cgroup,
        signal_codes=plan._report_fd is not None,
        # no private /dev/shm when the bot's own files live there (it would hide them)
        private_shm=not any("/dev/shm" in a for a in (workdir, base, *plan.argv)),
        tmpfs=bool(workdir) and bool(flags & _CLONE_NEWNS),
        uid_lock=plan._uid_lock if plan._uid_lock is not None else -1,
        covers=covers,
        idmaps=idmaps,
        hidden=hidden,
        keep_writable=[p for p in (workdir, rw) if p],
    )
    plan.tmpfs = child.tmpfs
    locks = bool(getattr(spec, "build", False))
    child.seccomp = seccomp.program(locks)
    if child.seccomp is not None:
        plan.seccomp = seccomp.status(locks)
        if plan.env is not None:
            plan.env = seccomp.java_env(plan.env)
    plan.preexec = _basic_preexec(child)
    plan.namespaces = ("pid" + ("" if limits.network else "+net")) if use_ns else "none"
    if not use_ns:
        plan.notes.append("no PID namespace: " + (how if not ok else "disabled by limits"))
    elif not flags & _CLONE_NEWNS:
        plan.notes.append("no private /proc: this machine does not allow mounting one")


def _rlimits_only(pairs: list[tuple[int, int]]) -> Callable[[], None] | None:
    if not pairs:
        return None

    def apply() -> None:
        for which, value in pairs:
            resource.setrlimit(which, (value, value))

    return apply


# --------------------------------------------------------------------------
# in the forked child


@dataclass
class _Child:
    """What the forked child needs (computed before the fork)."""

    pairs: list[tuple[int, int]] = field(default_factory=list)
    flags: int = 0
    lifeline: int = -1
    workdir: str = ""
    ids: tuple[int, int] | None = None
    cgroup: cgroups.BotCgroup | None = None
    private_shm: bool = True
    bwrap: bool = False
    signal_codes: bool = False
    keep_fds: tuple[int, ...] = ()
    seccomp: bytes | None = None  # the filter: bwrap reads it from fd seccomp.FD; basic installs it before exec
    tmpfs: bool = False  # mount a tmpfs on the workdir (bwrap: in a mount namespace of its own)
    uid_lock: int = -1  # the flock of the bot's own uid (allocate_uid), kept by the watcher
    covers: list[tuple[str, list[str]]] = field(default_factory=list)  # see _covers
    idmaps: list[tuple[str, int, bool]] = field(default_factory=list)  # (path, userns fd, writable): see _uid_setup
    keep_writable: list[str] = field(default_factory=list)  # basic as root: all else is read-only
    #: 0o077, but 0o022 with a writable folder (a build): what it makes there must be readable and
    #: executable by the bot, which runs later as another host uid
    umask: int = 0o077
    hidden: list[str] = field(default_factory=list)  # basic: paths covered by nothing (see _expose)


def _set_rlimits(pairs: list[tuple[int, int]]) -> None:
    for which, value in pairs:
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            # cannot raise a hard limit: keep the lower inherited one
            soft, hard = resource.getrlimit(which)
            if hard == resource.RLIM_INFINITY or value < hard:
                raise


def _drop_capabilities(libc: Any, last_cap: int) -> None:
    """Empty the capability bounding set (needs CAP_SETPCAP, so before any
    change of user): nothing the bot executes can gain a capability."""
    for cap in range(last_cap + 1):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL for caps this kernel lacks: fine


def _clear_capabilities(libc: Any) -> None:
    """Drop every capability of the calling process and set no_new_privs."""
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    if libc.capset(header, data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")


@functools.lru_cache(maxsize=None)
def _last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 40


def _become_watcher(child: _Child, pid: int) -> None:
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
            [python, "-I", "-S", "-c", WATCHER, str(pid), child.workdir, "1" if child.signal_codes else "0", *groups],
        )
    finally:
        # exec failed: do not leave an unwatched bot behind
        try:
            os.kill(pid, signal.SIGKILL)
        finally:
            os._exit(127)


def _prepare(child: _Child) -> None:
    """The child's first steps: the working directory and the control groups."""
    if child.workdir:
        os.mkdir(child.workdir, 0o700)
        if child.ids is not None:
            os.chown(child.workdir, child.ids[0], child.ids[1])
    if child.cgroup is not None:
        child.cgroup.create()


def _mount_workdir(child: _Child, libc: Any, private: bool = False) -> None:
    """In the bot's own mount namespace: a tmpfs of :data:`WORKDIR_KIB` and
    :data:`WORKDIR_INODES` on its temporary folder (``private``: first stop
    mounts propagating to the host). Raises ``OSError``."""
    if private and libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), "cannot make the bot's mounts private")
    opts = b"size=%dk,nr_inodes=%d,mode=0700" % (WORKDIR_KIB, WORKDIR_INODES)
    if child.ids is not None:
        opts += b",uid=%d,gid=%d" % child.ids
    if libc.mount(b"tmpfs", os.fsencode(child.workdir), b"tmpfs", _MS_NOSUID | _MS_NODEV, opts) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"cannot mount a tmpfs on the bot's temporary folder: {os.strerror(err)}")


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _bytes(x: str | bytes | None) -> bytes | None:
    return x.encode() if isinstance(x, str) else x


def _mount(
    source: str | bytes | None, target: str | bytes, fstype: str | bytes | None, flags: int, data: Any = None
) -> None:
    libc = _libc_handle()
    if libc.mount(_bytes(source), _bytes(target), _bytes(fstype), ctypes.c_ulong(flags), _bytes(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target!r}: {os.strerror(err)}")


def _syscall(number: int, *args: Any) -> int:
    libc = _libc_handle()
    conv = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    r = int(libc.syscall(ctypes.c_long(number), *conv))
    if r < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"syscall {number}: {os.strerror(err)}")
    return r


def _expose(child: _Child) -> None:
    """In the child, still root, in a mount namespace of the bot's own: cover
    each folder of ``child.covers`` with a tmpfs holding only the paths the
    bot needs from it (bind-mounted), and mount ``child.idmaps`` idmapped (on
    them their owner's files are the bot's; what it writes is its owner's on
    disk), read-only unless writable."""
    old = os.umask(0o022)
    try:
        fds = [(p, os.open(p, os.O_PATH | os.O_CLOEXEC)) for _f, paths in child.covers for p in paths]
        trees = []
        for path, userns, writable in child.idmaps:
            tree = _syscall(_SYS_OPEN_TREE, _AT_FDCWD, path.encode(), _OPEN_TREE_CLONE | _AT_RECURSIVE | os.O_CLOEXEC)
            trees.append((path, tree))
            flags = _MOUNT_ATTR_IDMAP | _MOUNT_ATTR_NOSUID | _MOUNT_ATTR_NODEV | (0 if writable else _MOUNT_ATTR_RDONLY)
            attr = _MountAttr(flags, 0, 0, userns)
            _syscall(
                _SYS_MOUNT_SETATTR, tree, b"", _AT_EMPTY_PATH | _AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr)
            )
        for folder, _paths in child.covers:
            _mount("tmpfs", folder, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=1m")
        for p, fd in fds:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.makedirs(p, 0o755, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(p), 0o755, exist_ok=True)
                os.close(os.open(p, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
            _mount(f"/proc/self/fd/{fd}", p, None, _MS_BIND | _MS_REC)
            os.close(fd)
        for path, tree in trees:
            _syscall(_SYS_MOVE_MOUNT, tree, b"", _AT_FDCWD, path.encode(), _MOVE_MOUNT_F_EMPTY_PATH)
            os.close(tree)
        for path in child.hidden:
            if os.path.isdir(path):
                _mount("tmpfs", path, "tmpfs", _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "size=4k,mode=0555")
            else:
                _mount("/dev/null", path, None, _MS_BIND)
    finally:
        os.umask(old)


def _proc_readonly(strict: bool) -> None:
    """In the bot's mount namespace: :data:`PROC_READONLY` read-only, :data:`PROC_MASKED` hidden.
    ``strict`` (a root referee): a knob that cannot be made read-only stops the bot's start;
    otherwise (a user namespace of a non-root referee, whose bots the kernel does not let write
    the host's sysctls anyway) it is best effort."""
    for p in PROC_READONLY:
        if os.path.lexists(p):
            try:
                _mount(p, p, None, _MS_BIND | _MS_REC)
                _mount(None, p, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
            except OSError:
                if strict:
                    raise
    for p in PROC_MASKED:
        try:
            if os.path.isdir(p):
                _mount("tmpfs", p, "tmpfs", _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "size=4k,mode=0555")
            elif os.path.lexists(p):
                _mount("/dev/null", p, None, _MS_BIND)
        except OSError:
            pass  # masking is the second line: the bot's uid may not read these anyway


def _readonly_host(keep: list[str], shm: bool) -> None:
    """In the bot's mount namespace (root): every mount read-only except the
    bot's own ``keep`` folders (its temporary folder, a writable folder), its
    /proc and (``shm``) its private /dev/shm."""
    for k in keep:
        _mount(k, k, None, _MS_BIND | _MS_REC)
    with open("/proc/self/mountinfo", "rb") as f:
        points = [
            re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), line.split()[4]).decode(
                errors="surrogateescape"
            )
            for line in f
        ]
    libc = _libc_handle()
    for mp in points:
        if mp in keep or _inside(mp, "/proc") or (shm and mp == "/dev/shm"):
            continue
        try:
            st = os.statvfs(mp)
        except OSError:
            continue  # hidden under another mount
        flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY
        flags |= st.f_flag & (_MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_NOATIME | _MS_NODIRATIME)
        if st.f_flag & 4096:  # ST_RELATIME
            flags |= _MS_RELATIME
        if libc.mount(None, mp.encode(errors="surrogateescape"), None, ctypes.c_ulong(flags), None) != 0:
            err = ctypes.get_errno()
            if err not in (errno.ENOENT, errno.EACCES):
                raise OSError(err, f"cannot make {mp} read-only for the bot: {os.strerror(err)}")


def _basic_preexec(child: _Child) -> Callable[[], None]:
    """The ``preexec_fn`` of the "basic" sandbox: runs in the forked child, before ``exec``.

    1. make the working directory and control groups, 2. enter new namespaces
    (``unshare``), 3. fork: the child (PID 1 of the new PID namespace) joins
    the control groups, starts its own session, enters a mount namespace of
    its own (the watcher's stays as it is) where it mounts its private /proc
    and /dev/shm, makes the kernel knobs read-only (:data:`PROC_READONLY`)
    and - the referee being root - the folders it needs reachable
    (:func:`_expose`) and the whole host file system read-only but for its own
    folders; it sets its rlimits, umask and user, drops every capability,
    sets its parent-death signal and returns to ``exec`` the bot; the parent
    becomes the watcher and never returns.
    """
    uid, gid = os.getuid(), os.getgid()
    libc = _libc_handle()
    shm_kib = SHM_KIB
    last_cap = _last_cap()
    flags = child.flags
    install_filter = seccomp.installer(child.seccomp, libc) if child.seccomp is not None else None
    root = os.geteuid() == 0 and not flags & _CLONE_NEWUSER

    def preexec() -> None:
        _prepare(child)
        if flags:
            _unshare(flags)
            if flags & _CLONE_NEWUSER:
                _map_ids(uid, gid)
        pid = os.fork()
        if pid != 0:
            _become_watcher(child, pid)
        # the bot: limits apply to it and its children; it dies with the watcher
        if child.cgroup is not None:
            child.cgroup.join()
        os.setsid()  # out of the watcher's process group: kill(0, ...) cannot reach the watcher
        if root or flags & _CLONE_NEWNS:
            # a mount namespace of the bot's own: what it mounts (and makes read-only) is not the watcher's
            _unshare(_CLONE_NEWNS)
            _mount("none", "/", None, _MS_REC | _MS_PRIVATE)
            if root:
                _expose(child)
        if flags & _CLONE_NEWNS:
            # its own /proc: it sees only its namespace's processes, not the referee's or the
            # other bots' environments and memory (/proc/PID/environ, /proc/PID/mem)
            if libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None) != 0:
                raise OSError(ctypes.get_errno(), "cannot mount a private /proc for the bot")
            # and its own small /dev/shm (tmpfs pages escape the address-space limit); best effort
            if child.private_shm and os.path.isdir("/dev/shm"):
                libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=%dk,mode=1777" % (shm_kib,))
            if child.tmpfs:  # in a mount namespace the watcher is not in (it removes the host's folder)
                _unshare(_CLONE_NEWNS)
                _mount_workdir(child, libc, private=True)
        if root or flags & _CLONE_NEWNS:
            _proc_readonly(strict=root)
        if root:
            _readonly_host(child.keep_writable, bool(flags & _CLONE_NEWNS) and child.private_shm)
            os.chdir(os.getcwd())  # the working directory as now mounted (a writable folder: idmapped)
        _set_rlimits(child.pairs)
        os.umask(child.umask)
        privileged = os.geteuid() == 0 or bool(flags & _CLONE_NEWUSER)
        if privileged:
            _drop_capabilities(libc, last_cap)
        if child.ids is not None:
            os.setgroups([])
            os.setgid(child.ids[1])
            os.setuid(child.ids[0])
        if privileged or child.ids is not None:
            # no capability left (root without them cannot umount its /proc, join other
            # namespaces or raise its limits), and none to be gained by exec
            _clear_capabilities(libc)
        # after any change of user: the kernel clears the parent-death signal on it
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if child.workdir:
            os.chdir(child.workdir)
        if install_filter is not None:
            install_filter()  # last: the calls above (mount, unshare) are among those it denies

    return preexec


def _bwrap_preexec(child: _Child, argv: list[str], env: dict[str, str] | None) -> Callable[[], None]:
    """The ``preexec_fn`` of the "bwrap" sandbox: makes the working directory
    and control groups, forks; the parent becomes the watcher, the child joins
    the groups, sets the rlimits, umask, user (``limits.user``: bwrap then runs
    unprivileged) and its parent-death signal, moves the bot's stdin/stdout
    pipes to fds 3 and 4 (see :data:`INNER`) and executes bwrap itself.
    Neither returns."""
    libc = _libc_handle()
    keep = sorted(child.keep_fds)
    env = dict(env) if env is not None else dict(os.environ)

    def preexec() -> None:
        _prepare(child)
        pid = os.fork()
        if pid != 0:
            _become_watcher(child, pid)
        if child.cgroup is not None:
            child.cgroup.join()
        if child.tmpfs:
            _unshare(_CLONE_NEWNS)  # bwrap binds the tmpfs from this namespace; the host never sees it
            _mount_workdir(child, libc, private=True)
        _set_rlimits(child.pairs)
        if child.covers or child.idmaps:
            # what bwrap (as the bot's uid) must mount but could not reach, or a writable folder
            # the bot's uid could not write: prepared in a mount namespace of the bot's own
            _unshare(_CLONE_NEWNS)
            _mount("none", "/", None, _MS_REC | _MS_PRIVATE)
            _expose(child)
        os.umask(child.umask)
        if child.ids is not None:
            os.setgroups([])
            os.setgid(child.ids[1])
            os.setuid(child.ids[0])
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        os.dup2(0, 3)
        os.dup2(1, 4)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        low = 5
        for fd in keep:
            os.closerange(low, fd)
            low = fd + 1
        os.closerange(low, 1 << 16)
        for fd in keep:
            os.set_inheritable(fd, True)
        if child.seccomp is not None:
            seccomp.pass_program(child.seccomp)
        os.execve(argv[0], argv, env)

    return preexec


def process_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie (Linux ``/proc``)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2 : data.rfind(b")") + 3] != b"Z"
