"""The bot sandbox: how a bot process is started so that it cannot outlive,
starve or snoop on the referee.

:func:`plan_spawn` turns a :class:`~referee.runtime.spec.BotSpec` into a
:class:`SpawnPlan` - the argv, working directory, environment and
``preexec_fn`` to hand to :func:`trio.lowlevel.open_process` (with
``start_new_session=True``) - and :meth:`SpawnPlan.cleanup` removes what the
plan created once the process group is dead.

What a started bot looks like (when the machine allows it)::

    referee ──pipe──> watcher (python -I -S, pid W, process group W, host namespaces)
                        └── bot (pid 1 of its own PID namespace; own mount
                            namespace with a private /proc and /dev/shm; own network
                            namespace when network = false; rlimits; temp cwd;
                            scrubbed environment; optionally another user;
                            PR_SET_PDEATHSIG = SIGKILL)
                              └── anything the bot forks (same PID namespace)

* The **watcher** is the process the runtime sees (its pid is the process
  group id). It holds no pipe of the bot (its stdio is /dev/null), waits for
  the bot and exits with the bot's status (a bot killed by signal N makes the
  watcher die of signal N too). It also holds the read end of the referee's
  *lifeline* pipe, whose write end only the referee holds: when the referee
  dies in any way - even SIGKILL - the kernel closes the write end, the
  watcher sees end-of-file at once, kills the bot and removes its working
  directory.
* The **bot** is PID 1 of a fresh PID namespace: when it dies, the kernel
  kills every process left in that namespace, including children that called
  ``setsid()`` to leave the process group. Its parent-death signal is SIGKILL,
  so killing the watcher (``killpg`` by the runtime) kills the bot, and so the
  whole namespace.
* Why not simply ``PR_SET_PDEATHSIG`` on the bot? The kernel sends that
  signal when the parent *thread* exits, and trio forks in a worker thread
  that exits after 10 s idle: bots would be killed at random. The lifeline
  pipe does not depend on threads.

Without PID namespaces (an unprivileged user with user namespaces disabled)
the watcher still kills the bot's process group when the referee dies, but a
child that leaves the process group with ``setsid()`` can survive.
``network = false`` needs a network namespace: when the machine does not
allow one, :func:`plan_spawn` (and :func:`check_limits`) raise
:class:`~referee.errors.UserError` saying so - the referee never silently
runs a bot with network access that was asked to have none.

Errors: :func:`plan_spawn` raises ``UserError`` for impossible requests
(network isolation unavailable, an unknown user, another user without root).
The first call probes what the machine allows by starting ``/bin/true`` the
same way (tens of milliseconds, once per process, blocking). A failure inside the child before ``exec``
(a limit the kernel refuses) makes the child exit before the bot starts; the
runtime reports that as the bot failing to start. Nothing here is
cancellable; cleanup never raises.
"""

from __future__ import annotations

import atexit
import ctypes
import fcntl
import functools
import os
import re
import resource
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable

from referee.errors import UserError

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_PR_SET_PDEATHSIG = 1
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18

#: size of the private /dev/shm a bot in its own namespaces gets
SHM_KIB = 64 * 1024

#: the environment every sandboxed bot gets (plus what the config passes)
_LANG = "C.UTF-8"

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
# the watcher (runs as ``python -I -S -c WATCHER bot_pid workdir``)

WATCHER = r"""
import os, select, signal, sys
pid = int(sys.argv[1]); workdir = sys.argv[2]
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
            os._exit(0)
if referee_gone:
    try: os.kill(pid, signal.SIGKILL)
    except OSError: pass
while True:
    try:
        _, status = os.waitpid(pid, 0)
        break
    except InterruptedError:
        continue
    except ChildProcessError:
        status = 0
        break
rmtree(workdir)
if referee_gone:
    os.killpg(0, signal.SIGKILL)
if os.WIFSIGNALED(status):
    sig = os.WTERMSIG(status)
    try: signal.signal(sig, signal.SIG_DFL)
    except (OSError, ValueError): pass
    os.kill(os.getpid(), sig)
os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)
"""


