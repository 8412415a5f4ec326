"""Balanced and gauntlet schedules: who sits at each table when a round robin is too big.

A round robin seats every combination of the bots: 3.9 million tables for 100
bots at 4 seats. A *balanced* schedule seats every bot at ``N`` tables
(``seats_per_bot``) and spreads the meetings: every pair of bots meets as
evenly as the numbers allow. A *gauntlet* seats only tables with a challenger
(one per table, ``N`` tables each), the other seats drawn from the field (the
bots that are not challengers), spread the same way. Every table then plays
its deals in every seat rotation as in a round robin (the duplicate format of
:mod:`referee.league.schedule`); this module only says who sits where.

Pure code, no I/O, deterministic: a plan is a function of
``(bots, size, seats_per_bot, seed[, challengers])``; every random choice
comes from the referee's SplitMix64 (:mod:`referee.rules.rng`). Table ``t``
always has the same lineup for the same inputs (stable ids), and tables are
made on demand.

What the numbers allow
======================

``tables = ceil(bots * N / size)`` (gauntlet: ``challengers * N``). Every bot
gets ``N`` seats, a few get ``N + 1`` (the seats of the last table that are
over): seats per bot differ by at most one table. A gauntlet's challengers get
exactly ``N``; the field bots share the other seats, within one of each
other. The mean number of meetings per pair is
``tables * size * (size - 1) / (bots * (bots - 1))``; the best possible
spread has every pair at its floor or ceiling (for 10,000 bots at N = 12,
4 seats: 0 or 1, most pairs never meet; for 12 bots: 3 or 4).
:func:`coverage` measures what a plan achieves: seats, pair meetings
(min/max/mean, how many pairs never meet, the histogram) and lineup positions.

Two constructions
=================

``cyclic`` (big fields; every plan that can be made with no pair meeting twice
too soon). The bots, in a seeded random order, are numbered ``0..n-1``; round
``r`` orders them by ``(a_r * x + b_r) mod n`` with a unit multiplier ``a_r``
and an offset ``b_r``; the rounds follow each other in one stream, and table
``t`` is the stream's ``t``-th block of ``size`` bots (a table may span the end
of one round and the start of the next; its offsets are chosen so that no bot
sits there twice). Each round seats every bot once, so seats differ by at most
one. Two bots ``d`` apart share a table in round ``r`` only if
``a_r * d = delta (mod n)`` for a small ``delta`` (``|delta| < size``), so two
rounds ``r, s`` can seat a pair twice only if ``a_s * delta1 = a_r * delta2``:
the multipliers are drawn (seeded) so that this never happens, and the offsets
so that the tables spanning two rounds seat no pair that met before. While
such choices exist (``N`` up to about ``n / (4 (size-1)^2)`` rounds), *no pair
meets twice*, which is optimal whenever the mean is below one meeting. Table
``t`` costs ``O(size)`` to make; the plan holds a few numbers per round and one
seeded permutation of the bots (an ``array``: 40 kB for 10,000 bots). When no
repeat-free choice is left (big fields with a very large ``N``), the least
conflicting multiplier is taken and the repeats show in the coverage.
A gauntlet's table ``t`` is challenger ``t mod c`` (in a seeded order) with
block ``t`` of such a stream over the field (blocks of ``size - 1``).

Which is used: the cyclic construction when it is repeat-free, or when the
field has more than :data:`GREEDY_LIMIT` bots; the greedy one otherwise
(``TablePlan.method`` says which).

``greedy`` (small fields, up to :data:`GREEDY_LIMIT` bots, when the cyclic
construction would repeat a pair). Round by round (a round's tables are
disjoint): the bots with the fewest seats so far must play, and of those at the
cut-off count the draft takes the ones that met the table least; tables fill
in a snake draft, each pick the candidate with the fewest earlier meetings with
the table's members (the marginal cost of the sum of squared meeting counts).
Then a polish: swaps of two bots between two tables (every pair of tables when
there are few, else within a round, or within windows of consecutive tables when
every round is one table) while the sum of squared meeting counts
drops, flat swaps taken half the time (seeded) to leave plateaus, within
:data:`POLISH_BUDGET` swaps tried, and stopping early once no spread could be
better. Seat counts never change in the polish. The whole plan is made on first
use; the meeting counts take an ``n x n`` table (4 MB at 1,024 bots). In a
gauntlet a challenger-field meeting weighs :data:`HOST_WEIGHT` field-field ones.

Lineup positions. Every table plays each deal in every seat rotation, so every
bot holds every seat's hand, and a position in itself gives nothing: all that
the lineup order decides is the cyclic order (who sits left of whom) of the
deals played when a table plays fewer than ``(size-1)!`` deals
(:func:`referee.league.schedule.seating_order`), a property of pairs that the
pair spread already limits. Positions are balanced anyway, so that no bot is
always first: the greedy construction exactly (each bot holds each position
``seats / size`` times, give or take one: an equitable edge colouring of bots x
tables, de Werra); the cyclic one by a rule (bot ``x`` takes position
``(x + round) mod size`` when free): exact when ``size`` divides the number of
bots, about uniform otherwise. A gauntlet's challenger takes the positions
``0, 1, .., size-1`` in turn. Lineups are *not* sorted: the order is the plan's.

Growing a field: a top-up for bots added later is a gauntlet with the new
bots as challengers against the field; its tables are numbered after the
existing ones, so earlier ids never change (:func:`referee.league.schedule.parts`).

Errors: bad values raise ``ValueError`` with a sentence saying what to change
(table size above the number of bots, ``seats_per_bot`` below 1, a challenger
that is not a bot, a field too small for the table size...).
"""

