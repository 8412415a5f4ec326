"""Errors that reach the user as one clear message (never a traceback).

:class:`UserError` is bad input. :func:`user_facing` picks, from the
exception groups that trio nurseries raise, the one exception a user should
see; the command line (:mod:`referee.cli`) and the league's synchronous entry
(:func:`referee.league.runner.play`) both use it, so a group is read the same
way everywhere.
"""

from __future__ import annotations

from referee.rules.base import RulesError


class UserError(Exception):
    """Bad input from the user (a config typo, a missing file, a bad flag value).

    The CLI prints ``error: <message>`` and exits with status 2. The message
    says what is wrong and what to do about it.
    """


#: what a user sees of an exception group, in this order: Ctrl-C anywhere wins, then
#: the first bad input (the user's or the rules'), then a closed output pipe, then a
#: file or folder that cannot be used
PRECEDENCE: tuple[type[BaseException], ...] = (KeyboardInterrupt, UserError, RulesError, BrokenPipeError, OSError)


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside a (possibly nested) exception group, in order; ``[exc]`` for any other."""
    if not isinstance(exc, BaseExceptionGroup):
        return [exc]
    found: list[BaseException] = []
    for inner in exc.exceptions:
        found.extend(leaves(inner))
    return found


def user_facing(exc: BaseException) -> BaseException:
    """The exception to report for ``exc``: itself unless it is an exception
    group; for a group, the first of its leaves of the first kind in
    :data:`PRECEDENCE`, else the group itself (a bug: it keeps its traceback)."""
    if not isinstance(exc, BaseExceptionGroup):
        return exc
    found = leaves(exc)
    for kind in PRECEDENCE:
        for leaf in found:
            if isinstance(leaf, kind):
                return leaf
    return exc