# --------------------------------------------------------------------------
# what the machine allows


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
    """Can bots get their own PID namespace (and, with ``network=False``, their
    own network namespace)? Returns ``(ok, how_or_why)``: ``how`` is "root" or
    "user namespace"; ``why`` is the reason it is not possible. Probed once per
    process by starting ``/bin/true`` the way a bot would be started."""
    if not sys.platform.startswith("linux"):
        return False, f"namespaces need Linux (this is {sys.platform})"
    uid, gid = os.getuid(), os.getgid()
    errors: list[str] = []
    for user in ((False, True) if uid == 0 else (True,)):
        flags = _ns_flags(network, user)

        def probe(flags: int = flags, user: bool = user) -> None:
            _unshare(flags)
            if user:
                _map_ids(uid, gid)

        try:
            rc = subprocess.run(["/bin/true"], preexec_fn=probe, timeout=10,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL).returncode
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
    """Can a bot in its own PID namespace also get its own mount namespace with
    a private ``/proc``? (Some containers forbid mounting proc.) Probed once per
    process by starting ``/bin/true`` exactly the way a bot is started."""
    ok, how = namespace_support(network)
    if not ok:
        return False
    flags = _ns_flags(network, how == "user namespace", mount=True)
    try:
        rc = subprocess.run(["/bin/true"], preexec_fn=_sandbox_preexec([], flags, lifeline_fd(), "", None, False),
                            timeout=10, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True).returncode
    except (OSError, subprocess.SubprocessError):
        return False
    return rc == 0


def limits_problem(limits: Any) -> str | None:
    """Why this machine cannot do what ``limits`` asks (``network = false``
    without network namespaces, ``user`` when not root or unknown), or None."""
    if limits is None or not getattr(limits, "sandbox", True):
        return None
    if getattr(limits, "network", True) is False:
        ok, why = namespace_support(False)
        if not ok:
            return (f"network = false (run bots without network access) is not possible here: {why}; "
                    "set network = true to run the bots with network access")
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
        raise ValueError(f"user = {user!r}: running bots as another user needs the referee to run as root "
                         f"(it runs as uid {os.geteuid()}); leave user out to run them as yourself")
    return entry.pw_uid, entry.pw_gid


def _check_reachable(path: str, uid: int, user: Any) -> None:
    """``UserError`` unless every folder above ``path`` lets ``uid`` pass."""
    parent = os.path.dirname(path)
    while True:
        st = os.stat(parent)
        if not (st.st_mode & 0o001 or (st.st_uid == uid and st.st_mode & 0o100)):
            raise UserError(
                f"user = {user!r}: the bots' temporary folders are made in {os.path.dirname(path)}, but that user "
                f"cannot enter {parent}; set TMPDIR to a folder it can reach (e.g. /var/tmp)")
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
# the plan


_SHELL_WORD = re.compile(r"(?<![^\s])([A-Za-z0-9_./+@%:,-]+)(?![^\s])")


def _absolutize(arg: str, base: str) -> str:
    if not arg or os.path.isabs(arg) or arg.startswith("-") or arg in (".", ".."):
        return arg
    path = os.path.join(base, arg)
    if ("/" in arg or "." in arg) and os.path.exists(path):
        return os.path.normpath(path)
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
    """Arguments for ``open_process`` and the clean-up owed afterwards."""

    argv: list[str]
    cwd: str | None
    env: dict[str, str] | None
    preexec: Callable[[], None] | None
    workdir: str | None = None            # temporary directory this plan created
    namespaces: str = "none"              # "pid", "pid+net" or "none"
    notes: list[str] = field(default_factory=list)

    def cleanup(self) -> None:
        """Remove the temporary working directory (after the process group is
        dead). Never raises; safe to call twice."""
        if self.workdir is not None:
            _force_rmtree(self.workdir)
            _LIVE_WORKDIRS.discard(self.workdir)
            self.workdir = None


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