from __future__ import annotations

import math
import time
import tracemalloc
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.rules.rng import Rng, derive

#: the largest field the greedy construction is used for (it keeps an n x n table of meeting counts)
GREEDY_LIMIT = 1024
#: a gauntlet's greedy construction counts a challenger's meetings this many times a field pair's
HOST_WEIGHT = 4
#: the seed's range (as the league's master seed)
SEED_LIMIT = 2**64


class _Infeasible(Exception):
    """The cyclic construction cannot avoid seating a bot twice at one table (tiny fields)."""


# --------------------------------------------------------------------------
# checks


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check(nbots: int, size: int, seats_per_bot: int, seed: int) -> None:
    if not _whole(nbots) or nbots < 2:
        raise ValueError(f"a balanced schedule needs at least 2 bots, got {nbots!r}")
    if not _whole(size) or size < 2:
        raise ValueError(f"the table size must be a whole number of at least 2 seats, got {size!r}")
    if size > nbots:
        raise ValueError(
            f"a {size}-seat table needs {size} different bots, but there are only {nbots}; "
            f"use tables of at most {nbots} seats or add bots"
        )
    if not _whole(seats_per_bot) or seats_per_bot < 1:
        raise ValueError(
            f"seats_per_bot = {seats_per_bot!r} seats nobody: it must be a whole number of at least 1 "
            "(how many tables each bot plays)"
        )
    if not _whole(seed) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"the seed must be a whole number from 0 to 2**64 - 1, got {seed!r}")


def _check_challengers(nbots: int, size: int, challengers: Sequence[int]) -> tuple[int, ...]:
    if isinstance(challengers, (str, bytes)) or not isinstance(challengers, Sequence):
        raise TypeError(f"challengers must be a list of bot numbers, got {challengers!r}")
    if not challengers:
        raise ValueError("a gauntlet needs at least one challenger")
    seen: set[int] = set()
    for c in challengers:
        if not _whole(c) or not 0 <= c < nbots:
            raise ValueError(f"challenger {c!r} is not among the {nbots} bots (numbers 0..{nbots - 1})")
        if c in seen:
            raise ValueError(f"challenger {c} is listed twice")
        seen.add(c)
    field = nbots - len(seen)
    if field < size - 1:
        raise ValueError(
            f"a gauntlet seats one challenger and {size - 1} field bot(s) at each {size}-seat table, but only "
            f"{field} bot(s) are not challengers; add field bots, use smaller tables or fewer challengers"
        )
    return tuple(challengers)


def challenger_indices(names: Sequence[str], challengers: Sequence[str]) -> tuple[int, ...]:
    """The bot numbers of the challengers named, in the order given.

    Raises ``ValueError`` for a name that is not a bot's (with the closest
    bot name, if one is close) or a name given twice."""
    import difflib

    index = {name: i for i, name in enumerate(names)}
    out: list[int] = []
    for name in challengers:
        if name not in index:
            close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ValueError(f"challenger '{name}' is not among the bots{hint}")
        if index[name] in out:
            raise ValueError(f"challenger '{name}' is listed twice")
        out.append(index[name])
    return tuple(out)


# --------------------------------------------------------------------------
# the plans


class TablePlan:
    """The tables of one balanced or gauntlet schedule (one variant and table size).

    ``tables`` is the number of tables; :meth:`lineup` gives table ``t``'s
    bots (bot numbers, in lineup order); :meth:`tables_of` the tables that
    seat a bot. ``method`` says which construction made it (``"cyclic"`` or
    ``"greedy"``); ``repeat_free`` whether the construction guarantees that no
    pair meets twice (cyclic only; :func:`coverage` measures every plan).
    """

    kind: str  # "balanced" | "gauntlet"
    method: str  # "cyclic" | "greedy"
    bots: int
    size: int
    seats_per_bot: int
    seed: int
    challengers: tuple[int, ...]
    tables: int
    repeat_free: bool

    def __len__(self) -> int:
        return self.tables

    def _index(self, t: int) -> int:
        if not _whole(t) or not 0 <= t < self.tables:
            raise IndexError(f"table {t!r} is not in this plan (tables 0..{self.tables - 1})")
        return t

    def lineup(self, t: int) -> tuple[int, ...]:
        """Table ``t``'s bots in lineup order; ``IndexError`` outside ``0..tables-1``."""
        raise NotImplementedError

    def lineups(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, ...]]:
        """The lineups of tables ``start..stop-1`` (default: all), in order, lazily."""
        stop = self.tables if stop is None else min(stop, self.tables)
        for t in range(max(0, start), stop):
            yield self.lineup(t)

    def tables_of(self, bot: int) -> list[int]:
        """The tables seating ``bot``, ascending; ``IndexError`` for a bot not in the plan."""
        raise NotImplementedError

    def _check_bot(self, bot: int) -> None:
        if not _whole(bot) or not 0 <= bot < self.bots:
            raise IndexError(f"bot {bot!r} is not in this plan (bots 0..{self.bots - 1})")


