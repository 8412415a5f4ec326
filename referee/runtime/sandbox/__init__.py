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

    referee ──pipe──> watcher (python -I -S watcher.py, pid W, own session; host namespaces)
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
* ``"none"`` - only the rlimits (trusted bots, debugging); a root referee
  still runs the bot as a host uid of its own (or ``user``), without
  capabilities and with ``no_new_privs`` (:mod:`.none`).

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
what the bot needs reachable (:func:`_covers`, :func:`expose`: an
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


The package, by seam: :mod:`.linux` (system calls, constants, the lifeline),
:mod:`.uids` (host uids), :mod:`.view` (what a bot sees: paths resolved,
mounts, refusals, hints), :mod:`.access` (a bot's uid reaching what it needs),
:mod:`.child` (the forked child, the watcher it becomes), :mod:`.bwrap` and
:mod:`.basic` (the two sandboxes), :mod:`.none` (a root referee's bot without
one), :mod:`.mode` (which one, and whether the
limits can be met), :mod:`.plan` (:func:`plan_spawn`, :class:`SpawnPlan`);
``watcher.py`` (the watcher's program) and ``probe.sh`` (check-bot's leftover
probe) are run as files.
"""

from __future__ import annotations

from .basic import namespace_support, private_proc_support
from .bwrap import bwrap_path, bwrap_support
from .linux import PROC_MASKED, PROC_READONLY, SANDBOX_UID, SHM_KIB, WORKDIR_INODES, WORKDIR_KIB, lifeline_fd
from .mode import MODES, check_limits, limits_problem, sandbox_mode
from .plan import SpawnPlan, plan_spawn
from .uids import UID_BASE, UID_COUNT, allocate_uid, release_uid, uid_range
from .view import (
    BotView,
    _overlap,
    bot_folders,
    bot_view,
    check_view,
    minimal_env,
    own_paths,
    protect_paths,
    protection_scope,
    resolve_command,
    sdk_folder,
    unseen_hint,
    unseen_paths,
)

__all__ = [
    "MODES",
    "PROC_MASKED",
    "PROC_READONLY",
    "SANDBOX_UID",
    "SHM_KIB",
    "UID_BASE",
    "UID_COUNT",
    "WORKDIR_INODES",
    "WORKDIR_KIB",
    "BotView",
    "SpawnPlan",
    "_overlap",
    "allocate_uid",
    "bot_folders",
    "bot_view",
    "bwrap_path",
    "bwrap_support",
    "check_limits",
    "check_view",
    "lifeline_fd",
    "limits_problem",
    "minimal_env",
    "namespace_support",
    "own_paths",
    "plan_spawn",
    "private_proc_support",
    "protect_paths",
    "protection_scope",
    "release_uid",
    "resolve_command",
    "sandbox_mode",
    "sdk_folder",
    "uid_range",
    "unseen_hint",
    "unseen_paths",
]
