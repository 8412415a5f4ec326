"""The plan of a bot's start (:func:`plan_spawn`, :class:`SpawnPlan`) and the
clean-up it owes."""

from __future__ import annotations

import atexit
import errno
import os
import re
import resource
import secrets
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.errors import UserError

from .. import cgroups
from .access import strip_setid, uid_setup
from .basic import plan_basic
from .bwrap import plan_bwrap
from .child import Child
from .linux import WORKDIR_INODES, WORKDIR_KIB, batch_scheduling
from .mode import check_limits, sandbox_mode
from .none import none_preexec
from .uids import allocate_uid, check_reachable, release_uid, resolve_user
from .view import BotView, bot_view, check_view, minimal_env, resolve_command, sdk_folder, unseen_hint


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
        pre-exec step and passed fds, in a new session, under ``SCHED_BATCH``:
        :func:`~referee.runtime.sandbox.linux.batch_scheduling`): the one place a
        bot or a build is started. Returns the ``trio.Process``; ``OSError`` as
        ``open_process``."""
        import trio

        return await trio.lowlevel.open_process(
            self.argv,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=self.cwd,
            env=self.env,
            start_new_session=True,
            preexec_fn=_batch_then(self.preexec),
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
        from ..cpu import group_cpu_seconds, tree_cpu_seconds

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
            # the scheduling policy every bot runs under (see batch_scheduling)
            "scheduling": "batch" if hasattr(os, "SCHED_BATCH") else "normal",
        }
        if self.workdir is not None or self.tmpfs:
            info["workdir"] = f"tmpfs {WORKDIR_KIB // 1024} MiB, {WORKDIR_INODES} files" if self.tmpfs else "host"
        if getattr(limits, "user", None) is not None and (self.mode != "none" or self.uid is not None):
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
            strip_setid(self._idmapped_writable)
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


def _batch_then(preexec: Callable[[], None] | None) -> Callable[[], None]:
    """The child's first step, before the plan's own pre-exec step: the
    scheduling policy every bot (and build) runs under."""

    def run() -> None:
        batch_scheduling()
        if preexec is not None:
            preexec()

    return run


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
    from ..limits import ResourceLimits

    limits = spec.limits if spec.limits is not None else ResourceLimits()
    mode, problem = sandbox_mode(limits)
    if problem:
        raise UserError(f"bot {spec.name!r}: limits: {problem}")
    if mode == "none":
        return _plan_none(spec, limits)
    check_limits(limits, f"bot {spec.name!r}: limits")
    base = os.path.abspath(spec.cwd) if spec.cwd else os.getcwd()
    plan = _new_plan(spec, limits, mode, base)
    try:
        ids = _host_ids(plan, spec, limits)
        if mode == "bwrap" or probe_leftovers:
            # the bot is started through a wrapper whose own exec succeeds: check its command first
            error = _exec_error(plan.argv, base, plan.env)
            if error is not None:
                return _as_failing(plan, plan.argv, base)
        if mode == "bwrap":
            plan_bwrap(plan, spec, limits, base, plan.workdir or os.path.realpath(base), ids, probe_leftovers)
        else:
            plan_basic(plan, spec, limits, base, ids, probe_leftovers)
    except BaseException:
        plan.cleanup()
        raise
    if plan.cgroup is None:
        plan.notes.append("no control group: CPU time from /proc, memory and processes by rlimits only")
    return plan


def _new_plan(spec: Any, limits: Any, mode: str, base: str) -> SpawnPlan:
    """The plan of a sandboxed bot before its sandbox's part: argv resolved
    from ``base``, the temporary folder and control groups named (not made),
    the environment, what the bot sees (refused if it shows a protected path)."""
    label = re.sub(r"[^A-Za-z0-9_.-]", "_", spec.name)[:40]
    token = secrets.token_hex(6)
    workdir = None
    if limits.temp_workdir:
        workdir = os.path.join(tempfile.gettempdir(), f"referee-bot-{label}-{token}")
        _LIVE_WORKDIRS.add(workdir)
    cwd = workdir or os.path.realpath(base)  # a named folder is mounted at its resolved path
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
    lay = cgroups.layout()
    cg = None
    if lay is not None:
        cg = cgroups.BotCgroup(
            lay, f"referee-bot-{label}-{token}", memory_bytes=limits.address_space, pids_max=limits.processes
        )
    return SpawnPlan(
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


def _host_ids(plan: SpawnPlan, spec: Any, limits: Any) -> tuple[int, int] | None:
    """The host uid and gid the bot runs as: ``limits.user``'s; as a root
    referee without ``user`` a uid of its own (:func:`allocate_uid`, locked
    in ``plan``); None: the referee's own (a non-root referee)."""
    ids: tuple[int, int] | None = None
    if limits.user is not None:
        try:
            ids = resolve_user(limits.user)
        except ValueError as exc:
            raise UserError(f"bot {spec.name!r}: limits: {exc}") from None
        if plan.workdir:
            check_reachable(plan.workdir, ids[0], limits.user)
    elif os.geteuid() == 0:
        # no bot ever runs as host uid 0: each gets a uid (and gid) of its own
        uid, plan._uid_lock = allocate_uid(limits)
        ids = (uid, uid)
    plan.uid = ids[0] if ids is not None else None
    return ids


def _plan_none(spec: Any, limits: Any) -> SpawnPlan:
    """``sandbox = "none"``: the command as given, in its ``cwd``, with the
    rlimits only - but a root referee still never runs it as host uid 0: it
    runs as ``user`` or a uid of its own (as in the sandboxes), without
    capabilities and with ``no_new_privs`` (no setuid program gives root
    back). What that uid cannot reach of what the bot needs (its folder, its
    interpreter in root's 0700 home, the SDK) is exposed to it the way the
    sandboxes do, in a mount namespace of the bot's own (:func:`uid_setup`);
    its folder is writable to it only with ``writable`` (a build)."""
    argv = spec.argv() if hasattr(spec, "argv") else resolve_command(spec.command, os.getcwd())
    plan = SpawnPlan(
        argv=argv, cwd=spec.cwd, env=spec.env, preexec=_rlimits_only(limits.pairs()), mode="none", limits=limits
    )
    if os.geteuid() != 0:
        return plan
    try:
        ids = _host_ids(plan, spec, limits)
        assert ids is not None
        base = os.path.abspath(spec.cwd) if spec.cwd else os.getcwd()
        plan.view = bot_view(spec.command, base, spec.env, named_cwd=True)
        folder = plan.view.folder or os.path.realpath(base)
        needed = [*plan.view.mounts(), os.path.realpath(base)]
        sdk = sdk_folder()
        if sdk is not None:
            needed.append(sdk)
        covers, idmaps = uid_setup(plan, spec, ids, needed, folder if limits.writable else None)
    except BaseException:
        plan.cleanup()
        raise
    umask = 0o022 if limits.writable else 0o077
    plan.preexec = none_preexec(Child(pairs=limits.pairs(), ids=ids, umask=umask, covers=covers, idmaps=idmaps))
    return plan


def _exec_error(argv: list[str], cwd: str, env: dict[str, str] | None) -> OSError | None:
    """The error ``exec`` of ``argv`` would raise here (not found, a directory,
    not executable, not a program), or None. Checked up front where the bot is
    started through a wrapper (bwrap, the leftover probe), whose own ``exec``
    succeeds either way."""

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


def _rlimits_only(pairs: list[tuple[int, int]]) -> Callable[[], None] | None:
    if not pairs:
        return None

    def apply() -> None:
        for which, value in pairs:
            resource.setrlimit(which, (value, value))

    return apply