def balanced(nbots: int, size: int, seats_per_bot: int, seed: int) -> TablePlan:
    """A balanced plan: every bot at ``seats_per_bot`` tables (a few at one
    more), pair meetings spread as evenly as the construction can (see the
    module docstring for which construction is used when). Raises
    ``ValueError`` for bad values."""
    _check(nbots, size, seats_per_bot, seed)
    tables = -(-nbots * seats_per_bot // size)
    try:
        plan: TablePlan = _CyclicBalanced(nbots, size, seats_per_bot, seed, tables)
        if plan.repeat_free or nbots > GREEDY_LIMIT:
            return plan
    except _Infeasible:
        pass
    return _Greedy("balanced", nbots, size, seats_per_bot, seed, tables, ())


def gauntlet(nbots: int, size: int, seats_per_bot: int, seed: int, challengers: Sequence[int]) -> TablePlan:
    """A gauntlet plan: ``seats_per_bot`` tables per challenger, each with that
    one challenger and ``size - 1`` field bots (the bots that are not
    challengers), field seats and challenger-field meetings spread evenly.
    Raises ``ValueError`` for bad values (no challenger, a challenger that is
    not a bot or is listed twice, fewer than ``size - 1`` field bots)."""
    _check(nbots, size, seats_per_bot, seed)
    chal = _check_challengers(nbots, size, challengers)
    tables = len(chal) * seats_per_bot
    try:
        plan: TablePlan = _CyclicGauntlet(nbots, size, seats_per_bot, seed, tables, chal)
        if plan.repeat_free or nbots > GREEDY_LIMIT:
            return plan
    except _Infeasible:
        pass
    return _Greedy("gauntlet", nbots, size, seats_per_bot, seed, tables, chal)


# --------------------------------------------------------------------------
# the cyclic construction


class _Stream:
    """Items ``0..n-1`` in rounds; round ``r`` puts item ``x`` at stream position
    ``r * n + (a[r] * x + b[r]) mod n``; block ``j`` is stream positions
    ``j*g .. j*g+g-1``. ``bot[x]`` is the bot number of item ``x`` (a seeded
    permutation). See the module docstring."""

    def __init__(self, items: Sequence[int], g: int, positions: int, rng: Rng) -> None:
        n = len(items)
        self.n = n
        self.g = g
        self.rounds = max(1, -(-positions // n))
        order = list(items)
        rng.shuffle(order)
        self.bot = array("q", order)
        self.item = {b: x for x, b in enumerate(order)} if n <= 4096 else None
        self._inv: array[int] | None = None
        self.a = array("q")
        self.ainv = array("q")
        self.b = array("q")
        self.conflicts = 0  # multiplier conflicts: pairs that may meet twice in-round
        self.straddle_repeats = 0  # pairs that meet twice because of a table spanning two rounds
        self._bad: Counter[int] = Counter()
        self._straddle_pairs: list[tuple[int, int]] = []  # pairs seated at tables spanning two rounds
        self._straddle_set: set[tuple[int, int]] = set()  # the same, each as (smaller, larger)
        deltas = [d for d in range(1, g)] + [-d for d in range(1, g)]
        for r in range(self.rounds):
            a, c = self._choose_a(rng)
            self.conflicts += c
            self.a.append(a)
            self.ainv.append(pow(a, -1, n) if n > 1 else 0)
            b, repeats = self._choose_b(r, rng)
            self.b.append(b)
            self.straddle_repeats += repeats
            self._forbid(a, deltas)

    # ---- inverse of the bot permutation (an array only for big fields: 8 bytes a bot)

    def item_of(self, bot: int) -> int:
        if self.item is not None:
            return self.item[bot]
        if self._inv is None:
            inv = array("q", [-1]) * (max(self.bot) + 1)
            for x, b in enumerate(self.bot):
                inv[b] = x
            self._inv = inv
        return self._inv[bot]

    # ---- positions

    def pos(self, x: int, r: int) -> int:
        return r * self.n + (self.a[r] * x + self.b[r]) % self.n

    def at(self, q: int) -> int:
        r, p = divmod(q, self.n)
        return (self.ainv[r] * (p - self.b[r])) % self.n

    def block(self, j: int) -> list[int]:
        return [self.at(q) for q in range(j * self.g, j * self.g + self.g)]

    def blocks_of(self, bot: int, blocks: int) -> list[int]:
        """The blocks below ``blocks`` that hold ``bot``, one per round, in round order."""
        x = self.item_of(bot)
        return [t for t in (self.pos(x, r) // self.g for r in range(self.rounds)) if t < blocks]

    def met_before(self, x: int, y: int, rounds: int) -> bool:
        """Whether items x and y shared a block in rounds ``0..rounds-1``: inside
        a round, or at a table spanning two rounds (recorded when it was made)."""
        if (min(x, y), max(x, y)) in self._straddle_set:
            return True
        g = self.g
        return any(self.pos(x, s) // g == self.pos(y, s) // g for s in range(rounds))

    # ---- choices

    def _forbid(self, a: int, deltas: list[int]) -> None:
        """Count every multiplier that would seat a pair seated by ``a`` again:
        ``m * d1 = a * d2 (mod n)`` for small ``d1, d2``."""
        n = self.n
        for d1 in deltas:
            d1m = d1 % n
            d = math.gcd(d1m, n)
            nn = n // d
            inv = pow((d1m // d) % nn, -1, nn) if nn > 1 else 0
            for d2 in deltas:
                rhs = (a * d2) % n
                if rhs % d:
                    continue
                base = (rhs // d) * inv % nn if nn > 1 else 0
                for i in range(d):
                    self._bad[base + i * nn] += 1

    def _choose_a(self, rng: Rng) -> tuple[int, int]:
        n = self.n
        if n == 1:
            return 0, 0
        bad = self._bad
        for _ in range(64):
            a = rng.below(n)
            if bad.get(a, 0) == 0 and math.gcd(a, n) == 1:
                return a, 0
        start = rng.below(n)
        best = (0, -1)
        for i in range(n):
            a = (start + i) % n
            if math.gcd(a, n) != 1:
                continue
            c = bad.get(a, 0)
            if c == 0:
                return a, 0
            if best[1] < 0 or c < best[1]:
                best = (a, c)
        return best

    def _violations(self, r: int, b: int) -> tuple[int, list[tuple[int, int]]]:
        """For offset ``b`` of round ``r``: how many pairs would meet again
        (-1: a bot twice at one table), and the new pairs of the table that
        spans rounds ``r-1`` and ``r``."""
        n, g = self.n, self.g
        a, ainv = self.a[r], self.ainv[r]
        start = r * n
        new_pairs: list[tuple[int, int]] = []
        repeats = 0
        if r > 0 and start % g:
            j = start // g
            tail = [self.at(q) for q in range(j * g, start)]
            head = [(ainv * (p - b)) % n for p in range(j * g + g - start)]
            if set(tail) & set(head):
                return -1, []
            new_pairs = [(x, y) for x in tail for y in head]
            repeats += sum(1 for x, y in new_pairs if self.met_before(x, y, r - 1))
        # pairs seated at earlier round-spanning tables must not meet inside this round
        for x, y in self._straddle_pairs:
            px, py = start + (a * x + b) % n, start + (a * y + b) % n
            if px // g == py // g:
                repeats += 1
        return repeats, new_pairs

    def _choose_b(self, r: int, rng: Rng) -> tuple[int, int]:
        n = self.n
        best: tuple[int, int, list[tuple[int, int]]] | None = None

        def perfect(b: int) -> bool:
            """Try offset ``b``: keep it if it has the fewest repeats so far; True if it has none."""
            nonlocal best
            v, pairs = self._violations(r, b)
            if v == 0:
                best = (b, 0, pairs)
                return True
            if v > 0 and (best is None or v < best[1]):
                best = (b, v, pairs)
            return False

        for _ in range(64):
            if perfect(rng.below(n)):
                break
        if best is None or best[1] > 0:
            # a scan from a seeded start: the first offset with no repeat, else after 256 offsets
            # the one with the fewest (a plan stays quick when repeats cannot be avoided)
            start = rng.below(n)
            for i in range(n):
                if perfect((start + i) % n) or (i >= 256 and best is not None):
                    break
        if best is None:
            raise _Infeasible()
        self._straddle_pairs.extend(best[2])
        self._straddle_set.update((min(x, y), max(x, y)) for x, y in best[2])
        return best[0], best[1]


class _CyclicBalanced(TablePlan):
    def __init__(self, nbots: int, size: int, seats_per_bot: int, seed: int, tables: int) -> None:
        self.kind, self.method = "balanced", "cyclic"
        self.bots, self.size, self.seats_per_bot, self.seed = nbots, size, seats_per_bot, seed
        self.challengers = ()
        self.tables = tables
        self._s = _Stream(range(nbots), size, tables * size, Rng(derive(seed, f"balanced:{size}p:cyclic")))
        self.repeat_free = self._s.conflicts == 0 and self._s.straddle_repeats == 0

    def lineup(self, t: int) -> tuple[int, ...]:
        """Bot ``x`` (its number in the seeded order) wants lineup position
        ``(x + r) mod size`` in round ``r``: it takes it when free (the table's
        other wishes are distinct whenever ``size`` divides the number of bots),
        else the first free one."""
        s = self._s
        k, n, bot = self.size, s.n, s.bot
        first = self._index(t) * k
        lineup = [-1] * k
        moved = []
        for q in range(first, first + k):
            x = s.at(q)
            want = (x + q // n) % k
            if lineup[want] < 0:
                lineup[want] = bot[x]
            else:
                moved.append(bot[x])
        for p in range(k):
            if lineup[p] < 0:
                lineup[p] = moved.pop(0)
        return tuple(lineup)

    def tables_of(self, bot: int) -> list[int]:
        self._check_bot(bot)
        return self._s.blocks_of(bot, self.tables)


class _CyclicGauntlet(TablePlan):
    """Table ``t``: challenger ``order[t mod c]`` and field block ``t`` of a
    cyclic stream over the field (blocks of ``size - 1``); the challenger's
    ``i``-th table puts it at lineup position ``i mod size``."""

    def __init__(
        self, nbots: int, size: int, seats_per_bot: int, seed: int, tables: int, challengers: tuple[int, ...]
    ) -> None:
        self.kind, self.method = "gauntlet", "cyclic"
        self.bots, self.size, self.seats_per_bot, self.seed = nbots, size, seats_per_bot, seed
        self.challengers = challengers
        self.tables = tables
        rng = Rng(derive(seed, f"gauntlet:{size}p:cyclic"))
        order = list(challengers)
        rng.shuffle(order)
        self._order = order
        self._rank = {c: i for i, c in enumerate(order)}
        chal = set(challengers)
        fieldbots = [b for b in range(nbots) if b not in chal]
        self._s = _Stream(fieldbots, size - 1, tables * (size - 1), rng)
        # challenger-field pairs repeat only if a challenger's tables reach into a second pass over the field
        one_pass = seats_per_bot * (size - 1) <= len(fieldbots) and self._s.rounds == 1
        self.repeat_free = self._s.conflicts == 0 and self._s.straddle_repeats == 0 and one_pass

    def lineup(self, t: int) -> tuple[int, ...]:
        s = self._s
        c = len(self._order)
        others = [s.bot[x] for x in s.block(self._index(t))]
        others.insert((t // c) % self.size, self._order[t % c])
        return tuple(others)

    def tables_of(self, bot: int) -> list[int]:
        self._check_bot(bot)
        c = len(self._order)
        if bot in self._rank:
            i = self._rank[bot]
            return [i + k * c for k in range(self.seats_per_bot)]
        return self._s.blocks_of(bot, self.tables)


# --------------------------------------------------------------------------
# the greedy construction


class _Greedy(TablePlan):
    """The whole plan is made on first use (fields of at most GREEDY_LIMIT bots):
    rounds of a snake draft, then improving swaps, then lineup positions."""

    def __init__(
        self, kind: str, nbots: int, size: int, seats_per_bot: int, seed: int, tables: int, challengers: tuple[int, ...]
    ) -> None:
        self.kind, self.method = kind, "greedy"
        self.bots, self.size, self.seats_per_bot, self.seed = nbots, size, seats_per_bot, seed
        self.challengers = challengers
        self.tables = tables
        self.repeat_free = False
        self._out: list[tuple[int, ...]] | None = None
        self._by_bot: list[list[int]] | None = None

    def lineup(self, t: int) -> tuple[int, ...]:
        t = self._index(t)
        if self._out is None:
            self._out = _GreedyBuilder(self).build()
        return self._out[t]

    def tables_of(self, bot: int) -> list[int]:
        self._check_bot(bot)
        if self._by_bot is None:
            by_bot: list[list[int]] = [[] for _ in range(self.bots)]
            for t, lineup in enumerate(self.lineups()):
                for b in lineup:
                    by_bot[b].append(t)
            self._by_bot = by_bot
        return list(self._by_bot[bot])


#: improving-swap evaluations allowed per plan (about a second of work), so a big greedy plan stays quick
POLISH_BUDGET = 300_000


class _GreedyBuilder:
    """Makes a greedy plan: see the module docstring.

    ``meet[x][y]`` counts the meetings of x and y so far. The draft picks, for
    each table in turn (snake order), the candidate with the smallest weighted
    sum of meetings with the table's members; the polish then swaps bots
    between two tables of one round while that lowers the sum over all pairs
    of ``weight * meetings**2`` (weight HOST_WEIGHT for a challenger-field pair,
    else 1), within :data:`POLISH_BUDGET`; last, each table's order gives each
    bot its least used lineup position."""

    def __init__(self, plan: _Greedy) -> None:
        n = plan.bots
        self.plan = plan
        self.n, self.k = n, plan.size
        self.rng = Rng(derive(plan.seed, f"{plan.kind}:{plan.size}p:greedy"))
        self.meet = [array("i", bytes(4 * n)) for _ in range(n)]
        self.seats = [0] * n
        self.hosts = set(plan.challengers)
        self.field = [b for b in range(n) if b not in self.hosts]

    def build(self) -> list[tuple[int, ...]]:
        rounds: list[list[list[int]]] = []
        done = 0
        while done < self.plan.tables:
            groups = self._round(self.plan.tables - done)
            for g in groups:
                self._count(g, 1)
            rounds.append(groups)
            done += len(groups)
        self._polish(rounds)
        return self._positions([g for groups in rounds for g in groups])

    def _by_seats(self, bots: list[int]) -> list[int]:
        order = list(bots)
        self.rng.shuffle(order)
        order.sort(key=self.seats.__getitem__)
        return order

    def _round(self, left: int) -> list[list[int]]:
        """One round's tables (disjoint). The bots with the fewest seats so far
        must play; of those at the cut-off seat count, the draft takes the ones
        that have met the table least. Gauntlet: the least seated challengers
        host one table each; the field fills the other seats the same way."""
        k = self.k
        plan = self.plan
        if plan.kind == "balanced":
            m = min(self.n // k, left)
            groups: list[list[int]] = [[] for _ in range(m)]
            must, may, extra = self._split(list(range(self.n)), m * k)
        else:
            want = [c for c in plan.challengers if self.seats[c] < plan.seats_per_bot]
            m = min(len(want), len(self.field) // (k - 1), left)
            groups = [[h] for h in self._by_seats(want)[:m]]
            must, may, extra = self._split(self.field, m * (k - 1))
        step = 0
        while must or extra:
            seq = range(len(groups)) if step % 2 == 0 else range(len(groups) - 1, -1, -1)
            for gi in seq:
                pool = must if must else may if extra else None
                if pool is None:
                    break
                group = groups[gi]
                best_i, best_c = 0, -1
                for i, c in enumerate(pool):
                    cost = self._cost(group, c)
                    if best_c < 0 or cost < best_c:
                        best_i, best_c = i, cost
                        if cost == 0:
                            break
                if pool is may:
                    extra -= 1
                group.append(pool.pop(best_i))
            step += 1
        for g in groups:
            for b in g:
                self.seats[b] += 1
        return groups

    def _split(self, bots: list[int], count: int) -> tuple[list[int], list[int], int]:
        """Of ``bots``, the ones that must play (fewer seats than the cut-off),
        the ones that may (at the cut-off), and how many of those play, for
        ``count`` seats (each list in a seeded random order)."""
        order = self._by_seats(bots)
        cut = self.seats[order[count - 1]]
        must = [b for b in order if self.seats[b] < cut]
        may = [b for b in order if self.seats[b] == cut]
        return must, may, count - len(must)

    def _weight(self, x: int) -> int:
        return HOST_WEIGHT if x in self.hosts else 1

    def _cost(self, group: list[int], c: int) -> int:
        meet = self.meet[c]
        return sum(meet[x] * self._weight(x) for x in group)

    def _count(self, group: list[int], step: int) -> None:
        meet = self.meet
        for x in group:
            row = meet[x]
            for y in group:
                if y != x:
                    row[y] += step

    def _polish(self, rounds: list[list[list[int]]]) -> None:
        """Swaps of two (non-challenger) bots between two tables: every swap
        that lowers the cost is made, and one that keeps it equal half the time
        (seeded), which lets the search leave flat ground. Seat counts do not
        change. The tables tried together are every pair of tables when there
        are few, else those of one round, or (when every round is one table)
        windows of consecutive tables, overlapping across their seams. Sweeps until three sweeps in a row
        improve nothing, no spread could be better, or the budget is spent."""
        fixed = 1 if self.plan.kind == "gauntlet" else 0
        k = self.k
        tables = [g for groups in rounds for g in groups]
        if len(tables) ** 2 * (k - fixed) ** 2 <= POLISH_BUDGET // 2:
            blocks = [tables]
        elif any(len(groups) > 1 for groups in rounds):
            blocks = rounds
        else:  # one table a round (a field that seats one table at a time): windows of consecutive
            # tables instead, as long as one sweep over both sets of windows fits the budget allows
            # (within a round there is no second table to swap with)
            w = max(2, POLISH_BUDGET // (len(tables) * (k - fixed) ** 2))
            blocks = [tables[i : i + w] for i in range(0, len(tables), w)]
            blocks += [tables[i : i + w] for i in range(w // 2, len(tables), w)]  # across the seams
        meet = self.meet
        wt = [self._weight(x) for x in range(self.n)]
        rng = self.rng
        budget = POLISH_BUDGET
        idle = 0
        excess = self._objective() - self._best_objective()  # 0: no spread can be better; stop
        while idle < 3 and budget > 0 and excess > 0:
            improved = False
            for groups in blocks:
                m = len(groups)
                for ai in range(m):
                    A = groups[ai]
                    for bi in range(ai + 1, m):
                        B = groups[bi]
                        for iu in range(fixed, k):
                            for iv in range(fixed, k):
                                u, v = A[iu], B[iv]
                                if u in B or v in A:
                                    continue
                                mu, mv = meet[u], meet[v]
                                delta = 0  # half the change of the cost; a bot at both tables changes nothing
                                for w in A:
                                    if w != u and w not in B:
                                        delta += wt[w] * (mv[w] - mu[w] + 1)
                                for w in B:
                                    if w != v and w not in A:
                                        delta += wt[w] * (mu[w] - mv[w] + 1)
                                budget -= 1
                                if delta < 0 or (delta == 0 and rng.below(2)):
                                    for w in A:
                                        if w != u:
                                            mu[w] -= 1
                                            meet[w][u] -= 1
                                            mv[w] += 1
                                            meet[w][v] += 1
                                    for w in B:
                                        if w != v:
                                            mv[w] -= 1
                                            meet[w][v] -= 1
                                            mu[w] += 1
                                            meet[w][u] += 1
                                    A[iu], B[iv] = v, u
                                    improved = improved or delta < 0
                                    excess += 2 * delta
                        if budget <= 0 or excess <= 0:
                            return
            idle = 0 if improved else idle + 1

    def _objective(self) -> int:
        """The polish's cost: over all pairs, ``weight * meetings**2``."""
        total = 0
        for x in range(self.n):
            row = self.meet[x]
            wx = self._weight(x)
            for y in range(x + 1, self.n):
                c = row[y]
                if c:
                    total += (wx * self._weight(y) if wx != self._weight(y) else 1) * c * c
        return total

    def _best_objective(self) -> int:
        """A lower bound of :meth:`_objective`: the meetings of each kind of pair
        (challenger-field, field-field; balanced: all) at their floor or ceiling."""
        k, n = self.k, self.n
        tables = self.plan.tables

        def even(meetings: int, pairs: int) -> int:
            f, r = divmod(meetings, pairs) if pairs else (0, 0)
            return pairs * f * f + r * (2 * f + 1)

        if self.plan.kind == "balanced":
            return even(tables * k * (k - 1) // 2, n * (n - 1) // 2)
        c, f = len(self.hosts), len(self.field)
        return HOST_WEIGHT * even(tables * (k - 1), c * f) + even(tables * (k - 1) * (k - 2) // 2, f * (f - 1) // 2)

    def _positions(self, tables: list[list[int]]) -> list[tuple[int, ...]]:
        """Lineup orders in which every bot holds every position equally often,
        give or take one: an equitable edge colouring (de Werra) of the
        bipartite graph bots x tables with the positions as colours. Each bot's
        tables, in table order, are split into groups of ``size``; each group is
        a vertex of degree at most ``size``, each table one of degree ``size``,
        and a bipartite graph of maximum degree ``size`` has a proper colouring
        with ``size`` colours (Konig), found edge by edge with alternating-path
        (Kempe chain) swaps. A table's colours are then its lineup positions,
        and a bot's positions differ in number by at most one."""
        k = self.k
        at_table: list[list[int]] = [[-1] * k for _ in tables]  # table -> position -> group vertex
        at_group: dict[int, list[int]] = {}  # group vertex -> position -> table
        used = [0] * self.n

        def free(slots: list[int], start: int) -> int:
            for i in range(k):
                c = (start + i) % k
                if slots[c] < 0:
                    return c
            raise AssertionError("no free position")  # pragma: no cover - degrees are at most k

        for t, group in enumerate(tables):
            for b in group:
                u = b * (self.plan.tables + 1) + used[b] // k  # bot b's current group vertex
                used[b] += 1
                slots_u = at_group.setdefault(u, [-1] * k)
                a = free(slots_u, t + b)
                if at_table[t][a] >= 0:
                    c = free(at_table[t], a)
                    # swap colours a and c along the path from table t that starts with its a-edge
                    x, side, want, other = t, "t", a, c
                    path: list[tuple[int, int, int]] = []  # (table, group vertex, colour)
                    while True:
                        if side == "t":
                            y = at_table[x][want]
                            if y < 0:
                                break
                            path.append((x, y, want))
                            x, side = y, "u"
                        else:
                            y = at_group[x][want]
                            if y < 0:
                                break
                            path.append((y, x, want))
                            x, side = y, "t"
                        want, other = other, want
                    for tt, uu, col in path:
                        at_table[tt][col] = -1
                        at_group[uu][col] = -1
                    for tt, uu, col in path:
                        new = c if col == a else a
                        at_table[tt][new] = uu
                        at_group[uu][new] = tt
                at_table[t][a] = u
                slots_u[a] = t
        out = []
        for t, group in enumerate(tables):
            lineup = [-1] * k
            for col in range(k):
                lineup[col] = at_table[t][col] // (self.plan.tables + 1)
            assert sorted(lineup) == sorted(group)
            out.append(tuple(lineup))
        return out


# --------------------------------------------------------------------------
# coverage


@dataclass(frozen=True)
class Coverage:
    """What a plan achieves, computed exactly (by streaming over the bots).

    ``seats_*``: tables per bot (a gauntlet: per challenger; ``field_seats_*``
    per field bot). ``pairs``: the pairs counted (balanced: every pair of
    bots; gauntlet: every challenger with every field bot), ``pair_min`` /
    ``pair_max`` / ``pair_mean`` their meetings, ``pairs_never`` how many never
    meet, ``pair_histogram`` meetings -> pairs, ``ideal_pair_min`` /
    ``ideal_pair_max`` the floor and ceiling of the mean (the best spread the
    numbers allow). ``position_*``: over the same bots as ``seats_*`` and every
    lineup position, the fewest and most times a bot held it.
    """

    kind: str
    method: str
    bots: int
    size: int
    seats_per_bot: int
    tables: int
    seats_min: int
    seats_max: int
    field_seats_min: int | None
    field_seats_max: int | None
    pairs: int
    pair_min: int
    pair_max: int
    pair_mean: float
    pairs_never: int
    ideal_pair_min: int
    ideal_pair_max: int
    position_min: int
    position_max: int
    pair_histogram: dict[int, int] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The figures in words, for ``referee plan``."""
        who = "challenger" if self.kind == "gauntlet" else "bot"
        out = [
            (
                f"{self.kind} ({self.method}): {self.tables:,} tables of {self.size}; "
                f"{self.seats_min}-{self.seats_max} tables per {who}"
            )
        ]
        if self.field_seats_min is not None:
            out.append(f"field bots: {self.field_seats_min}-{self.field_seats_max} tables each")
        scope = "challenger-field pairs" if self.kind == "gauntlet" else "pairs"
        out.append(
            f"{scope}: {self.pairs:,}; meetings {self.pair_min}-{self.pair_max} per pair "
            f"(mean {self.pair_mean:.3f}; as even as possible: {self.ideal_pair_min}-{self.ideal_pair_max}); "
            f"{self.pairs_never:,} never meet"
        )
        out.append(f"lineup positions: each {who} holds each position {self.position_min}-{self.position_max} times")
        return out


def coverage(plan: TablePlan) -> Coverage:
    """Measure ``plan`` exactly: one bot at a time, from the tables seating it
    (memory: the seat counts, one entry per bot, plus one bot's opponents)."""
    n, k = plan.bots, plan.size
    chal = set(plan.challengers)
    gauntlet_ = plan.kind == "gauntlet"
    hist: Counter[int] = Counter()
    seats: list[int] = []
    field_seats: list[int] = []
    pos_min, pos_max = None, 0
    total_meetings = 0
    for b in range(n):
        tabs = plan.tables_of(b)
        counted = (b in chal) if gauntlet_ else True
        if gauntlet_ and not counted:
            field_seats.append(len(tabs))
            continue
        seats.append(len(tabs))
        held = [0] * k
        met: Counter[int] = Counter()
        for t in tabs:
            lineup = plan.lineup(t)
            held[lineup.index(b)] += 1
            for o in lineup:
                if o == b:
                    continue
                if gauntlet_:
                    if o not in chal:
                        met[o] += 1
                elif o > b:
                    met[o] += 1
        lo, hi = min(held), max(held)
        pos_min = lo if pos_min is None else min(pos_min, lo)
        pos_max = max(pos_max, hi)
        for c in met.values():
            hist[c] += 1
            total_meetings += c
    if gauntlet_:
        pairs = len(chal) * (n - len(chal))
    else:
        pairs = n * (n - 1) // 2
    never = pairs - sum(hist.values())
    if never:
        hist[0] = never
    mean = total_meetings / pairs if pairs else 0.0
    return Coverage(
        kind=plan.kind,
        method=plan.method,
        bots=n,
        size=k,
        seats_per_bot=plan.seats_per_bot,
        tables=plan.tables,
        seats_min=min(seats),
        seats_max=max(seats),
        field_seats_min=min(field_seats) if field_seats else None,
        field_seats_max=max(field_seats) if field_seats else None,
        pairs=pairs,
        pair_min=min(hist),
        pair_max=max(hist),
        pair_mean=mean,
        pairs_never=never,
        ideal_pair_min=math.floor(mean),
        ideal_pair_max=math.ceil(mean),
        position_min=pos_min or 0,
        position_max=pos_max,
        pair_histogram=dict(sorted(hist.items())),
    )


# --------------------------------------------------------------------------
# benchmark


def benchmark(
    nbots: int = 10_000,
    size: int = 4,
    seats_per_bot: int = 12,
    seed: int = 0,
    *,
    challengers: Sequence[int] = (),
    with_coverage: bool = True,
) -> dict[str, Any]:
    """Time and peak memory (``tracemalloc``, Python allocations) of planning:
    making the plan, making every lineup once, and (optionally) the coverage
    figures. Returns JSON-able figures. Not a test: the figures depend on the
    machine and its load."""
    out: dict[str, Any] = {"bots": nbots, "size": size, "seats_per_bot": seats_per_bot, "challengers": len(challengers)}
    tracemalloc.start()
    try:
        t0 = time.perf_counter()
        plan = (
            gauntlet(nbots, size, seats_per_bot, seed, challengers)
            if challengers
            else balanced(nbots, size, seats_per_bot, seed)
        )
        t1 = time.perf_counter()
        _, peak_plan = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        count = sum(1 for _ in plan.lineups())
        t2 = time.perf_counter()
        _, peak_lineups = tracemalloc.get_traced_memory()
        out.update(
            method=plan.method,
            tables=plan.tables,
            repeat_free=plan.repeat_free,
            plan_s=round(t1 - t0, 4),
            plan_peak_kb=round(peak_plan / 1024, 1),
            all_lineups_s=round(t2 - t1, 4),
            lineups_per_s=round(count / max(t2 - t1, 1e-9)),
            lineups_peak_kb=round(peak_lineups / 1024, 1),
        )
        if with_coverage:
            tracemalloc.reset_peak()
            t3 = time.perf_counter()
            cov = coverage(plan)
            t4 = time.perf_counter()
            _, peak_cov = tracemalloc.get_traced_memory()
            out.update(coverage_s=round(t4 - t3, 4), coverage_peak_kb=round(peak_cov / 1024, 1), coverage=cov.lines())
    finally:
        tracemalloc.stop()
    return out
