"""The bubblewrap sandbox: whether bwrap works here, its command line, the plan
of a bot in it and the child that executes it."""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import seccomp
from .access import expose, uid_setup
from .child import JUGGLE, PROBE, Child, become_watcher, mount_workdir, prepare, report_file
from .linux import (
    CLONE_NEWNS,
    MS_PRIVATE,
    MS_REC,
    PR_SET_PDEATHSIG,
    PROC_MASKED,
    PROC_READONLY,
    SANDBOX_UID,
    SHM_KIB,
    libc_handle,
    lifeline_fd,
    mount,
    set_rlimits,
    unshare,
)
from .uids import allocate_uid, as_user, gid_of, release_uid
from .view import ETC, ETC_GLOBS, ETC_NET, SYSTEM_DIRS, inside, masked_paths, outermost, sdk_folder

if TYPE_CHECKING:
    from .plan import SpawnPlan

# --------------------------------------------------------------------------
# what the machine allows: bubblewrap


@functools.cache
def bwrap_path() -> str | None:
    """The ``bwrap`` executable (``REFEREE_BWRAP`` or the PATH), or None."""
    path = os.environ.get("REFEREE_BWRAP") or shutil.which("bwrap")
    return path if path and os.access(path, os.X_OK) else None


#: the bwrap options that not every version has (0.8.0: --disable-userns, --size)
_NEW_OPTIONS = ("disable-userns", "size")


@functools.cache
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
        ids = None if uid is None else (uid, gid_of(uid))
        try:
            run = subprocess.run(
                [*args, "--", "/bin/true"],
                preexec_fn=as_user(ids),
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


@functools.cache
def _system_args(network: bool) -> tuple[str, ...]:
    """The read-only system mounts (each one costs bwrap a fraction of a millisecond)."""
    out: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            out += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            out += ["--ro-bind", d, d]
    names = list(ETC) + (list(ETC_NET) if network else [])
    try:
        names += sorted(n for n in os.listdir("/etc") if n.startswith(ETC_GLOBS))
    except OSError:
        pass
    for name in names:
        path = os.path.join("/etc", name)
        if os.path.exists(path):  # (a dangling symlink would stop bwrap)
            out += ["--ro-bind", path, path]
    return tuple(out)


@functools.cache
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
    # the sandbox's own root (its /etc, the folders bwrap made for the mounts) read-only: the
    # bot writes only its temporary folder, /tmp, /dev/shm and a writable folder (own mounts)
    args += ["--remount-ro", "/", "--chdir", chdir]
    if seccomp_fd is not None:  # the filter (referee.runtime.seccomp), read from this fd
        args += ["--seccomp", str(seccomp_fd)]
    return args


def plan_bwrap(
    plan: SpawnPlan, spec: Any, limits: Any, base: str, cwd: str, ids: tuple[int, int] | None, probe_leftovers: bool
) -> None:
    path = bwrap_path()
    assert path is not None
    features = _BWRAP_FEATURES.get(path, frozenset())
    named = not limits.temp_workdir
    needed = plan.view.mounts() if plan.view is not None else []
    own = outermost(needed)
    # only the bot's named folder (its cwd) can be writable; all else is read-only
    folder = plan.view.folder if plan.view is not None and plan.view.folder else os.path.realpath(base)
    rw = bool(limits.writable) and named
    binds = [(p, False) for p in own if not (rw and p == folder)]
    if rw:
        binds.append((folder, True))
        binds.sort(key=lambda b: b[0].count("/"))  # a writable folder inside a read-only one: mounted after it
    sdk = sdk_folder()
    if sdk is not None and not any(inside(sdk, p) for p in own):
        binds.append((sdk, False))
    if probe_leftovers:
        binds.append((PROBE, False))
    if plan.workdir:
        binds.append((plan.workdir, True))
    covers: list[tuple[str, list[str]]] = []
    idmaps: list[tuple[str, int, bool]] = []
    if ids is not None:
        covers, idmaps = uid_setup(plan, spec, ids, [p for p, _w in binds], folder if rw else None)
    masks = masked_paths([b for b, _ in binds], needed)
    if probe_leftovers:
        plan._report_fd = report_file(ids)
        plan.pass_fds = (plan._report_fd,)
        inner = ["/bin/sh", PROBE, "1", str(plan._report_fd), *plan.argv]
    else:
        inner = ["/bin/sh", "-c", JUGGLE, "sh", *plan.argv]
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
    child = Child(
        pairs=limits.pairs(),
        lifeline=lifeline_fd(),
        workdir=plan.workdir or "",
        ids=ids,
        umask=0o022 if rw else 0o077,
        cgroup=plan.cgroup,
        signal_codes=True,
        keep_fds=plan.pass_fds,
        seccomp=bpf,
        tmpfs=plan.tmpfs,
        uid_lock=plan._uid_lock if plan._uid_lock is not None else -1,
        covers=covers,
        idmaps=idmaps,
    )
    plan.preexec = _bwrap_preexec(child, plan.argv, plan.env)


def _bwrap_preexec(child: Child, argv: list[str], env: dict[str, str] | None) -> Callable[[], None]:
    """The ``preexec_fn`` of the "bwrap" sandbox: makes the working directory
    and control groups, forks; the parent becomes the watcher, the child joins
    the groups, sets the rlimits, umask, user (``limits.user``: bwrap then runs
    unprivileged) and its parent-death signal, moves the bot's stdin/stdout
    pipes to fds 3 and 4 (see :data:`~referee.runtime.sandbox.child.JUGGLE`) and executes bwrap itself.
    Neither returns."""
    libc = libc_handle()
    keep = sorted(child.keep_fds)
    env = dict(env) if env is not None else dict(os.environ)

    def preexec() -> None:
        prepare(child)
        pid = os.fork()
        if pid != 0:
            become_watcher(child, pid)
        if child.cgroup is not None:
            child.cgroup.join()
        exposed = bool(child.covers or child.idmaps)
        if child.tmpfs or exposed:
            # one mount namespace of the bot's own, whose mounts never reach the host: the bounded
            # tmpfs of its temporary folder (bwrap binds it from here), and what bwrap (as the bot's
            # uid) must mount but could not reach, or a writable folder its uid could not write
            unshare(CLONE_NEWNS)
            mount("none", "/", None, MS_REC | MS_PRIVATE)
        if child.tmpfs:
            mount_workdir(child, libc)
        set_rlimits(child.pairs)
        if exposed:
            expose(child)
        os.umask(child.umask)
        if child.ids is not None:
            os.setgroups([])
            os.setgid(child.ids[1])
            os.setuid(child.ids[0])
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
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
