"""One exception root for bot trouble: :class:`BotError`.

Every message names the bot, the seat (when it plays one) and the offending
line or decision, so it can be shown to the bot's author as is. ``fault`` is
the protocol's fault name (``timeout``, ``crash``, ``malformed``,
``illegal``, ``stale``); :class:`BotRefused` and :class:`BotStartError` are
start-up failures (no seat yet).
"""

from __future__ import annotations

from typing import Any


class BotError(Exception):
    """Something a bot did wrong. ``detail`` is the text sent to the bot in an
    ``error`` message; ``str(exc)`` adds the bot's name and seat."""

    fault: str = "crash"
    #: for a failed ``hello``: the dead :class:`BotSession` (set by ``BotSession.start``)
    session: Any = None

    def __init__(self, detail: str, *, bot: str = "?", seat: int | None = None, turn_id: int | None = None) -> None:
        self.detail = detail
        self.bot = bot
        self.seat = seat
        self.turn_id = turn_id
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


def retry_note(left: int) -> str:
    """The end of an ``error`` message that forgives a bad reply (retry policy):
    ``left`` retries remain after the corrected reply the bot may send now."""
    if left <= 0:
        return " (send a corrected reply to this turn now; this is your last try)"
    return (
        f" (send a corrected reply to this turn now; {left} more {'retry' if left == 1 else 'retries'} after this one)"
    )


def public_fault_detail(fault: str) -> str:
    """The ``detail`` of the public ``fault`` event for a fault type."""
    return PUBLIC_FAULT_DETAIL.get(fault, "the bot misbehaved") + "; the referee plays this seat from here on"
