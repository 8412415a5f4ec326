"""The league schedule: a pure function of the config and the master seed.

Round robin, duplicate format:

* For every variant and table size, every combination of the bots sits at one
  table, in colexicographic order over the bots in the order they joined the
  night (``League.slots``: the config's order, unless the night grew): all the
  tables of the first ``n`` bots come before any table with bot ``n + 1``, so
  a bot added later never renumbers an earlier table (its tables are numbered
  after them; :mod:`referee.league.roster`). A withdrawn bot keeps its place in
  that order; its tables are left out. When there are fewer bots than seats and
  the config says ``fill = "repeat"``, the tables are the combinations with
  repetition that seat every bot at least once (for 2 bots at 4 seats:
  ``aaab``, ``aabb``, ``abbb``).
* Every table plays the same ``deals`` deals of its variant and size. Deal
  ``d`` has the seed ``derive(master_seed, f"{variant}:{size}p:deal:{d}")``.
  (A secret night that grew: the master seed of a table's epoch,
  :func:`epoch_master`, :func:`epoch_of`; see :mod:`referee.league.secret`.)
* Every deal is played once in every cyclic seat rotation: in rotation ``r``
  seat ``s`` is played by the lineup member ``order[(s + r) % size]``, so
  every member of the table holds every seat's hand of every deal once.
* Rotations keep the cyclic order of the bots, and with it who sits left of
  whom (which matters: after a miss the turn may pass to the left). So the
  cyclic order itself changes from deal to deal: deal ``d`` uses
  ``order = seating_order(lineup, d)``, the ``d mod (size-1)!``-th arrangement
  of the lineup with its first bot fixed. Over ``(size-1)!`` deals every
  cyclic order occurs exactly once (2 at 3 seats, 6 at 4 seats), so no bot
  keeps a favourable neighbour.

Games per table = deals x size (rotations); every game has a stable id such as
``kwartet-4p-t0003-d002-r1`` (variant, size, table, deal, rotation). Everything
is generated lazily, so a huge schedule is never held in memory. A game is
thus a function of its variant, table size, table members (by name, in
joining order), deal and rotation, and the master seed; never of the number
of bots. (Referees before :data:`IDS` numbered tables lexicographically, so
their ids differ: :mod:`referee.league.outdir` refuses to resume such a ledger.)

Ladder tables (``referee ladder``, :mod:`referee.league.ladder`) are tables
chosen one at a time: ``Table(ladder=True)``, key ``kwartet-4p-L000012`` (an
upper-case ``L``, which no planned id holds), each with deals of its own
(``derive(master_seed, f"{variant}:{size}p:ladder:{n}:deal:{d}")``), played in
every rotation like a planned table.

Balanced and gauntlet schedules (``[schedule] kind = "balanced"`` or
``"gauntlet"``, per variant: its ``schedule`` table). The lineups of a
variant and size come from a :class:`referee.league.balanced.TablePlan`
instead of the combinations: ``balanced`` seats every bot at
``seats_per_bot`` tables (a few at one more), ``gauntlet`` seats one
challenger at each table (``seats_per_bot`` tables per challenger) with
``size - 1`` bots of the field. The plan's seed is
``derive(master_seed, f"{variant}:{size}p:tables")``, so each variant and
size has its own draw, and table ``t`` always has the same lineup (in the
plan's order, not sorted) and the same id ``<variant>-<size>p-t<t>``.
Everything else is as in a round robin: the same deals at every table, each
in every seat rotation and seating order. The table count is arithmetic
(``ceil(bots * N / size)``, a gauntlet ``challengers * N``), so ``plan``,
``total_games`` and the shards need no plan; ``tables`` makes each lineup on
demand (a 10,000-bot plan holds a few arrays, see
:mod:`referee.league.balanced`). Plans are kept per process
(:func:`table_plan`, a small cache).

A night that grows (:mod:`referee.league.roster`) plans its balanced and
gauntlet blocks epoch by epoch (``League.epochs``, :func:`night_epochs`; one
epoch, the roster, for a night that never grew), as :class:`Part` s
(:func:`parts`, arithmetic). A block's first plan is the one above, made over
the bots of the first epoch that can seat its size (plan bot numbers map to
bot names, so the config's order of the bots does not matter). Every later
epoch that added bots appends a *top-up*: ``balanced.gauntlet`` with the
added bots as challengers (``seats_per_bot`` tables each) and the field: the
epoch's other bots (in a gauntlet night, without its challengers), seeded
``derive(master_seed, f"{variant}:{size}p:tables:epoch:{e}")``, its tables
numbered after the block's earlier ones (``t<count>``, ``t<count+1>``, ...).
So every earlier id and lineup stays, and only the new games are played. A
table seating a withdrawn bot is left out (as in a round robin).

Every kind is one class behind :class:`ScheduleKind` (:data:`KINDS`,
:func:`kind_of`): :class:`RoundRobin`, :class:`Balanced`, :class:`Gauntlet`
answer for one block (a variant and size) which tables it holds, epoch by
epoch; :class:`Ladder` (:data:`LADDER`) rebuilds a ladder table from its
records. Nothing here branches on the kind's name. What a night *in an
output directory* holds (its stored config, epochs, withdrawn bots, shards,
ladder tables) is :class:`referee.league.night.NightPlan`, built on these.

League shards (``referee run --shard K/N``, :mod:`referee.league.shards`):
tables are numbered globally in schedule order (``Table.number``); shard K/N
holds the tables with ``number mod N == K - 1``. ``tables``, ``games``,
``plan``, ``total_games`` and ``total_tables`` take an optional ``shard`` and
then cover only that shard; :func:`table_offsets` maps a ledger row's
(variant, size, table) to its global table number.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from referee.errors import UserError
from referee.league.balanced import Coverage, TablePlan, balanced, coverage, gauntlet
from referee.league.config import Epoch, League, Variant
from referee.league.shards import Shard

#: how game ids name tables (the ledger's meta ``ids``): tables in colexicographic order
IDS = "colex"


@dataclass(frozen=True, slots=True)
class Table:
    variant: Variant
    size: int
    index: int
    lineup: tuple[int, ...]  # bot indices (into League.bots): joining order (round robin), else the plan's
    number: int = 0  # global table number in schedule order (what shards split)
    ladder: bool = False  # a ladder table (referee ladder), numbered apart from the plan
    epoch: int = 0  # the planning epoch the table belongs to (:func:`epoch_of`; a secret night's seeds: its epoch's)

    @property
    def key(self) -> str:
        return table_key(self.variant.slug, self.size, self.index, ladder=self.ladder)


def table_key(slug: str, size: int, index: int, *, ladder: bool = False) -> str:
    """A table's part of its games' ids: ``kwartet-4p-t0003`` (a ladder table: ``kwartet-4p-L000003``)."""
    if ladder:
        return f"{slug}-{size}p-L{index:06d}"
    return f"{slug}-{size}p-t{index:04d}"


def game_id(key: str, deal: int, rotation: int) -> str:
    """The id of a table's game: its :func:`table_key`, the deal and the rotation
    (``kwartet-4p-t0003-d001-r2``). check-bot names its games with it too, so a bot
    cannot tell check-bot from a league night by its game ids."""
    return f"{key}-d{deal:03d}-r{rotation}"


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    game_id: str
    variant: Variant
    size: int
    table: int
    deal: int
    rotation: int
    seed: int
    seats: tuple[int, ...]  # bot index per seat
    positions: tuple[int, ...]  # lineup position per seat (which of the table's processes plays it)


def colex(n: int, k: int) -> Iterator[tuple[int, ...]]:
    """The ``k``-subsets of ``range(n)`` (each ascending) in colexicographic
    order: those of ``range(m)`` come first, for every ``m``."""
    if k == 0:
        yield ()
        return
    for last in range(k - 1, n):
        for rest in colex(last, k - 1):
            yield (*rest, last)


def lineups(nbots: int, size: int, fill: str) -> Iterator[tuple[int, ...]]:
    """The bot lineups of one table size (see the module docstring)."""
    if nbots >= size:
        yield from colex(nbots, size)
    elif fill == "repeat":
        for combo in itertools.combinations_with_replacement(range(nbots), size):
            if len(set(combo)) == nbots:
                yield combo


def lineup_count(nbots: int, size: int, fill: str) -> int:
    if nbots >= size:
        return math.comb(nbots, size)
    if fill == "repeat" and nbots >= 1:
        return math.comb(size - 1, nbots - 1)
    return 0


def seating_order(lineup: tuple[int, ...], deal: int) -> tuple[int, ...]:
    """The cyclic seating order of ``lineup`` for deal ``deal``.

    The first bot stays first; the others are arranged in the
    ``deal mod (k-1)!``-th permutation (lexicographic, factorial number
    system), so consecutive deals run through every distinct cyclic order.
    """
    first, rest = lineup[0], list(lineup[1:])
    index = deal % math.factorial(len(rest))
    order = [first]
    for i in range(len(rest), 0, -1):
        q, index = divmod(index, math.factorial(i - 1))
        order.append(rest.pop(q))
    return tuple(order)


def deal_seed(master_seed: int, variant: Variant, size: int, deal: int) -> int:
    from referee.rules import derive

    return derive(master_seed, f"{variant.slug}:{size}p:deal:{deal}")


def plan_seed(master_seed: int, variant: Variant, size: int, epoch: int = 0) -> int:
    """The seed of a balanced or gauntlet plan: one draw per variant and size
    (its first plan), and one per top-up (``epoch``, see :class:`Part`)."""
    from referee.rules import derive

    if epoch:
        return derive(master_seed, f"{variant.slug}:{size}p:tables:epoch:{epoch}")
    return derive(master_seed, f"{variant.slug}:{size}p:tables")


@functools.lru_cache(maxsize=64)
def _make_plan(
    kind: str, nbots: int, size: int, seats_per_bot: int, seed: int, challengers: tuple[int, ...]
) -> TablePlan:
    if kind == "gauntlet":
        return gauntlet(nbots, size, seats_per_bot, seed, challengers)
    return balanced(nbots, size, seats_per_bot, seed)


@dataclass(frozen=True)
class Part:
    """One plan of a balanced or gauntlet block (a variant and size): the
    block's first plan (``topup`` False: the night's kind over the bots of the
    first epoch that can seat the size) or the top-up of a later epoch (a
    gauntlet: the epoch's added bots the challengers). ``names``: plan bot
    number -> bot name; ``challengers``: plan bot numbers; its tables are the
    block's ``start .. start + count - 1``; the seed: :func:`plan_seed` (a
    top-up's with its epoch)."""

    epoch: int
    kind: str  # "balanced" | "gauntlet"
    names: tuple[str, ...]
    challengers: tuple[int, ...]
    start: int
    count: int
    topup: bool


def night_epochs(league: League) -> tuple[Epoch, ...]:
    """The night's planning epochs (``League.epochs``; one, the roster, for a night that never grew)."""
    return league.epochs or (Epoch(bots=league.slots),)


def parts(league: League, variant: Variant, size: int) -> list[Part]:
    """The plans of one balanced or gauntlet block, epoch by epoch (arithmetic: no
    plan is made; empty for a round robin). See the module docstring. Raises
    :class:`UserError` when a top-up's field is too small for the table size."""
    return kind_of(variant).parts(league, variant, size)


def epoch_master(league: League, epoch: int) -> int:
    """The master seed of the games of planning epoch ``epoch``: the night's
    seed, but for a secret night that grew, whose later epochs each have a
    secret of their own (``League.epoch_seeds``, :mod:`referee.league.secret`)."""
    if league.seed is None:  # a bug of the caller, never a silent seed 0
        raise RuntimeError("the league's secret seed was not read from its ledger (referee.league.secret)")
    if epoch == 0 or not league.secret:
        return league.seed
    seeds = league.epoch_seeds
    seed = seeds[epoch] if epoch < len(seeds) else None
    if seed is None:  # a bug of the caller, never the first epoch's deals again
        raise RuntimeError(f"the secret of epoch {epoch} was not read from its ledger (referee.league.secret)")
    return seed


def has_master(league: League, epoch: int) -> bool:
    """Whether :func:`epoch_master` has a seed for ``epoch`` (a secret one may not be drawn yet)."""
    try:
        epoch_master(league, epoch)
    except RuntimeError:
        return False
    return True


def joined(league: League) -> dict[str, int]:
    """The epoch each bot of the roster joined in (0: the night's start)."""
    out = dict.fromkeys(league.slots, 0)
    for e, ep in enumerate(night_epochs(league)):
        for name in ep.added if e else ():
            if out.get(name, 0) == 0:
                out[name] = e
    return out


def epoch_starts(league: League, variant: Variant, size: int) -> list[tuple[int, int]]:
    """``(first table, epoch)`` of every epoch's tables in one block (a variant
    and size), in table order (see :func:`epoch_of`). Arithmetic."""
    if kind_of(variant).drawn:
        return [(p.start, p.epoch) for p in parts(league, variant, size)] or [(0, 0)]
    when = joined(league)
    out = [(0, 0)]
    for e in range(1, len(night_epochs(league))):
        before = sum(1 for n in league.slots if when[n] < e)  # a prefix of the roster (bots join at its end)
        out.append((lineup_count(before, size, league.fill) if before >= size else 0, e))
    return out


def epoch_of(league: League, variant: Variant, size: int, index: int) -> int:
    """The planning epoch table ``index`` of a block belongs to: a balanced or
    gauntlet table's plan's (:class:`Part`: the block's first plan, or the
    top-up of the bots added in that epoch); a round-robin table's, the epoch
    in which the last of its bots joined (its tables seating a bot added in
    epoch ``e`` and none added later: colexicographic numbering puts them
    after those of the earlier epochs). A night that never grew: 0."""
    return _epoch_in(epoch_starts(league, variant, size), index)


def _epoch_in(starts: list[tuple[int, int]], index: int) -> int:
    epoch = 0
    for first, e in starts:
        if first <= index:
            epoch = e
    return epoch


def part_plan(league: League, variant: Variant, size: int, part: Part) -> TablePlan:
    """The plan of one :class:`Part` (kept per process, so every use in a run shares it)."""
    seed = plan_seed(epoch_master(league, part.epoch), variant, size, part.epoch if part.topup else 0)
    return _make_plan(part.kind, len(part.names), size, variant.schedule.seats_per_bot, seed, part.challengers)


def table_plan(league: League, variant: Variant, size: int) -> TablePlan | None:
    """The first table plan of a balanced or gauntlet variant at one size (the
    whole block's, for a night that never grew; :func:`parts` lists every
    plan); None for a round robin (or a size no epoch can seat)."""
    ps = parts(league, variant, size)
    return part_plan(league, variant, size, ps[0]) if ps else None


def _part_lineup(
    league: League, variant: Variant, size: int, ps: list[Part], index: int, bot_index: dict[str, int]
) -> tuple[int, ...] | None:
    """Table ``index`` of a block's plans as indices into ``League.bots`` (None: it seats a withdrawn bot)."""
    for part in ps:
        if part.start <= index < part.start + part.count:
            names = part.names
            members = [
                bot_index.get(names[b]) for b in part_plan(league, variant, size, part).lineup(index - part.start)
            ]
            return None if None in members else tuple(m for m in members if m is not None)
    raise IndexError(f"table {index} is not in {variant.name} at {size} seats")


# --------------------------------------------------------------------------
# the schedule kinds: one class each, behind one protocol


class ScheduleKind(Protocol):
    """What a schedule kind answers about one *block* of a night (a variant and
    a table size): which tables it holds, epoch by epoch. One object per kind
    (:data:`KINDS`, :func:`kind_of`); every command asks the night's blocks
    through it (:func:`tables`, :func:`table_at`, :func:`plan`, and
    :class:`referee.league.night.NightPlan` above them), never ``kind == ...``.

    * ``count``: the tables of a block whose bots all joined at the start
      (arithmetic);
    * ``parts``: its plans epoch by epoch (:class:`Part`; empty for a kind
      planned by combinations);
    * ``total``: the tables of the block over every epoch (withdrawn bots'
      included: the numbering);
    * ``lineups``: the lineups of the block's tables ``ts`` (a range, e.g. one
      shard's), ``None`` for a table that seats a withdrawn bot;
    * ``lineup``: one table's lineup on its own (``IndexError`` outside the block);
    * ``left``: how many of the block's ``total`` tables are played (those
      seating a withdrawn bot are left out);
    * ``describe``: the kind in words, for ``referee plan``.
    """

    name: str
    #: whether its tables are drawn from the master seed (a plan; a round robin's are the combinations)
    drawn: bool

    def count(self, nbots: int, variant: Variant, size: int, fill: str) -> int: ...

    def parts(self, league: League, variant: Variant, size: int) -> list[Part]: ...

    def total(self, league: League, variant: Variant, size: int) -> int: ...

    def lineups(
        self, league: League, variant: Variant, size: int, ts: range
    ) -> Iterator[tuple[int, tuple[int, ...] | None]]: ...

    def lineup(self, league: League, variant: Variant, size: int, index: int) -> tuple[int, ...] | None: ...

    def left(self, league: League, variant: Variant, size: int, total: int) -> int: ...

    def describe(self, seats_per_bot: int) -> str: ...


def _bot_index(league: League) -> dict[str, int]:
    return {b.name: i for i, b in enumerate(league.bots)}


class RoundRobin:
    """Every combination of the bots at one table, once (colexicographic over the
    roster; withdrawn bots' tables left out). A night that grows needs no top-up:
    the new combinations come after the old ones."""

    name = "round-robin"
    drawn = False

    def count(self, nbots: int, variant: Variant, size: int, fill: str) -> int:
        return lineup_count(nbots, size, fill)

    def parts(self, league: League, variant: Variant, size: int) -> list[Part]:
        return []

    def total(self, league: League, variant: Variant, size: int) -> int:
        return lineup_count(len(league.slots), size, league.fill)

    def lineups(
        self, league: League, variant: Variant, size: int, ts: range
    ) -> Iterator[tuple[int, tuple[int, ...] | None]]:
        index = _bot_index(league)
        slot_bot = [index.get(name) for name in league.slots]  # None: a withdrawn bot
        for t, combo in enumerate(lineups(len(slot_bot), size, league.fill)):
            if t in ts:
                members = [slot_bot[c] for c in combo]
                yield t, None if None in members else tuple(m for m in members if m is not None)

    def lineup(self, league: League, variant: Variant, size: int, index: int) -> tuple[int, ...] | None:
        combo = next(itertools.islice(lineups(len(league.slots), size, league.fill), index, None), None)
        if combo is None or index < 0:
            raise IndexError(f"table {index} is not in {variant.name} at {size} seats")
        bot = _bot_index(league)
        members = [bot.get(league.slots[c]) for c in combo]
        return None if None in members else tuple(m for m in members if m is not None)

    def left(self, league: League, variant: Variant, size: int, total: int) -> int:
        return lineup_count(len(league.bots), size, league.fill) if league.withdrawn else total

    def describe(self, seats_per_bot: int) -> str:
        return self.name


class _Planned:
    """A kind whose tables come from :class:`~referee.league.balanced.TablePlan` s,
    epoch by epoch (:class:`Part`): the night's first plan, then a top-up for the
    bots each later epoch added (a gauntlet with them as challengers)."""

    name = ""
    drawn = True
    who = "bot"

    def count(self, nbots: int, variant: Variant, size: int, fill: str) -> int:
        raise NotImplementedError

    def first(self, league: League, variant: Variant, size: int, e: int, ep: Epoch, start: int) -> Part | None:
        """The block's first plan, over epoch ``e``'s bots (None: they cannot seat it)."""
        raise NotImplementedError

    def challengers(self, league: League, variant: Variant) -> tuple[str, ...]:
        return ()

    def parts(self, league: League, variant: Variant, size: int) -> list[Part]:
        n_per = variant.schedule.seats_per_bot
        chal = self.challengers(league, variant)
        out: list[Part] = []
        start = 0
        for e, ep in enumerate(night_epochs(league)):
            if not out:  # no plan at this size yet: one of the night's kind over this epoch's bots
                first = self.first(league, variant, size, e, ep, start)
                if first is None:
                    continue
                part = first
            else:  # a top-up: the added bots are challengers against the field
                new = tuple(n for n in ep.added if n in ep.bots)
                if not new:
                    continue
                field = tuple(n for n in ep.bots if n not in new and n not in chal)
                if len(field) < size - 1:
                    raise UserError(
                        f"{variant.name} at {size} seats: the bots added ({', '.join(new)}) are seated against "
                        f"the field, one of them with {size - 1} field bots at each table, but the field has "
                        f"{len(field)}; add fewer bots at a time (after the others have played), or use smaller "
                        "tables"
                    )
                names = field + new
                part = Part(e, "gauntlet", names, tuple(range(len(field), len(names))), start, len(new) * n_per, True)
            out.append(part)
            start += part.count
        return out

    def total(self, league: League, variant: Variant, size: int) -> int:
        return sum(p.count for p in self.parts(league, variant, size))

    def lineups(
        self, league: League, variant: Variant, size: int, ts: range
    ) -> Iterator[tuple[int, tuple[int, ...] | None]]:
        ps = self.parts(league, variant, size)
        index = _bot_index(league)
        for t in ts:
            yield t, _part_lineup(league, variant, size, ps, t, index)

    def lineup(self, league: League, variant: Variant, size: int, index: int) -> tuple[int, ...] | None:
        if index < 0:
            raise IndexError(f"table {index} is not in {variant.name} at {size} seats")
        return _part_lineup(league, variant, size, self.parts(league, variant, size), index, _bot_index(league))

    def left(self, league: League, variant: Variant, size: int, total: int) -> int:
        if not league.withdrawn or league.seed is None:  # (no seed: nothing was played, so no one withdrew)
            return total
        return sum(1 for _, lineup in self.lineups(league, variant, size, range(total)) if lineup is not None)

    def describe(self, seats_per_bot: int) -> str:
        return f"{self.name}, {seats_per_bot} per {self.who}"


class Balanced(_Planned):
    """Every bot at ``seats_per_bot`` tables (a few at one more), pairs met as evenly as possible."""

    name = "balanced"

    def count(self, nbots: int, variant: Variant, size: int, fill: str) -> int:
        return -(-nbots * variant.schedule.seats_per_bot // size)

    def first(self, league: League, variant: Variant, size: int, e: int, ep: Epoch, start: int) -> Part | None:
        if len(ep.bots) < size:
            return None
        return Part(e, "balanced", ep.bots, (), start, self.count(len(ep.bots), variant, size, league.fill), False)


class Gauntlet(_Planned):
    """One challenger at every table (``seats_per_bot`` tables each), the other seats from the field."""

    name = "gauntlet"
    who = "challenger"

    def count(self, nbots: int, variant: Variant, size: int, fill: str) -> int:
        return len(variant.schedule.challengers) * variant.schedule.seats_per_bot

    def challengers(self, league: League, variant: Variant) -> tuple[str, ...]:
        return tuple(league.bots[i].name for i in variant.schedule.challengers)

    def first(self, league: League, variant: Variant, size: int, e: int, ep: Epoch, start: int) -> Part | None:
        chal = self.challengers(league, variant)
        cs = tuple(ep.bots.index(c) for c in chal if c in ep.bots)  # in the order given
        if not cs or len(ep.bots) - len(cs) < size - 1:
            return None
        return Part(e, "gauntlet", ep.bots, cs, start, len(cs) * variant.schedule.seats_per_bot, False)


#: every schedule kind of a config's ``[schedule] kind``, by name
KINDS: dict[str, ScheduleKind] = {k.name: k for k in (RoundRobin(), Balanced(), Gauntlet())}


def kind_of(variant: Variant) -> ScheduleKind:
    """The schedule kind of a variant (its ``schedule.kind``)."""
    return KINDS[variant.schedule.kind]


def ladder_seed(master_seed: int, variant: Variant, size: int, table: int, deal: int) -> int:
    from referee.rules import derive

    return derive(master_seed, f"{variant.slug}:{size}p:ladder:{table}:deal:{deal}")


class Ladder:
    """The ladder's schedule (``referee ladder``, :mod:`referee.league.ladder`):
    tables chosen one at a time as the night goes on, so its plan is its
    records. Table ``n`` (``Table(ladder=True)``, key ``...-4p-L000012``) plays
    every deal of its variant in every rotation, with deals of its own
    (:func:`ladder_seed`); :meth:`recorded` rebuilds a table from one of its
    recorded games, which is how the ladder resumes it and how ``referee
    verify`` checks the rest of its games."""

    name = "ladder"

    def recorded(self, league: League, row: Any, number: int) -> Table | None:
        """Ladder table ``number`` rebuilt from one of its recorded games
        (``row``: a ledger row; the lineup from its seating), or None if its
        variant or table size, or one of its bots, is not in ``league``."""
        variant = next((v for v in league.variants if v.name == row.variant), None)
        index = _bot_index(league)
        k = row.size
        if variant is None or len(row.bots) != k or any(b not in index for b in row.bots) or not 0 <= row.rotation < k:
            return None
        order = seating_order(tuple(range(k)), row.deal)
        lineup = [0] * k
        for s in range(k):
            lineup[order[(s + row.rotation) % k]] = index[row.bots[s]]
        return Table(variant=variant, size=k, index=number, lineup=tuple(lineup), ladder=True)


#: the ladder's schedule (one object, like :data:`KINDS`)
LADDER = Ladder()


def _blocks(league: League) -> Iterator[tuple[Variant, int, int, int]]:
    """``(variant, size, global number of its first table, its table count)``
    for every variant and table size, in schedule order (tables counted over
    the roster, withdrawn bots' included: the numbering; a balanced or
    gauntlet block over every epoch's plan)."""
    number = 0
    for v in league.variants:
        kind = kind_of(v)
        for size in v.sizes:
            count = kind.total(league, v, size)
            yield v, size, number, count
            number += count


def tables(league: League, shard: Shard | None = None) -> Iterator[Table]:
    """Every table of the league (or of one shard), in schedule order (lazily);
    a table seating a withdrawn bot is left out."""
    for v, size, start, count in _blocks(league):
        if shard is not None and shard.count_in(start, count) == 0:
            continue
        ts = range(count) if shard is None else range((shard.k - 1 - start) % shard.n, count, shard.n)
        starts = epoch_starts(league, v, size) if league.epochs else [(0, 0)]
        for t, lineup in kind_of(v).lineups(league, v, size, ts):
            if lineup is not None:  # else a table of a withdrawn bot
                yield Table(variant=v, size=size, index=t, lineup=lineup, number=start + t, epoch=_epoch_in(starts, t))


def table_at(league: League, variant: Variant, size: int, index: int) -> Table:
    """Table ``index`` of one variant and size, made on its own (a balanced or
    gauntlet plan makes just that lineup; a round robin walks its
    combinations). ``IndexError`` outside the block."""
    for v, sz, start, count in _blocks(league):
        if v is variant and sz == size:
            if not 0 <= index < count:
                raise IndexError(f"table {index} is not in {variant.name} at {size} seats (0..{count - 1})")
            lineup = kind_of(v).lineup(league, v, size, index)
            if lineup is None:
                raise IndexError(f"table {index} of {variant.name} at {size} seats seats a withdrawn bot")
            epoch = epoch_of(league, v, size, index) if league.epochs else 0
            return Table(variant=v, size=size, index=index, lineup=lineup, number=start + index, epoch=epoch)
    raise IndexError(f"{variant.name} has no {size}-seat tables in this league")


@dataclass(frozen=True)
class BlockCoverage:
    """The coverage figures of one plan of a balanced or gauntlet variant and
    size (:class:`Part`: the first plan, or a top-up of the bots added in
    ``epoch``, tables ``first .. first + tables - 1`` of the block)."""

    variant: str
    size: int
    coverage: Coverage
    epoch: int = 0
    first: int = 0
    topup: bool = False
    added: tuple[str, ...] = ()  # a top-up's challengers (the bots added)

    def title(self) -> str:
        """``"coverage of kwartet at 4 seats"`` (a top-up: with its tables and the bots added)."""
        head = f"coverage of {self.variant} at {self.size} seats"
        if not self.topup:
            return head
        last = self.first + self.coverage.tables - 1
        return f"{head}, top-up {self.epoch} (tables t{self.first:04d}-t{last:04d}: {', '.join(self.added)} added)"


def coverages(league: League) -> list[BlockCoverage]:
    """:func:`referee.league.balanced.coverage` of every plan of every balanced
    or gauntlet variant and size (measured by streaming over the bots; a round
    robin has none: every combination meets once). A night that grew has one
    per epoch (a top-up's figures are its challengers' against the field).
    Always the whole night's, also for a shard."""
    out = []
    for v in league.variants:
        for size in v.sizes:
            for p in parts(league, v, size):
                if not has_master(league, p.epoch):  # a secret night's top-up whose secret is not drawn yet
                    continue
                cov = coverage(part_plan(league, v, size, p))
                added = tuple(p.names[c] for c in p.challengers) if p.topup else ()
                out.append(BlockCoverage(v.name, size, cov, p.epoch, p.start, p.topup, added))
    return out


def undrawn_epochs(league: League) -> list[int]:
    """The epochs of a secret night (its seed read) whose plans :func:`coverages`
    leaves out: their secret is drawn when ``referee run`` adds their bots."""
    if league.seed is None:
        return []
    found = {p.epoch for v in league.variants for size in v.sizes for p in parts(league, v, size)}
    return sorted(e for e in found if not has_master(league, e))


def table_games(league: League, table: Table) -> Iterator[ScheduledGame]:
    """The games of one table: every deal in every seat rotation."""
    k = table.size
    master = league.seed if table.ladder else epoch_master(league, table.epoch)
    if master is None:  # a bug of the caller, never a silent seed 0
        raise RuntimeError("the league's secret seed was not read from its ledger (referee.league.secret)")
    for d in range(table.variant.deals):
        seed = (
            ladder_seed(master, table.variant, k, table.index, d)
            if table.ladder
            else deal_seed(master, table.variant, k, d)
        )
        order = seating_order(tuple(range(k)), d)  # lineup positions
        for r in range(k):
            positions = tuple(order[(s + r) % k] for s in range(k))
            yield ScheduledGame(
                game_id=game_id(table.key, d, r),
                variant=table.variant,
                size=k,
                table=table.index,
                deal=d,
                rotation=r,
                seed=seed,
                seats=tuple(table.lineup[p] for p in positions),
                positions=positions,
            )


def games(league: League, shard: Shard | None = None) -> Iterator[ScheduledGame]:
    """Every game of the league (or of one shard), in schedule order (lazily)."""
    for table in tables(league, shard):
        yield from table_games(league, table)


@dataclass(frozen=True)
class PlanRow:
    variant: str
    size: int
    tables: int
    deals: int
    rotations: int
    schedule: str = "round-robin"  # the variant's schedule kind
    seats_per_bot: int = 0  # balanced, gauntlet: tables per bot (per challenger)

    @property
    def games(self) -> int:
        return self.tables * self.deals * self.rotations

    @property
    def drawn(self) -> bool:
        """Whether the tables are drawn from the master seed (balanced, gauntlet: a plan; not a round robin)."""
        return KINDS[self.schedule].drawn

    @property
    def what(self) -> str:
        """The schedule in words: ``"round-robin"``, ``"balanced, 6 per bot"``, ``"gauntlet, 4 per challenger"``."""
        return KINDS[self.schedule].describe(self.seats_per_bot)


def plan(league: League, shard: Shard | None = None) -> list[PlanRow]:
    """Table and game counts per variant and size (of one shard, if given),
    without generating anything (but the lineups of a balanced or gauntlet
    block of a night with withdrawn bots, whose tables seating them are left out)."""
    return [
        PlanRow(
            v.name,
            size,
            kind_of(v).left(league, v, size, count) if shard is None else shard.count_in(start, count),
            v.deals,
            size,
            v.schedule.kind,
            v.schedule.seats_per_bot,
        )
        for v, size, start, count in _blocks(league)
    ]


def balance_warnings(league: League) -> list[str]:
    """One warning per variant with a table size whose ``deals`` is not a
    multiple of ``(size-1)!`` (the number of cyclic seating orders of a table,
    one per deal in turn): then the orders are not all played equally often,
    so some bots sit to the left of others more often (the seating is not
    fully balanced). Empty when every variant is balanced."""
    out = []
    for i, v in enumerate(league.variants):
        bad = [size for size in v.sizes if v.deals % math.factorial(size - 1)]
        if not bad:
            continue
        orders = ", ".join(str(math.factorial(size - 1)) for size in bad)
        need = math.factorial(max(v.sizes) - 1)  # a multiple of every smaller size's (size-1)!
        whole = -(-v.deals // need) * need
        out.append(
            f"variants[{i}] '{v.name}': deals = {v.deals} is not a multiple of (size-1)! at "
            f"{', '.join(map(str, bad))} seats ({orders} cyclic seating orders): some orders are played more "
            f"often than others, so some bots sit to the left of others more often (seating not fully "
            f"balanced); deals = {whole} would balance every size"
        )
    return out


def total_games(league: League, shard: Shard | None = None) -> int:
    return sum(r.games for r in plan(league, shard))


def total_tables(league: League, shard: Shard | None = None) -> int:
    return sum(r.tables for r in plan(league, shard))


def table_offsets(league: League) -> dict[tuple[str, int], tuple[int, int]]:
    """``(variant name, size) -> (global number of its first table, its table count)``."""
    return {(v.name, size): (start, count) for v, size, start, count in _blocks(league)}


def check_shard(league: League, shard: Shard | None) -> None:
    """Refuse a split into more shards than the league has tables (some machines
    would have nothing to play): :class:`UserError` saying the maximum."""
    if shard is None:
        return
    ntables = total_tables(league)
    if shard.n > ntables:
        raise UserError(
            f"--shard {shard}: the league has only {ntables} table(s), so a split into {shard.n} shards "
            f"would leave machines with nothing to play; use at most {ntables} shards "
            "(shards are made of whole tables)"
        )
