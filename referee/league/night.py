"""A night's plan, read from its ledger: the one definition every command asks.

What a night holds is decided by its stored config *and* by what the ledger
recorded about it since: the roster (bots in joining order, withdrawn ones
included), the planning epochs of a night that grew (meta ``epochs``: a top-up
per growth, :mod:`referee.league.roster`), the withdrawn bots (meta
``withdrawn``), the secret seed (meta ``secret_seed``; a grown secret
night's later epochs' secrets: meta ``epoch_secrets``), the shards it holds
(meta ``shard`` or ``merged``) and the ladder tables ``referee ladder`` chose
(their games' rows). :func:`stored_league` rebuilds the
:class:`~referee.league.config.League` from all of them, and
:class:`NightPlan` answers from it:

* ``rows``/``total``/``per_variant``: the planned games (per variant and
  size: :func:`referee.league.schedule.plan` over the held shards);
* ``games``: every planned game (needs the seed), by id;
* ``holds(game_id)``: whether an id is a planned game of the night (parsed and
  checked arithmetically: no plan is made unless bots withdrew);
* ``ladder(rows)``: the ladder games the records describe (each ladder table
  rebuilt from its first game, as the ladder resumes it, with the ladder's own
  deal seeds), to check every ladder row against;
* ``played(ids)``/``complete(ids)``: planned games played, and whether all are.

``referee plan``, ``run``, ``verify``, ``standings``, the report (played of
planned, the Complete banner), the live page (``referee serve``'s
``/live/status``), the secret seed's reveal and ``ladder`` use it, so a night
that grew, had a bot withdrawn or shares its folder with a ladder is the same
night to all of them.

Errors: :class:`referee.errors.UserError` for a ledger without a config, a
stored config that cannot be rebuilt, and a damaged ``epochs`` record.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from referee.errors import UserError
from referee.league import schedule as sched
from referee.league.config import SECRET, League, from_canonical, normalize_stored
from referee.league.ledger import Ledger, MergedMeta
from referee.league.secret import EPOCH_META, META_KEY, stored_epoch_seeds, stored_seed
from referee.league.shards import Shard, parse_shard

#: a planned game's id: ``kwartet-4p-t0003-d002-r1``
_PLANNED_RE = re.compile(r"^(?P<slug>.+)-(?P<size>\d+)p-t(?P<table>\d{4,})-d(?P<deal>\d{3,})-r(?P<rot>\d+)$")
#: a ladder game's id: ``kwartet-4p-L000012-d000-r0``
_LADDER_RE = re.compile(r"^(?P<slug>.+)-(?P<size>\d+)p-L(?P<table>\d{6,})-d(?P<deal>\d{3,})-r(?P<rot>\d+)$")

Meta = Callable[[str], "str | None"]


def ladder_number(game_id: str) -> int | None:
    """The ladder table number of a ladder game's id, else None."""
    m = _LADDER_RE.match(game_id)
    return int(m.group("table")) if m else None


def stored_league(config: dict[str, Any] | None, meta: Meta, where: str, *, withdraw: bool = True) -> League:
    """The night a ledger holds: its stored ``config`` (canonical, bots in
    joining order) with the bots its meta (``meta(key)``) says were withdrawn
    left out of ``bots`` (kept in the roster; ``withdraw=False``: kept in, so
    their tables are in the plan too, e.g. to check the games they played),
    its epochs, and a secret seed from the ledger (None when none is stored
    yet). ``where``: the ledger's path, for errors. Raises :class:`UserError`."""
    from referee.league.roster import EPOCHS_META, WITHDRAWN_META, stored_epochs, stored_withdrawn

    config = normalize_stored(config)
    if not config:
        raise UserError(f"{where}: the ledger stores no config (no game was ever recorded here?)")
    gone = set(stored_withdrawn(meta(WITHDRAWN_META))) if withdraw else set()
    bots = config.get("bots")
    roster = tuple(b["name"] for b in bots if isinstance(b, dict) and isinstance(b.get("name"), str)) if bots else ()
    data = _without(config, gone) if gone else config
    league = from_canonical(data, where)
    epochs = stored_epochs(meta(EPOCHS_META), league.out)
    league = dataclasses.replace(league, roster=roster if gone or epochs else (), epochs=epochs)
    if league.secret:
        text = meta(META_KEY)
        if text is not None and text.isdigit():
            league = dataclasses.replace(league, seed=int(text))
        league = dataclasses.replace(league, epoch_seeds=stored_epoch_seeds(meta(EPOCH_META), where))
    return league


