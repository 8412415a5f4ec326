"""The home-made "basic" sandbox for machines without bubblewrap: namespaces
the machine allows, the plan of a bot in it and its child."""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import seccomp
from .access import expose, uid_setup
from .child import PROBE, Child, become_watcher, mount_workdir, prepare, proc_readonly, readonly_host, report_file
from .linux import (
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    PR_SET_PDEATHSIG,
    SHM_KIB,
    cap_last_cap,
    clear_capabilities,
    drop_capabilities,
    libc_handle,
    lifeline_fd,
    map_ids,
    mount,
    set_rlimits,
    unshare,
)
from .view import masked_paths, sdk_folder

if TYPE_CHECKING:
    from .plan import SpawnPlan


def ns_flags(network: bool, user: bool, mount: bool = False) -> int:
    flags = CLONE_NEWPID
    if mount:
        flags |= CLONE_NEWNS
    if not network:
        flags |= CLONE_NEWNET
    if user:
        flags |= CLONE_NEWUSER
    return flags


@functools.cache
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
        flags = ns_flags(network, user)

        def probe(flags: int = flags, user: bool = user) -> None:
            unshare(flags)
            if user:
                map_ids(uid, gid)

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


@functools.cache
def private_proc_support(network: bool) -> bool:
    """Can a "basic" bot in its own PID namespace also get its own mount
    namespace with a private ``/proc``? (Some containers forbid mounting proc.)
    Probed once per process by starting ``/bin/true`` exactly the way a bot is
    started."""
    ok, how = namespace_support(network)
    if not ok:
        return False
    flags = ns_flags(network, how == "user namespace", mount=True)
    try:
        rc = subprocess.run(
            ["/bin/true"],
            preexec_fn=_basic_preexec(Child(flags=flags, lifeline=lifeline_fd())),
            timeout=10,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        ).returncode
    except (OSError, subprocess.SubprocessError):
        return False
    return rc == 0


def plan_basic(
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
        if probe_leftovers:
            needed.append(PROBE)
        covers, idmaps = uid_setup(plan, spec, ids, needed, rw)
        # what the bwrap sandbox would hide (the league's output and config, other bots' folders),
        # hidden inside the idmapped folders, where the bot's uid could otherwise read it
        hidden = masked_paths([p for p, _fd, _w in idmaps], needed)
    ok, how = namespace_support(limits.network)
    use_ns = ok and limits.pid_namespace
    private_proc = use_ns and private_proc_support(limits.network)
    flags = ns_flags(limits.network, how == "user namespace", private_proc) if use_ns else 0
    if probe_leftovers and private_proc:
        plan._report_fd = report_file(ids)
        plan.pass_fds = (plan._report_fd,)
        plan.command = list(plan.argv)
        plan.argv = ["/bin/sh", PROBE, "0", str(plan._report_fd), *plan.argv]
    workdir = plan.workdir or ""
    child = Child(
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
        tmpfs=bool(workdir) and bool(flags & CLONE_NEWNS),
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
    elif not flags & CLONE_NEWNS:
        plan.notes.append("no private /proc: this machine does not allow mounting one")


def _basic_preexec(child: Child) -> Callable[[], None]:
    """The ``preexec_fn`` of the "basic" sandbox: runs in the forked child, before ``exec``.

    1. make the working directory and control groups, 2. enter new namespaces
    (``unshare``), 3. fork: the child (PID 1 of the new PID namespace) joins
    the control groups, starts its own session, enters a mount namespace of
    its own (the watcher's stays as it is) where it mounts its private /proc
    and /dev/shm, makes the kernel knobs read-only (:data:`PROC_READONLY`)
    and - the referee being root - the folders it needs reachable
    (:func:`expose`) and the whole host file system read-only but for its own
    folders; it sets its rlimits, umask and user, drops every capability,
    sets its parent-death signal and returns to ``exec`` the bot; the parent
    becomes the watcher and never returns.
    """
    uid, gid = os.getuid(), os.getgid()
    libc = libc_handle()
    shm_kib = SHM_KIB
    last_cap = cap_last_cap()
    flags = child.flags
    install_filter = seccomp.installer(child.seccomp, libc) if child.seccomp is not None else None
    root = os.geteuid() == 0 and not flags & CLONE_NEWUSER

    def preexec() -> None:
        prepare(child)
        if flags:
            unshare(flags)
            if flags & CLONE_NEWUSER:
                map_ids(uid, gid)
        pid = os.fork()
        if pid != 0:
            become_watcher(child, pid)
        # the bot: limits apply to it and its children; it dies with the watcher
        if child.cgroup is not None:
            child.cgroup.join()
        os.setsid()  # out of the watcher's process group: kill(0, ...) cannot reach the watcher
        if root or flags & CLONE_NEWNS:
            # a mount namespace of the bot's own: what it mounts (and makes read-only) is not the watcher's
            unshare(CLONE_NEWNS)
            mount("none", "/", None, MS_REC | MS_PRIVATE)
            if root:
                expose(child)
        if flags & CLONE_NEWNS:
            # its own /proc: it sees only its namespace's processes, not the referee's or the
            # other bots' environments and memory (/proc/PID/environ, /proc/PID/mem)
            if libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
                raise OSError(ctypes.get_errno(), "cannot mount a private /proc for the bot")
            # and its own small /dev/shm (tmpfs pages escape the address-space limit); best effort
            if child.private_shm and os.path.isdir("/dev/shm"):
                libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV, b"size=%dk,mode=1777" % (shm_kib,))
            if child.tmpfs:  # in a mount namespace the watcher is not in (it removes the host's folder)
                unshare(CLONE_NEWNS)
                mount_workdir(child, libc, private=True)
        if root or flags & CLONE_NEWNS:
            proc_readonly(strict=root)
        if root:
            readonly_host(child.keep_writable, bool(flags & CLONE_NEWNS) and child.private_shm)
            os.chdir(os.getcwd())  # the working directory as now mounted (a writable folder: idmapped)
        set_rlimits(child.pairs)
        os.umask(child.umask)
        privileged = os.geteuid() == 0 or bool(flags & CLONE_NEWUSER)
        if privileged:
            drop_capabilities(libc, last_cap)
        if child.ids is not None:
            os.setgroups([])
            os.setgid(child.ids[1])
            os.setuid(child.ids[0])
        if privileged or child.ids is not None:
            # no capability left (root without them cannot umount its /proc, join other
            # namespaces or raise its limits), and none to be gained by exec
            clear_capabilities(libc)
        # after any change of user: the kernel clears the parent-death signal on it
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if child.workdir:
            os.chdir(child.workdir)
        if install_filter is not None:
            install_filter()  # last: the calls above (mount, unshare) are among those it denies

    return preexec
