"""One exception root for bot trouble: :class:`BotError`.

Every message names the bot, the seat (when it plays one) and the offending
line or decision, so it can be shown to the bot's author as is. ``fault`` is
the protocol's fault name (``timeout``, ``crash``, ``malformed``,
``illegal``, ``stale``); :class:`BotRefused` and :class:`BotStartError` are
start-up failures (no seat yet).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

#: what is wrong with a refused line or reply (:class:`Problem`)
ProblemKind = Literal[
    "field_type",  # a field has the wrong JSON type: ``field``, ``expected``, ``got`` (None when not known)
    "missing_field",  # ``field`` (a dotted path for a nested one) is required
    "invalid_value",  # ``field`` has a value its type does not allow: ``got`` (as msgspec shows it)
    "unknown_type",  # ``"type"`` names no message a bot sends: ``got`` (as msgspec shows it)
    "type_key",  # ``"type"`` is not a string, or appears more than once
    "not_utf8",
    "empty",
    "too_long",  # longer than the line limit
    "too_deep",  # JSON nested too deeply
    "not_json",
    "not_object",  # JSON but not one object: ``expected``, ``got`` (JSON type names)
    "wrong_reply",  # a reply of another type than the decision's: ``expected`` (the decide), ``got``
    "illegal",  # a reply of the right type that the rules do not allow now
    "other",
]


class Problem(msgspec.Struct, frozen=True):
    """What is wrong with a refused line or reply, for a program to act on
    (check-bot's fixes): ``kind`` and, when the kind has them, the ``field``
    (its dotted path), the ``expected`` JSON type or value and what it ``got``.
    Worded in the same place as the error's ``detail`` (:mod:`referee.core.decode`,
    the machine), so the two never disagree. In memory only: logs and the
    ledger keep the detail."""

    kind: ProblemKind
    field: str | None = None
    expected: str | None = None
    got: str | None = None


class BotError(Exception):
    """Something a bot did wrong. ``detail`` is the text sent to the bot in an
    ``error`` message; ``str(exc)`` adds the bot's name and seat. ``problem``:
    the structured :class:`Problem` of a malformed or illegal reply (None when
    not known, and for the other faults)."""

    fault: str = "crash"
    #: for a failed ``hello``: the dead :class:`BotSession` (set by ``BotSession.start``)
    session: Any = None

    def __init__(
        self,
        detail: str,
        *,
        bot: str = "?",
        seat: int | None = None,
        turn_id: int | None = None,
        problem: Problem | None = None,
    ) -> None:
        self.detail = detail
        self.bot = bot
        self.seat = seat
        self.turn_id = turn_id
        self.problem = problem
        where = f"bot {bot!r}" + (f" (seat {seat})" if seat is not None else "")
        super().__init__(f"{where}: {self.fault}: {detail}")


class BotTimeout(BotError):
    """No reply within the decision's limit (or the startup limit)."""

    fault = "timeout"


class BotCrashed(BotError):
    """The process exited, or closed its stdin/stdout."""

    fault = "crash"


class BotMalformed(BotError):
    """A line that is not a protocol message: invalid UTF-8, not JSON, wrong
    schema, unknown message type, or longer than the line limit."""

    fault = "malformed"


class BotIllegal(BotError):
    """A well-formed reply the rules do not allow now, or a reply of the wrong
    type for the pending decision."""

    fault = "illegal"


class BotStale(BotError):
    """A reply whose ``id`` is not the current turn's."""

    fault = "stale"


class BotRefused(BotError):
    """The ``hello`` handshake failed (e.g. protocol major version mismatch)."""

    fault = "malformed"


class BotStartError(BotError):
    """The bot's command could not be started at all. ``reason`` says why, for
    a program to act on: ``"not_found"`` (the program or the working directory),
    ``"directory"`` (the program is a folder), ``"not_executable"``,
    ``"no_interpreter"`` (a script without a ``#!`` line) or ``"other"``."""

    fault = "crash"

    def __init__(self, detail: str, *, bot: str = "?", reason: str = "other") -> None:
        super().__init__(detail, bot=bot)
        self.reason = reason


#: what the other seats learn about a fault (the ``detail`` of the public ``fault``
#: event). Fixed texts: the full detail quotes the bot's own output (its line,
#: its card names, its stderr), and passing that to every seat would give
#: colluding bots a channel through the referee. The faulting bot gets the full
#: detail in its ``error`` message; the log keeps it too.
PUBLIC_FAULT_DETAIL = {
    "timeout": "the bot did not answer in time",
    "crash": "the bot's process ended or closed its pipes",
    "malformed": "the bot wrote a line that is not a valid protocol message",
    "illegal": "the bot chose an action the rules do not allow",
    "stale": "the bot answered with a stale or unknown turn id",
}


def wrong_reply(turn_id: int | None, want: str, got: str) -> tuple[str, Problem]:
    """The detail and problem of a reply of type ``got`` to a turn that asks for ``want``."""
    return (
        f"turn {turn_id} asks for a `{want}` reply, got `{got}`",
        Problem("wrong_reply", expected=want, got=got),
    )


_RETRY_NOTE = " (send a corrected reply to this turn now; "


def retry_note(left: int) -> str:
    """The end of an ``error`` message that forgives a bad reply (retry policy):
    ``left`` retries remain after the corrected reply the bot may send now."""
    if left <= 0:
        return _RETRY_NOTE + "this is your last try)"
    return _RETRY_NOTE + f"{left} more {'retry' if left == 1 else 'retries'} after this one)"


def is_retry_error(detail: str) -> bool:
    """Whether an ``error`` message's detail ends with :func:`retry_note` (a forgiven reply)."""
    return _RETRY_NOTE in detail


def split_retry_note(detail: str) -> tuple[str, str]:
    """An ``error`` detail as (the fault's detail, its :func:`retry_note`; "" without one)."""
    i = detail.find(_RETRY_NOTE)
    return (detail, "") if i < 0 else (detail[:i], detail[i:])


def public_fault_detail(fault: str) -> str:
    """The ``detail`` of the public ``fault`` event for a fault type."""
    return PUBLIC_FAULT_DETAIL.get(fault, "the bot misbehaved") + "; the referee plays this seat from here on"
