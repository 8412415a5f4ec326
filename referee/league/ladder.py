"""``referee ladder``: a night that keeps going, one table at a time, as long as it is left running.

Each step chooses one table, plays its deals in every seat rotation (the
duplicate format of :mod:`referee.league.schedule`), commits every game to the
ledger as it ends (the coordinator of :mod:`referee.league.runner`), then
rewrites the standings and ``report.html``. Between tables the config is read
again: bots added to it join the ladder (after their build and start check),
bots removed are withdrawn (:mod:`referee.league.roster`); a config that does
not load, or changes anything else, gives one ``warning:`` line and the ladder
goes on with the config it has.

Matchmaking (after psyleague's): ratings are openskill ratings, updated game by
game over every counted game in the ledger (planned games and ladder games alike;
``Tally(online=True)``; the standings it writes come from the batch fit).

1. The variant and table size: of the config's variants and sizes that the
   bots can fill, the one with the fewest ladder tables so far (the first in
   config order on a tie), so the ladder goes round them in turn.
2. The bot that needs games most: the fewest games so far, then the highest
   sigma (the most uncertain rating).
3. Its opponents: the ``size - 1`` others whose rating is closest to its own
   relative to the uncertainty, ``|mu_j - mu| / sqrt(sigma_j^2 + sigma^2)``
   smallest: close ratings, or ratings too uncertain to tell apart, are the
   tables whose results say the most.

Ties are broken by a generator seeded from the master seed and the table
number, so a ladder is reproducible given the same ledger.

Ladder tables are numbered from 0 across all variants (``kwartet-3p-L000007``,
see :data:`referee.league.schedule.Table.ladder`), each with deals of its own;
their ids never collide with planned games, so ``referee run`` and
``referee ladder`` share an output directory. Ladder games are not planned
games (:class:`referee.league.night.NightPlan` counts them apart: they never
make a night complete nor reveal a secret seed); ``referee verify`` checks
each against its table as the records give it
(:meth:`referee.league.schedule.Ladder.recorded`). A secret night's ladder
plays with the ledger's seed (drawn and stored at its first table, as
``referee run`` does: :func:`referee.league.secret.settle_seed`). A table cut off by Ctrl-C is
finished first when the ladder runs again (if its bots are all still in).

Errors: :class:`referee.errors.UserError` (the config, the output directory,
a failing build or start check at the start, a table size no variant can fill
with the bots there are). Ctrl-C stops at once: finished games stay
committed, no bot process is left behind (``KeyboardInterrupt`` propagates).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from referee.errors import UserError, user_facing
from referee.league import schedule as sched
from referee.league.config import League, load_config, normalize_stored
from referee.league.ledger import GameRow, Ledger, config_text
from referee.league.local import LocalExecutor
from referee.league.night import ladder_number
from referee.league.outdir import WriteOutputs
from referee.league.preflight import prepare, to_stderr
from referee.league.roster import EPOCHS_META, WITHDRAWN_META, reconcile, stored_withdrawn
from referee.league.runner import RunStats, _Batch, _Committer, _drive
from referee.league.standings import Tally
from referee.league.work import UnitMaker
from referee.rules.rng import Rng, derive
from referee.runtime import BotSession
from referee.runtime.entry import run as trio_run

#: what the ladder says (one line each): warnings and what happens
Say = Callable[[str], None]


@dataclass
class LadderTable:
    """A table chosen (or resumed) by the ladder, and what is left of it to play."""

    table: sched.Table
    games: list[sched.ScheduledGame]
    resumed: bool = False


@dataclass
class _Rating:
    games: int = 0
    mu: float = 25.0
    sigma: float = 25.0 / 3


# --------------------------------------------------------------------------
# matchmaking


def _ratings(tally: Tally, names: list[str]) -> dict[str, _Rating]:
    scope = tally.overall
    out = {}
    for name in names:
        r = scope.ratings.get(name)
        t = scope.bots.get(name)
        out[name] = _Rating(t.games if t else 0, r.mu if r else 25.0, r.sigma if r else 25.0 / 3)
    return out


def choose(league: League, tally: Tally, tables_so_far: Counter[tuple[str, int]], number: int) -> sched.Table:
    """Ladder table ``number`` (see the module docstring): its variant, size and
    lineup (bot indices in joining order). Raises :class:`UserError` when no
    variant's table size can be filled by the bots."""
    nbots = len(league.bots)
    options = [(v, s) for v in league.variants for s in v.sizes if s <= nbots]
    if not options:
        smallest = min(s for v in league.variants for s in v.sizes)
        raise UserError(f"the ladder needs at least {smallest} bots for its smallest table; the config has {nbots}")
    variant, size = min(options, key=lambda o: tables_so_far[(o[0].name, o[1])])
    names = [b.name for b in league.bots]
    rating = _ratings(tally, names)
    if league.seed is None:  # a bug of the caller: settle_seed fills in a secret seed first
        raise RuntimeError("the league's secret seed was not read from its ledger (referee.league.secret)")
    rng = Rng(derive(league.seed, f"ladder:{number}"))
    order = list(range(nbots))
    rng.shuffle(order)
    tie = {i: k for k, i in enumerate(order)}
    focus = min(range(nbots), key=lambda i: (rating[names[i]].games, -rating[names[i]].sigma, tie[i]))
    f = rating[names[focus]]

    def distance(i: int) -> tuple[float, int]:
        r = rating[names[i]]
        return abs(r.mu - f.mu) / math.sqrt(r.sigma**2 + f.sigma**2), tie[i]

    others = sorted((i for i in range(nbots) if i != focus), key=distance)[: size - 1]
    slot = {n: k for k, n in enumerate(league.slots)}
    lineup = tuple(sorted([focus, *others], key=lambda i: slot[names[i]]))
    return sched.Table(variant=variant, size=size, index=number, lineup=lineup, ladder=True)


