"""``sandbox = "none"`` as root: the bot's child under a host uid of its own.

No namespaces but, where the bot's uid cannot reach what it needs, a mount
namespace of the bot's own (:func:`~referee.runtime.sandbox.access.expose`);
no capabilities, ``no_new_privs``. See :func:`referee.runtime.sandbox.plan.plan_spawn`."""

from __future__ import annotations

import os
from collections.abc import Callable

from .access import expose
from .child import Child
from .linux import CLONE_NEWNS, MS_PRIVATE, MS_REC, clear_capabilities, libc_handle, mount, set_rlimits, unshare


def none_preexec(child: Child) -> Callable[[], None]:
    """The ``preexec_fn`` of a root referee's bot without a sandbox: its
    rlimits; what it needs exposed (``child.covers``, ``child.idmaps``); its
    umask; then its uid and gid (``child.ids``), every capability dropped and
    ``no_new_privs`` set. Runs in the forked child, before ``exec``."""
    libc = libc_handle()
    ids = child.ids
    assert ids is not None

    def preexec() -> None:
        set_rlimits(child.pairs)
        if child.covers or child.idmaps:
            unshare(CLONE_NEWNS)
            mount("none", "/", None, MS_REC | MS_PRIVATE)
            expose(child)
            os.chdir(os.getcwd())  # the working directory as now mounted (covered or idmapped)
        os.umask(child.umask)
        os.setgroups([])
        os.setgid(ids[1])
        os.setuid(ids[0])
        clear_capabilities(libc)

    return preexec