def plan_spawn(spec: Any) -> SpawnPlan:
    """How to start the bot of ``spec`` (a ``BotSpec``) in its sandbox.

    With ``spec.limits`` None the defaults of
    :class:`~referee.runtime.limits.ResourceLimits` apply. The temporary
    working directory (when asked for) is named here but created by the child
    itself, so a referee killed before the fork leaves nothing behind; the
    caller must call :meth:`SpawnPlan.cleanup` once the process is gone, also
    when the start fails. Raises :class:`UserError` for impossible requests.
    """
    from .limits import ResourceLimits

    limits = spec.limits if spec.limits is not None else ResourceLimits()
    if not limits.sandbox:
        argv = spec.argv() if hasattr(spec, "argv") else resolve_command(spec.command, os.getcwd())
        return SpawnPlan(argv=argv, cwd=spec.cwd, env=spec.env, preexec=_rlimits_only(limits.pairs()))
    check_limits(limits, f"bot {spec.name!r}: limits")
    base = os.path.abspath(spec.cwd) if spec.cwd else os.getcwd()
    workdir = None
    if limits.temp_workdir:
        label = re.sub(r"[^A-Za-z0-9_.-]", "_", spec.name)[:40]
        workdir = os.path.join(tempfile.gettempdir(), f"referee-bot-{label}-{secrets.token_hex(6)}")
        _LIVE_WORKDIRS.add(workdir)
        cwd = workdir
        argv = resolve_command(spec.command, base)
    else:
        cwd = base
        argv = spec.argv() if hasattr(spec, "argv") else resolve_command(spec.command, base)
    if limits.clean_env:
        env = minimal_env(spec.env, cwd)
        env.setdefault("REFEREE_BOT_DIR", base)
    else:
        env = dict(os.environ) if spec.env is None else dict(spec.env)
    ok, how = namespace_support(limits.network)
    use_ns = ok and limits.pid_namespace
    flags = _ns_flags(limits.network, how == "user namespace", private_proc_support(limits.network)) if use_ns else 0
    ids: tuple[int, int] | None = None
    if limits.user is not None:
        try:
            ids = _resolve_user(limits.user)
        except ValueError as exc:
            raise UserError(f"bot {spec.name!r}: limits: {exc}") from None
        if workdir:
            _check_reachable(workdir, ids[0], limits.user)
    plan = SpawnPlan(
        argv=argv, cwd=None if workdir else cwd, env=env, workdir=workdir,
        # no private /dev/shm when the bot's own files live there (it would hide them)
        preexec=_sandbox_preexec(limits.pairs(), flags, lifeline_fd(), workdir or "", ids,
                                 private_shm=not any("/dev/shm" in a for a in (workdir or "", base, *argv))),
        namespaces=("pid" + ("" if limits.network else "+net")) if use_ns else "none",
    )
    if not use_ns:
        plan.notes.append("no PID namespace: " + (how if not ok else "disabled by limits"))
    elif not flags & _CLONE_NEWNS:
        plan.notes.append("no private /proc: this machine does not allow mounting one")
    return plan


def _rlimits_only(pairs: list[tuple[int, int]]) -> Callable[[], None] | None:
    if not pairs:
        return None

    def apply() -> None:
        for which, value in pairs:
            resource.setrlimit(which, (value, value))

    return apply


def _sandbox_preexec(pairs: list[tuple[int, int]], flags: int, lifeline: int, workdir: str,
                     ids: tuple[int, int] | None = None, private_shm: bool = True) -> Callable[[], None]:
    """The ``preexec_fn``: runs in the forked child, before ``exec``.

    1. enter new namespaces (``unshare``), 2. fork: the child (PID 1 of the
    new PID namespace) sets its parent-death signal and rlimits and returns
    to ``exec`` the bot; the parent becomes the watcher (``exec`` of
    ``python -I -S -c WATCHER``) and never returns.
    """
    uid, gid = os.getuid(), os.getgid()
    python = sys.executable
    libc = _libc_handle()
    shm_kib = SHM_KIB

    def preexec() -> None:
        if workdir:
            os.mkdir(workdir, 0o700)
            if ids is not None:
                os.chown(workdir, ids[0], ids[1])
        if flags:
            _unshare(flags)
            if flags & _CLONE_NEWUSER:
                _map_ids(uid, gid)
        pid = os.fork()
        if pid == 0:
            # the bot: limits apply to it and its children; it dies with the watcher
            if flags & _CLONE_NEWNS:
                # its own /proc: it sees only its namespace's processes, not the referee's or the
                # other bots' environments and memory (/proc/PID/environ, /proc/PID/mem)
                if libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0 or \
                        libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None) != 0:
                    raise OSError(ctypes.get_errno(), "cannot mount a private /proc for the bot")
                # and its own small /dev/shm (tmpfs pages escape the address-space limit); best effort
                if private_shm and os.path.isdir("/dev/shm"):
                    libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", _MS_NOSUID | _MS_NODEV,
                               b"size=%dk,mode=1777" % (shm_kib,))
            for which, value in pairs:
                try:
                    resource.setrlimit(which, (value, value))
                except (ValueError, OSError):
                    # cannot raise a hard limit: keep the lower inherited one
                    soft, hard = resource.getrlimit(which)
                    if hard == resource.RLIM_INFINITY or value < hard:
                        raise
            if ids is not None:
                os.setgroups([])
                os.setgid(ids[1])
                os.setuid(ids[0])
            # after any change of user: the kernel clears the parent-death signal on it
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if workdir:
                os.chdir(workdir)
            return
        # the watcher: no pipes of the bot, only the lifeline as fd 3 (lifeline >= 10:
        # dup2 onto a different number clears close-on-exec)
        try:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.dup2(lifeline, 3)
            os.closerange(4, 1 << 16)
            os.execv(python, [python, "-I", "-S", "-c", WATCHER, str(pid), workdir])
        finally:
            # exec failed: do not leave an unwatched bot behind
            try:
                os.kill(pid, signal.SIGKILL)
            finally:
                os._exit(127)

    return preexec


def process_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie (Linux ``/proc``)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2 : data.rfind(b")") + 3] != b"Z"