def _resumable(league: League, rows: list[GameRow], number: int) -> sched.Table | None:
    """Ladder table ``number`` rebuilt from its recorded games (:meth:`referee.league.schedule.Ladder.recorded`),
    or None if its variant or one of its bots is gone."""
    return sched.LADDER.recorded(league, rows[0], number)


# --------------------------------------------------------------------------
# the ladder


class Ladder:
    """One ladder run on an open ledger (see :func:`run_ladder`)."""

    def __init__(
        self,
        path: Path,
        league: League,
        ledger: Ledger,
        *,
        keep_withdrawn: bool,
        concurrency: int | None,
        say: Say,
        outputs: WriteOutputs,
        cluster: Any = None,
    ) -> None:
        self.path = path
        self.league = league
        self.ledger = ledger
        self.outputs = outputs  # writes the standings and the report (referee.view.night.write_outputs)
        self.keep_withdrawn = keep_withdrawn
        #: a :class:`referee.league.cluster.Cluster` to play the tables on (None: this machine)
        self.cluster = cluster
        self.slots = concurrency or (cluster.slots if cluster is not None else league.concurrency)
        self.say = say
        self.maker = UnitMaker(league)
        self.given_up: dict[int, BotSession] = {}
        #: on a cluster: the bots given up (their sessions are the workers')
        self.given_up_ids: frozenset[int] = frozenset()
        self.config_bytes = self._read_config()
        self.warned: str | None = None
        self.rebuild = False  # build every bot at the start, even one whose build is cached (--rebuild)
        self.tables_played = 0
        self.games_played = 0
        self._load_ledger()

    def _read_config(self) -> bytes | None:
        try:
            return self.path.read_bytes()
        except OSError:
            return None

    def _load_ledger(self) -> None:
        """The tally (ratings) and the ladder's tables so far, from the ledger."""
        gone = set(self.league.withdrawn)
        self.tally = Tally(self.league.name, online=True)
        self.ladder_rows: dict[int, list[GameRow]] = defaultdict(list)
        for row in self.ledger.rows():
            n = ladder_number(row.game_id)
            if n is not None:
                self.ladder_rows[n].append(row)
            if self.keep_withdrawn or not gone.intersection(row.bots):
                self.tally.add(row)

    def _next(self) -> LadderTable:
        """The unfinished ladder table to finish, else a new one."""
        done = {r.game_id for rows in self.ladder_rows.values() for r in rows}
        for n in sorted(self.ladder_rows):
            rows = self.ladder_rows[n]
            if len(rows) >= rows[0].size * _deals(self.league, rows[0].variant):
                continue
            table = _resumable(self.league, rows, n)
            if table is not None:
                todo = [g for g in sched.table_games(self.league, table) if g.game_id not in done]
                if todo:
                    return LadderTable(table, todo, resumed=True)
        counts: Counter[tuple[str, int]] = Counter()
        for rows in self.ladder_rows.values():
            counts[(rows[0].variant, rows[0].size)] += 1
        number = max(self.ladder_rows, default=-1) + 1
        table = choose(self.league, self.tally, counts, number)
        return LadderTable(table, list(sched.table_games(self.league, table)))

    async def start(self) -> None:
        """The builds and start check of every bot, then the staged meta committed."""
        if self.cluster is not None:
            self.given_up_ids = await self.cluster.prepare(self.league, self.maker, self.say, rebuild=self.rebuild)
        else:
            self.given_up = await prepare(self.league, self.maker, self.slots, say=self.say, rebuild=self.rebuild)
        self.ledger.commit_staged()

    async def reload(self) -> None:
        """Read the config again; take it if its bots changed in a way the
        night accepts and the new bots pass their start check (else warn once
        per version of the file and keep the old one)."""
        data = self._read_config()
        if data == self.config_bytes:
            return
        try:
            new = load_config(self.path, out=str(self.league.out))
            stored = normalize_stored(self.ledger.config())
            if stored is None or self.ledger.count() == 0:
                league, meta, lines = (
                    new,
                    {
                        "config": config_text(new.canonical()),
                        WITHDRAWN_META: None,
                        EPOCHS_META: None,
                    },
                    [],
                )
            else:
                withdrawn = stored_withdrawn(self.ledger.get_meta(WITHDRAWN_META))
                epochs = self.ledger.get_meta(EPOCHS_META)
                growth = reconcile(new, stored, withdrawn, self.league.out, epochs)
                league, meta, lines = growth.league, growth.meta, growth.lines()
            if league.secret:  # the night's seed, not the config's word "secret"
                league = dataclasses.replace(league, seed=self.league.seed)
            maker = UnitMaker(league)
            if self.cluster is not None and meta:  # the builds and start check of every bot, on the workers
                self.given_up_ids = await self.cluster.prepare(league, maker, self.say)
            given_up = await self._check_new(league, maker) if meta and self.cluster is None else self.given_up
        except UserError as exc:
            text = str(exc)
            if text != self.warned:
                self.warned = text
                self.say(f"warning: the config was changed, but the ladder goes on with the one it has: {text}")
            return
        self.config_bytes = data
        self.warned = None
        if meta:
            self.ledger.stage_meta(meta)
            self.ledger.commit_staged()
        roster_changed = league.withdrawn != self.league.withdrawn
        self.league, self.maker, self.given_up = league, maker, given_up
        if roster_changed:
            self._load_ledger()
        for line in lines:
            self.say(line)

    async def _check_new(self, league: League, maker: UnitMaker) -> dict[int, BotSession]:
        """The builds and start check of the bots of ``league`` that the ladder has
        not checked yet (new, or changed); the bots given up so far stay given up."""
        before = {bot.name: (bot, i) for i, bot in enumerate(self.league.bots)}
        kept: dict[int, BotSession] = {}
        new: set[int] = set()
        for i, bot in enumerate(league.bots):
            old = before.get(bot.name)
            if old is None or old[0] != bot:
                new.add(i)
            elif old[1] in self.given_up:
                kept[i] = self.given_up[old[1]]
        if not new:
            return kept
        return {**kept, **await prepare(league, maker, self.slots, say=self.say, only=new)}

    async def play_table(self, hook: Callable[[LadderTable], None] | None = None) -> LadderTable:
        """Choose (or resume) one table and play what is left of it."""
        lt = self._next()
        if hook is not None:
            hook(lt)
        stats = RunStats(total=len(lt.games), done_before=0)
        committer = _Committer(self.league, self.ledger, stats, self.tally, None)
        todo = lt.games
        size = math.ceil(len(todo) / min(self.slots, len(todo)))
        given_up = self.given_up_ids if self.cluster is not None else frozenset(self.given_up)
        batches = (
            _Batch(self.maker.unit(lt.table, todo[i : i + size], given_up), {g.game_id: g for g in todo[i : i + size]})
            for i in range(0, len(todo), size)
        )
        try:
            if self.cluster is not None:
                async with self.cluster.executor(self.league) as remote:
                    await _drive(batches, remote, committer, self.slots)
            else:
                from referee.view.live import LiveViewers

                viewers = LiveViewers.for_out(self.league.out)
                executor = LocalExecutor(self.league.out / "games", self.given_up, viewers=viewers)
                await _drive(batches, executor, committer, self.slots)
        finally:
            for g in todo:
                row = self.ledger.get(g.game_id)
                if row is not None:
                    self.ladder_rows[lt.table.index].append(row)
            self.games_played += stats.played
        self.tables_played += 1
        return lt

    def write_outputs(self) -> dict[str, Any]:
        return self.outputs(self.league.out, self.ledger, self.league.name, keep_withdrawn=self.keep_withdrawn)


