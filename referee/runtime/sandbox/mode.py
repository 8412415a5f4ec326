"""Which sandbox a bot gets, and whether its limits can be met here."""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

from referee.errors import UserError

from .basic import namespace_support
from .bwrap import bwrap_support
from .uids import check_reachable, resolve_user

#: the sandboxes, in the order "auto" tries them
MODES = ("bwrap", "basic", "none")

# --------------------------------------------------------------------------
# which sandbox, and whether the limits can be met


def sandbox_mode(limits: Any) -> tuple[str, str | None]:
    """``(mode, problem)``: the sandbox a bot with ``limits`` gets here
    ("bwrap", "basic" or "none"), and why that is not what it asked for (None
    when fine). ``sandbox = true`` ("auto") means bwrap where it works, else
    basic; ``require_sandbox`` refuses anything but bwrap."""
    if limits is None:
        from ..limits import ResourceLimits

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
        return resolve_user(user)[0]
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
            uid, _gid = resolve_user(user)
            if getattr(limits, "temp_workdir", True):
                check_reachable(os.path.join(tempfile.gettempdir(), "x"), uid, user)
        except (ValueError, UserError) as exc:
            return str(exc)
    return None


def check_limits(limits: Any, where: str = "limits") -> None:
    """Raise :class:`UserError` (``where: reason``) if ``limits`` asks for
    something this machine cannot do (see :func:`limits_problem`)."""
    problem = limits_problem(limits)
    if problem:
        raise UserError(f"{where}: {problem}")