def _without(config: dict[str, Any], gone: set[str]) -> dict[str, Any]:
    """A canonical config without the bots ``gone`` (in ``bots`` and every ``challengers``)."""
    from referee.league.roster import without_challengers

    kept = [b for b in config["bots"] if not (isinstance(b, dict) and b.get("name") in gone)]
    return without_challengers({**config, "bots": kept}, gone)


def with_seed_of_out(league: League) -> League:
    """``league`` (a secret night's, as :func:`referee.league.roster.night_of`
    reads it) with the seed its output directory's ledger holds, once the
    night has begun; as it is for a public seed or a night not started (then
    its seed is None: nothing that depends on it can be shown). Never raises
    for a missing or unreadable ledger."""
    from referee.league.ledger import LEDGER_NAME, Ledger

    if not league.secret or league.seed is not None or not (league.out / LEDGER_NAME).is_file():
        return league
    try:
        with Ledger.in_dir(league.out, create=False) as ledger:
            seed = stored_seed(ledger) if ledger.count() else None
            epochs = stored_epoch_seeds(ledger.get_meta(EPOCH_META), str(ledger.path)) if seed is not None else ()
    except (UserError, OSError):
        return league
    return league if seed is None else dataclasses.replace(league, seed=seed, epoch_seeds=epochs)


def held_shards(meta: Meta, where: str) -> tuple[Shard | None, ...]:
    """The shards a ledger holds (meta ``merged`` or ``shard``); ``(None,)``: the whole night."""
    from referee.league.ledger import MergedMeta

    merged_text = meta("merged")
    if merged_text is not None:
        merged = MergedMeta.parse(merged_text)
        if merged is None:
            raise UserError(f"{where}: the ledger's merge record is damaged ({merged_text!r})")
        return tuple(Shard(k, merged.of) for k in merged.shards)
    shard_text = meta("shard")
    if shard_text is not None:
        try:
            return (parse_shard(shard_text),)
        except UserError:
            raise UserError(f"{where}: the ledger's shard record is damaged ({shard_text!r})") from None
    return (None,)