def _deals(league: League, variant: str) -> int:
    return next((v.deals for v in league.variants if v.name == variant), 1)


async def run_ladder(
    ladder: Ladder,
    *,
    tables: int | None = None,
    interval: float = 0.0,
    hook: Callable[[LadderTable], None] | None = None,
    after: Callable[[LadderTable, dict[str, Any]], None] | None = None,
) -> None:
    """Play ``tables`` tables (None: until cancelled), ``interval`` seconds
    apart, re-reading the config between tables and rewriting the standings
    and the report after each (``after`` gets the table and the standings). The paths it hides
    from bots are hidden for this run only (:func:`referee.runtime.sandbox.protection_scope`)."""
    from referee.runtime.sandbox import protection_scope

    with protection_scope():
        await ladder.start()
        while tables is None or ladder.tables_played < tables:
            if ladder.tables_played:
                if interval > 0:
                    await trio.sleep(interval)
                await ladder.reload()
            lt = await ladder.play_table(hook)
            st = ladder.write_outputs()
            if after is not None:
                after(lt, st)


def play_ladder(ladder: Ladder, **kw: Any) -> None:
    """Synchronous entry (``trio.run``), exception groups reduced as in
    :func:`referee.league.runner.play`."""
    try:
        trio_run(lambda: run_ladder(ladder, **kw))
    except BaseExceptionGroup as eg:
        exc = user_facing(eg)
        if exc is eg:
            raise
        raise exc from None


def open_ladder(
    path: str,
    *,
    out: str | None = None,
    keep_withdrawn: bool = False,
    concurrency: int | None = None,
    say: Say = to_stderr,
    outputs: WriteOutputs,
    cluster: Any = None,
) -> Ladder:
    """Load the config, open (or create) its output directory as ``referee
    run`` does (:func:`referee.league.outdir.open_night`: a config that adds or
    removes bots is accepted), and make the :class:`Ladder`. The caller closes
    ``ladder.ledger``. ``outputs`` writes the standings and the report after each table
    (:func:`referee.view.night.write_outputs`)."""
    from referee.league.outdir import open_night
    from referee.league.secret import settle_seed

    league = load_config(path, out=out)
    league, ledger, growth = open_night(league)
    try:
        league = settle_seed(league, ledger)  # a secret night's seed: the ledger's, else drawn now (and staged)
        for line in growth.lines() if growth else []:
            say(line)
        return Ladder(
            Path(path),
            league,
            ledger,
            keep_withdrawn=keep_withdrawn,
            concurrency=concurrency,
            say=say,
            outputs=outputs,
            cluster=cluster,
        )
    except BaseException:
        ledger.close()
        raise
