"""League shards: one league night split over N machines (``referee run --shard K/N``).

A shard is a share of the league's *tables*: whole tables, so that a table's
bot processes are still reused for all its games (``reuse = "session"``).
Tables are numbered globally in schedule order (every variant, every size,
every lineup: ``0, 1, 2, ...``); shard ``K/N`` holds the tables whose global
number ``t`` has ``t mod N == K - 1``. That is a pure function of the config,
so the N shards together hold every planned game exactly once, on any machine.

(Not to be confused with the runner's *shares* of a table: its games split
into several units, each with its own bot processes, when there are fewer
tables than slots.)

Pure code, no I/O. Errors: :func:`parse_shard` raises
:class:`referee.errors.UserError` for anything that is not ``K/N`` with
``1 <= K <= N``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from referee.errors import UserError

_SHARD_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``k`` of ``n`` (1-based: ``1 <= k <= n``)."""

    k: int
    n: int

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"

    def holds(self, table_number: int) -> bool:
        """Whether the table with this global number (0-based, schedule order) is in this shard."""
        return table_number % self.n == self.k - 1

    def count_in(self, start: int, count: int) -> int:
        """How many of the global table numbers ``start .. start+count-1`` this shard holds."""
        return _upto(start + count, self.k - 1, self.n) - _upto(start, self.k - 1, self.n)


def shard_of(table_number: int, n: int) -> int:
    """The shard number (1-based) of a global table number in a split into ``n`` shards."""
    return table_number % n + 1


def _upto(x: int, r: int, n: int) -> int:
    """How many integers ``g`` in ``0 .. x-1`` have ``g mod n == r``."""
    return max(0, (x - r + n - 1) // n)


def parse_shard(text: str) -> Shard:
    """Parse ``"K/N"``; raise :class:`UserError` saying what is expected."""
    m = _SHARD_RE.match(text or "")
    if not m:
        raise UserError(f"--shard {text!r}: expected K/N, e.g. --shard 2/3 for the second of three machines")
    k, n = int(m[1]), int(m[2])
    if n < 1 or not 1 <= k <= n:
        raise UserError(
            f"--shard {text}: K/N needs 1 <= K <= N (the shards of a split into N are 1/N .. {max(n, 1)}/N)"
        )
    return Shard(k, n)


def format_shards(shards: list[int] | set[int], n: int) -> str:
    """``"1, 3 of 3"``: a readable list of shard numbers."""
    return f"{', '.join(str(s) for s in sorted(shards)) or 'none'} of {n}"