@dataclass(frozen=True)
class NightPlan:
    """The plan of a night (see the module docstring): ``league`` as its ledger
    holds it, ``shards`` the shards the ledger holds (``(None,)``: all)."""

    league: League
    shards: tuple[Shard | None, ...] = (None,)
    #: ``league`` with its withdrawn bots still in (their tables planned): the games they played are checked
    #: against it (None: ``league`` itself)
    everyone: League | None = None

    @classmethod
    def of(cls, config: dict[str, Any] | None, meta: Meta, where: str) -> NightPlan:
        """The plan of a ledger's stored ``config`` and ``meta`` (e.g. from a read-only connection)."""
        league = stored_league(config, meta, where)
        everyone = stored_league(config, meta, where, withdraw=False) if league.withdrawn else None
        return cls(league, held_shards(meta, where), everyone)

    @classmethod
    def of_ledger(cls, ledger: Any) -> NightPlan:
        """The plan of an open :class:`~referee.league.ledger.Ledger`."""
        return cls.of(ledger.config(), ledger.get_meta, str(ledger.path))

    # ---- counts (arithmetic)

    def rows(self) -> list[sched.PlanRow]:
        """Tables and games per variant and size, over the held shards."""
        by: dict[tuple[str, int], sched.PlanRow] = {}
        for shard in self.shards:
            for r in sched.plan(self.league, shard):
                have = by.get((r.variant, r.size))
                by[(r.variant, r.size)] = (
                    r if have is None else dataclasses.replace(have, tables=have.tables + r.tables)
                )
        return list(by.values())

    def total(self) -> int:
        return sum(r.games for r in self.rows())

    def per_variant(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows():
            out[r.variant] = out.get(r.variant, 0) + r.games
        return out

    # ---- games

    def games(self) -> Iterator[sched.ScheduledGame]:
        """Every game of the held shards, in schedule order (needs the seed),
        the tables of withdrawn bots included (the games they played are the
        night's; :attr:`everyone`)."""
        league = self.everyone or self.league
        for shard in self.shards:
            yield from sched.games(league, shard)

    def holds(self, game_id: str) -> bool:
        """Whether ``game_id`` names a game of the held shards' plan (parsed and
        checked arithmetically; a withdrawn bot's table included)."""
        m = _PLANNED_RE.match(game_id)
        if m is None:
            return False
        size, t, deal, rot = int(m["size"]), int(m["table"]), int(m["deal"]), int(m["rot"])
        offsets = self._offsets
        for v in self.league.variants:
            if v.slug != m["slug"] or size not in v.sizes:
                continue
            start, count = offsets[(v.name, size)]
            if not (t < count and deal < v.deals and rot < size):
                return False
            return any(s is None or s.holds(start + t) for s in self.shards)
        return False

    @functools.cached_property
    def _offsets(self) -> dict[tuple[str, int], tuple[int, int]]:
        return sched.table_offsets(self.league)

    def played(self, rows: Iterable[Any]) -> int:
        """How many of ``rows`` (ledger rows) are planned games played: in the
        plan, and (as in :func:`referee.league.runner.play`) not seating a
        withdrawn bot, whose tables the plan leaves out."""
        gone = set(self.league.withdrawn)
        return sum(1 for r in rows if self.holds(r.game_id) and not (gone and gone.intersection(r.bots)))

    def complete(self, rows: Iterable[Any]) -> bool:
        """Whether every planned game is among ``rows``."""
        return self.played(rows) >= self.total()

    # ---- the ladder's games

    def ladder(self, rows: Iterable[Any]) -> dict[str, sched.ScheduledGame]:
        """The games of the ladder tables recorded in ``rows`` (ledger rows), by
        id: each table rebuilt from its first recorded game (its variant, size
        and seating: :meth:`referee.league.schedule.Ladder.recorded`), with every
        deal in every rotation and the ladder's deal seeds. A table whose
        variant the config no longer has is left out (its rows are then not
        in the schedule)."""
        first: dict[int, Any] = {}
        for row in rows:
            n = ladder_number(row.game_id)
            if n is not None and (n not in first or row.game_id < first[n].game_id):
                first[n] = row
        everyone = self.everyone or self.league
        out: dict[str, sched.ScheduledGame] = {}
        for n, row in sorted(first.items()):
            table = sched.LADDER.recorded(everyone, row, n)
            if table is not None:
                out.update((g.game_id, g) for g in sched.table_games(everyone, table))
        return out


def shown_seed(ledger: Ledger) -> int | str | None:
    """The master seed as the standings and the report may show it: the
    config's seed; for a secret night the seed once every planned game is
    recorded (a whole night, or a complete merge; never a shard's own ledger:
    the other shards may still be playing), else ``"secret"``. None when the
    ledger stores no readable config."""
    config = normalize_stored(ledger.config())
    if not isinstance(config, dict) or "seed" not in config:
        return None
    if config["seed"] != SECRET:
        seed = config["seed"]
        return seed if isinstance(seed, int) else None
    if not _complete(ledger, config):
        return SECRET
    stored = stored_seed(ledger)
    return stored if stored is not None else SECRET


def shown_epoch_seeds(ledger: Ledger) -> list[int] | None:
    """The secrets of a grown secret night's later epochs (epoch 1, 2, ...) as
    the standings and the report may show them: once :func:`shown_seed` shows
    the first epoch's (every planned game of every epoch recorded); else None
    (also for a public night or one that never grew)."""
    seeds = stored_epoch_seeds(ledger.get_meta(EPOCH_META), str(ledger.path))
    if not seeds or not isinstance(shown_seed(ledger), int):
        return None
    return [s for s in seeds[1:] if s is not None]


def _complete(ledger: Ledger, config: dict[str, object]) -> bool:
    """Whether every planned game of the whole night is in ``ledger``."""
    if ledger.get_meta("shard") is not None:
        return False
    merged = ledger.get_meta("merged")
    if merged is not None:
        meta = MergedMeta.parse(merged)
        return meta is not None and meta.complete
    try:
        night = NightPlan.of_ledger(ledger)  # the night as its ledger holds it: epochs, top-ups, withdrawn bots
    except UserError:
        return False
    total = night.total()  # planned games only: ladder games never reveal the seed
    return ledger.count() >= total and night.played(ledger.rows()) >= total
