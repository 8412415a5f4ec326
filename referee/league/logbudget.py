"""A bot's stderr budget for the game logs of a night: per bot, per night, on every executor.

Each game log copies the tail of every bot's stderr (at most 64 KiB of it,
:func:`referee.runtime.game.log_tail`). A bot may have :data:`STDERR_LOG_BUDGET`
bytes of its stderr copied into the logs of a whole night; past that, each game
keeps 1 KiB of it after a line saying how much was left out.

The night's driver (:func:`referee.league.runner._drive`) owns the budget: before a
unit of work is played it is *granted* a share of each of its bots' budget left
(:meth:`LogBudgets.grant`: the unreserved rest divided by the units that may run
at once), every delivered game is *charged* what it copied
(:attr:`referee.league.work.GameDone.stderr_logged`) and the unit's unused grant is
*released* when it ends. So units playing at once (``--workers``, ``--cluster``)
never hold more than the budget between them, and what the night's logs have used
is kept in the ledger's meta ``stderr_logged`` (``{bot name: bytes}``, in the
transaction of each game's row): a resumed night (after ``kill -9``) starts from it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence

from referee.league.work import GameDone, Unit

#: the stderr bytes one bot may have copied into the game logs of a night (its tails; each
#: game's is at most 64 KiB), then 1 KiB per game (referee.runtime.game.log_tail)
STDERR_LOG_BUDGET = 4 * 1024 * 1024
#: the ledger meta key of the bytes each bot's stderr has used of its budget so far
META_KEY = "stderr_logged"


class LogBudgets:
    """The night's per-bot stderr budgets (see the module docstring). ``names``: the
    night's bots by ``Entrant.index``; ``used``: the bytes each (by name) has used
    already (the ledger's :data:`META_KEY`); ``slots``: how many units may run at once."""

    def __init__(self, names: list[str], budget: int, used: Mapping[str, int], slots: int) -> None:
        self.names = names
        self.budget = budget
        self.slots = max(1, slots)
        self.used: dict[str, int] = {n: int(used.get(n, 0)) for n in names}
        self.reserved: dict[str, int] = dict.fromkeys(names, 0)

    @staticmethod
    def read_used(text: str | None) -> dict[str, int]:
        """The meta's ``{bot name: bytes}`` ({} for none, or for a damaged value)."""
        try:
            value = json.loads(text) if text else {}
        except ValueError:
            return {}
        if not isinstance(value, dict):
            return {}
        return {str(k): int(v) for k, v in value.items() if isinstance(v, int) and v >= 0}

    def meta_text(self) -> str:
        return json.dumps(self.used, sort_keys=True, separators=(",", ":"))

    def left(self, name: str) -> int:
        """The bytes of ``name``'s budget neither used nor granted to a unit in play."""
        return max(0, self.budget - self.used[name] - self.reserved[name])

    def grant(self, unit: Unit) -> Unit:
        """``unit`` with its share of each lineup bot's budget (``Unit.log_budgets``), reserved."""
        return dataclasses.replace(unit, log_budgets=self.shares([e.index for e in unit.lineup]))

    def shares(self, bots: Sequence[int]) -> tuple[int, ...]:
        """Reserve a share of each bot's budget left (``bots``: ``Entrant.index`` per lineup position)."""
        grants = []
        for bot in bots:
            name = self.names[bot]
            share = self.left(name) // self.slots
            self.reserved[name] += share
            grants.append(share)
        return tuple(grants)

    def charge(self, seats: tuple[int, ...], done: GameDone) -> None:
        """Count what a delivered game copied of each seat's bot's stderr (``seats``: bot index per seat)."""
        for bot, size in zip(seats, done.stderr_logged, strict=False):
            self.used[self.names[bot]] += size

    def release(self, unit: Unit) -> None:
        """A unit ended: its grants are no longer reserved (what it used is charged already)."""
        self.unreserve([e.index for e in unit.lineup], unit.log_budgets or ())

    def unreserve(self, bots: Sequence[int], shares: Sequence[int]) -> None:
        for bot, share in zip(bots, shares, strict=False):
            name = self.names[bot]
            self.reserved[name] = max(0, self.reserved[name] - share)
