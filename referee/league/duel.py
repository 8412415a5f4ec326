"""Duels: bot A against bot B on the same deals in mirrored seats, with a sequential test.

``referee duel`` builds a :class:`DuelSpec` and runs a :class:`Duel`; the
statistics are :mod:`referee.league.sprt`'s (the unit, the Elo estimate and the
SPRT are explained there and in docs/DUEL.md). This module only decides who
sits where and plays the games, asking the runtime the league's one question:
"play this game spec with these sessions, give me the result".

The deal pair
=============

Pair ``d`` (0-based) is dealt from the seed ``derive(seed, f"pair:{d}")`` and
played twice. Its seats come from :func:`seat_pair`: the seat pairs ``(i, j)``
with ``i < j`` in order, ``(0, 1), (0, 2), ..., (K-2, K-1)``, cycled; A sits in
``i`` and B in ``j`` in the first game, A in ``j`` and B in ``i`` in the second.
Over any ``K (K - 1) / 2`` consecutive pairs A and B sit in every ordered pair of
seats once, so each of them holds every seat position equally often. The other
``K - 2`` seats are filled by the field bots, in seat order, and keep them (and
so their hands and their own streams of play) in both games of the pair.

A game's score for A is :func:`referee.league.sprt.game_score` of the game's
ranks with forfeited seats moved to the bottom (as in the standings): 1 if A
finished above B, 1/2 level, 0 below. A pair with an aborted game has no
result and is dropped whole (its second game is not played when the first was
aborted).

Processes: each of the ``concurrency`` tables keeps two sessions per lineup
position (A, B, each field seat) in two bot pools across its games
(:func:`referee.league.pool.open_pool`), one for the first game of every pair
and one for the second, so no process plays a deal twice; a session that crashed or timed out is
restarted for the next game, one that cannot restart stays dead and its seats
forfeit (the fallback plays them, as in every game). Every process is closed
on the way out, also on cancellation (Ctrl-C).

On a cluster (``referee host --cluster``/``--workers``: the site's duels), :meth:`Duel.run` with an
``executor`` (:meth:`referee.league.cluster.Cluster.executor`) plays the same games as units of work
(:mod:`referee.league.work`): a unit of ``pairs_per_unit`` deal pairs whose first games are played by
one set of processes and whose second games by a fresh one (:meth:`Duel.unit`: again no process plays
a deal twice), ``concurrency`` units at once. A pair whose first game was aborted is dropped as here,
its second game played all the same (its faults are counted). A log the executor delivers as bytes
is written to ``log_dir``.

Errors: :func:`check_start` raises :class:`referee.errors.UserError` for a bot
that does not start and answer ``hello``; :meth:`Duel.run` raises ``UserError``
when a game log cannot be written, or a bot that passed the check cannot start
at all later. Finished pairs stay counted in the duel either way.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import trio

from referee.errors import UserError, leaves, user_facing
from referee.league.pool import BotStartFailed, open_pool
from referee.league.preflight import start_check
from referee.league.sprt import DuelStats, Sprt, SprtState, Verdict, game_score
from referee.league.standings import effective_ranks
from referee.league.work import Entrant, Executor, GameDone, Unit, UnitGame
from referee.rules import derive
from referee.runtime import BotSpec, ClockSpec, FaultPolicy, GameResult, GameSpec, play_game

#: the roles of the lineup positions after A and B
FIELD = "field"


def seat_pair(players: int, index: int) -> tuple[int, int]:
    """The seats ``(i, j)`` of deal pair ``index`` at a ``players``-seat table:
    A plays ``i`` and B ``j`` in the pair's first game, the other way round in
    its second (see the module docstring)."""
    if players < 2:
        raise ValueError(f"a duel needs at least 2 seats, not {players}")
    pairs = [(i, j) for i in range(players) for j in range(i + 1, players)]
    return pairs[index % len(pairs)]


@dataclass(frozen=True, slots=True)
class DuelGame:
    """One game of a deal pair: its spec, the lineup position of each seat
    (0 is A, 1 is B, 2.. the field bots) and the seats of A and B."""

    spec: GameSpec
    positions: tuple[int, ...]
    seat_a: int
    seat_b: int


@dataclass(frozen=True)
class DuelSpec:
    """What a duel plays. ``field`` holds one bot per field seat (``players - 2``
    of them; their names must differ from each other and from A's and B's).
    ``max_pairs``: the most deal pairs played; ``test``: the SPRT (``None``:
    play ``max_pairs`` and estimate only). ``concurrency``: pairs played at
    once, each at its own table with its own processes. ``log_dir``: where game
    logs go (``None``: none are written).

    Raises ``ValueError`` saying what is wrong for a table size the rules do
    not allow, a field of the wrong size, repeated names, or counts below 1.
    """

    rules: Any
    players: int
    a: BotSpec
    b: BotSpec
    field: tuple[BotSpec, ...]
    seed: int
    max_pairs: int
    test: Sprt | None = None
    match: Any = None
    clock: ClockSpec = dataclasses.field(default_factory=ClockSpec)
    policy: FaultPolicy = dataclasses.field(default_factory=FaultPolicy)
    concurrency: int = 1
    log_dir: Path | None = None

    def __post_init__(self) -> None:
        r = self.rules
        if not r.min_players <= self.players <= r.max_players:
            raise ValueError(f"{r.name} is for {r.min_players}-{r.max_players} players, not {self.players}")
        if len(self.field) != self.players - 2:
            raise ValueError(f"a {self.players}-seat duel needs {self.players - 2} field bot(s), got {len(self.field)}")
        names = [b.name for b in self.lineup]
        if len(set(names)) != len(names):
            raise ValueError(f"the bots of a duel need different names, got {names}")
        if self.max_pairs < 1 or self.concurrency < 1:
            raise ValueError("a duel plays at least one deal pair, at least one at a time")

    @property
    def lineup(self) -> tuple[BotSpec, ...]:
        """Lineup position 0 is A, 1 is B, 2.. the field seats."""
        return (self.a, self.b, *self.field)

    @property
    def roles(self) -> tuple[str, ...]:
        return ("A", "B", *(FIELD for _ in self.field))

    @property
    def id_prefix(self) -> str:
        """The game ids' common start: ``duel-<variant>-<K>p-<seed>``."""
        from referee.league.config import slugify

        return f"duel-{slugify(self.rules.name)}-{self.players}p-{self.seed}"

    def entrants(self) -> list[Entrant]:
        return [Entrant(i, bot, self.clock) for i, bot in enumerate(self.lineup)]

    def pair_seed(self, index: int) -> int:
        return derive(self.seed, f"pair:{index}")

    def pair(self, index: int) -> tuple[DuelGame, DuelGame]:
        """The two games of deal pair ``index``."""
        i, j = seat_pair(self.players, index)
        others = [s for s in range(self.players) if s not in (i, j)]
        seed = self.pair_seed(index)
        games = []
        for g, (sa, sb) in enumerate(((i, j), (j, i)), start=1):
            positions = [0] * self.players
            positions[sa], positions[sb] = 0, 1
            for k, s in enumerate(others):
                positions[s] = 2 + k
            spec = GameSpec(
                game_id=f"{self.id_prefix}-{index + 1:05d}-{g}",
                rules=self.rules,
                players=self.players,
                seed=seed,
                match=self.match,
                clock=self.clock,
                policy=self.policy,
            )
            games.append(DuelGame(spec, tuple(positions), sa, sb))
        return games[0], games[1]


class BotTally(msgspec.Struct, kw_only=True):
    """One lineup position's figures: games played, games forfeited (it
    faulted and the fallback played on), faults by kind, think time."""

    role: str  # "A", "B" or "field"
    name: str
    command: list[str] | str
    games: int = 0
    forfeits: int = 0
    faults: dict[str, int] = msgspec.field(default_factory=dict)
    decisions: int = 0
    think_ms: float = 0.0  # total over its decisions

    @property
    def fault_count(self) -> int:
        return sum(self.faults.values())


class DuelSummary(msgspec.Struct, kw_only=True):
    """The duel's summary (``referee duel`` prints it as JSON). ``result``:
    ``"H1"``, ``"H0"``, ``"undecided"`` (MAX games played, the test did not
    decide), ``"complete"`` (no test: every pair played), ``"interrupted"``
    (Ctrl-C) or ``"error"``. ``games`` counts every game played, the games of
    dropped pairs (an aborted game) too; ``wins``/``draws``/``losses`` are A's
    games against B in the counted pairs."""

    variant: str
    players: int
    seed: int
    match: str | None
    concurrency: int
    max_games: int
    result: str
    games: int
    pairs: int
    dropped_pairs: int
    wins: int
    draws: int
    losses: int
    stats: DuelStats
    bots: list[BotTally]
    wall_s: float
    log_dir: str | None


#: exit status of each result of ``referee duel``
EXIT_STATUS = {"H1": 0, "complete": 0, "H0": 1, "error": 2, "undecided": 3, "interrupted": 130}


async def check_start(spec: DuelSpec) -> None:
    """Start every distinct bot of the duel once (they must answer ``hello``
    within the clock's ``startup_ms``), then close it again. Raises
    :class:`UserError` naming the first that failed, its role and why."""
    seen: set[str] = set()
    entrants = []
    for e in spec.entrants():
        key = repr((e.bot.command, e.bot.cwd, e.bot.env))
        if key not in seen:
            seen.add(key)
            entrants.append(e)
    _, failures = await start_check(entrants, max_line=spec.policy.max_line, limit=len(entrants))
    if failures:
        raise start_error(spec, failures[0])


def start_error(spec: DuelSpec, exc: BotStartFailed) -> UserError:
    """The duel's wording of a bot that could not start: its role, its name and why."""
    bot = spec.lineup[exc.index]
    what = {"A": "--bot A", "B": "--bot B"}.get(spec.roles[exc.index], "--field bot")
    first = str(exc).split("\n")[0]
    why = first.partition("could not start: ")[2] or first
    return UserError(f"{what} '{bot.name}' could not start: {why}; try: referee check-bot -- COMMAND")


@dataclass
class Duel:
    """A running duel: :meth:`run` plays it; the figures are readable at any
    moment (also after an interruption) through :meth:`summary`.
    ``on_game`` is called (synchronously) after every game and every counted
    pair, for a live display."""

    spec: DuelSpec
    on_game: Callable[[Duel], None] | None = None
    state: SprtState = dataclasses.field(init=False)
    tallies: list[BotTally] = dataclasses.field(init=False)
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    started: float = dataclasses.field(default_factory=time.monotonic)
    _next: int = dataclasses.field(default=0, init=False)

    def __post_init__(self) -> None:
        self.state = SprtState(self.spec.test)
        self.tallies = [
            BotTally(role=r, name=b.name, command=b.command)
            for r, b in zip(self.spec.roles, self.spec.lineup, strict=True)
        ]

    @property
    def verdict(self) -> Verdict:
        return self.state.verdict

    def _more(self) -> bool:
        return self.state.verdict == "continue" and self._next < self.spec.max_pairs

    async def run(
        self,
        executor: Executor | None = None,
        lineup: Sequence[Entrant] | None = None,
        *,
        pairs_per_unit: int = 1,
        given_up: frozenset[int] = frozenset(),
    ) -> Verdict:
        """Play pairs until the test decides or ``max_pairs`` were started; the
        pairs under way when the test decides are finished (they are counted,
        but cannot change the verdict). Returns the verdict. Raises
        :class:`UserError` (see the module docstring); Ctrl-C and cancellation
        propagate, every bot process closed.

        ``executor``: play on it (a cluster's), ``lineup`` the spec's lineup as the league's
        entrants (their ``index`` the league's, their ``bot`` the spec's, in lineup order), in units
        of ``pairs_per_unit`` pairs (:meth:`unit`, with the league's ``given_up`` bots); None: here,
        with pools of processes."""
        if executor is not None and (lineup is None or len(lineup) != len(self.spec.lineup)):
            raise ValueError("a duel played by an executor needs its lineup as entrants, one per position")
        tables = min(self.spec.concurrency, self.spec.max_pairs)
        try:
            async with trio.open_nursery() as nursery:
                for _ in range(tables):
                    if executor is None:
                        nursery.start_soon(self._table)
                    else:
                        assert lineup is not None
                        nursery.start_soon(self._units, executor, tuple(lineup), max(1, pairs_per_unit), given_up)
        except BaseExceptionGroup as group:
            exc = user_facing(group)
            if isinstance(exc, UserError):
                raise exc from None  # the tables' one error, not wrapped in the nursery's group
            raise
        return self.state.verdict

    def _score(self, game: DuelGame, result: GameResult) -> float | None:
        """Count a played game; A's score in it (None: it was aborted)."""
        self._tally(game, result)
        if result.reason == "aborted":
            return None
        ranks = effective_ranks(result.scores, result.ranks, result.forfeits)
        return game_score(ranks, game.seat_a, game.seat_b)

    def _settle(self, index: int, scores: list[float]) -> None:
        """Pair ``index`` is over: its two scores to the test, or dropped (an aborted game)."""
        if len(scores) == 2:
            self.state.submit(index, scores)
            for s in scores:
                self.wins += s == 1.0
                self.draws += s == 0.5
                self.losses += s == 0.0
        else:
            self.state.drop(index)
        self._notify()

    async def _table(self) -> None:
        spec = self.spec
        # one pool per game of a pair: a process plays the first (or the second) game of each
        # pair, so it never meets a deal twice (docs/SECURITY.md, "Duplicate play that memory cannot beat")
        async with (
            open_pool(spec.entrants(), max_line=spec.policy.max_line) as first,
            open_pool(spec.entrants(), max_line=spec.policy.max_line) as second,
        ):
            while self._more():
                index = self._next
                self._next += 1
                scores: list[float] = []
                for pool, game in zip((first, second), spec.pair(index), strict=False):
                    try:
                        bots = await pool.seat(game.positions)
                    except (BotStartFailed, BaseExceptionGroup) as exc:  # a bot that never started at this table
                        failed = [e for e in leaves(exc) if isinstance(e, BotStartFailed)]
                        if not failed:
                            raise
                        raise start_error(spec, failed[0]) from None
                    try:
                        result = await play_game(game.spec, bots, spec.log_dir)
                    except OSError as exc:
                        raise UserError(
                            f"{spec.log_dir}: cannot write the log of {game.spec.game_id}: {exc.strerror or exc}"
                        ) from None
                    score = self._score(game, result)
                    if score is None:
                        break
                    scores.append(score)
                    self._notify()
                self._settle(index, scores)

    def unit(
        self, first: int, pairs: int, lineup: Sequence[Entrant], given_up: frozenset[int] = frozenset()
    ) -> tuple[Unit, list[tuple[DuelGame, DuelGame]]]:
        """Deal pairs ``first`` .. ``first + pairs - 1`` as one unit of work, and the pairs: their
        first games, then (from a fresh set of processes) their second games."""
        spec = self.spec
        played = [spec.pair(i) for i in range(first, first + pairs)]
        games = [(first + i, pair[k]) for k in (0, 1) for i, pair in enumerate(played)]
        unit = Unit(
            table=f"{spec.id_prefix}-{first + 1:05d}",
            lineup=tuple(lineup),
            games=tuple(UnitGame(g.spec.game_id, spec.pair_seed(i), g.positions) for i, g in games),
            rules=spec.rules,
            players=spec.players,
            match=spec.match,
            clock=spec.clock,
            policy=spec.policy,
            own_clocks=False,
            reuse="session",
            max_line=spec.policy.max_line,
            given_up=given_up & frozenset(e.index for e in lineup),
            fresh=frozenset({pairs}),  # the second games: other processes than the first games'
        )
        return unit, played

    async def _units(
        self, executor: Executor, lineup: tuple[Entrant, ...], per_unit: int, given_up: frozenset[int]
    ) -> None:
        spec = self.spec
        while self._more():
            first = self._next
            pairs = min(per_unit, spec.max_pairs - first)
            self._next += pairs
            unit, played = self.unit(first, pairs, lineup, given_up)
            by_id = {g.spec.game_id: (i, g) for i, pair in enumerate(played) for g in pair}
            scores: list[list[float]] = [[] for _ in played]
            aborted: set[int] = set()

            def deliver(
                done: GameDone,
                by_id: dict[str, tuple[int, DuelGame]] = by_id,
                scores: list[list[float]] = scores,
                aborted: set[int] = aborted,
            ) -> None:
                i, game = by_id[done.game_id]
                if done.log is not None and spec.log_dir is not None:
                    self._write_log(done.game_id, done.log)
                score = self._score(game, done.result)
                if score is None:
                    aborted.add(i)
                elif i not in aborted:
                    scores[i].append(score)
                self._notify()

            await executor.play(unit, deliver)
            for i in range(len(played)):
                self._settle(first + i, [] if i in aborted else scores[i])

    def _write_log(self, game_id: str, data: bytes) -> None:
        """A log an executor delivered as bytes, written to ``log_dir`` (``.jsonl.zst``: zstandard bytes)."""
        from referee.runtime.gamelog import is_zstd, log_name

        assert self.spec.log_dir is not None
        path = self.spec.log_dir / log_name(game_id, is_zstd(data))
        try:
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        except OSError as exc:
            raise UserError(f"{self.spec.log_dir}: cannot write the log of {game_id}: {exc.strerror or exc}") from None

    def _tally(self, game: DuelGame, result: GameResult) -> None:
        self.games += 1
        for seat, pos in enumerate(game.positions):
            t = self.tallies[pos]
            t.games += 1
            t.forfeits += seat in result.forfeits
            think = result.think_ms[seat] if seat < len(result.think_ms) else None
            if think is not None:
                t.decisions += think.count
                t.think_ms += think.total_ms
        for f in result.faults:
            if 0 <= f.seat < len(game.positions):
                t = self.tallies[game.positions[f.seat]]
                t.faults[f.fault] = t.faults.get(f.fault, 0) + 1

    def _notify(self) -> None:
        if self.on_game is not None:
            self.on_game(self)

    def summary(self, result: str | None = None) -> DuelSummary:
        """The figures so far; ``result`` overrides the one the state says
        (``"interrupted"``, ``"error"``)."""
        spec = self.spec
        if result is None:
            v = self.state.verdict
            result = v if v != "continue" else "undecided" if spec.test is not None else "complete"
        match = spec.match
        match_text = (
            None
            if match is None or match.kind == "single"
            else (f"fixed:{match.hands}" if match.kind == "fixed" else f"race:{match.target}")
        )
        return DuelSummary(
            variant=spec.rules.name,
            players=spec.players,
            seed=spec.seed,
            match=match_text,
            concurrency=spec.concurrency,
            max_games=2 * spec.max_pairs,
            result=result,
            games=self.games,
            pairs=self.state.units,
            dropped_pairs=self.state.dropped,
            wins=self.wins,
            draws=self.draws,
            losses=self.losses,
            stats=self.state.stats(),
            bots=list(self.tallies),
            wall_s=round(time.monotonic() - self.started, 3),
            log_dir=str(spec.log_dir) if spec.log_dir is not None else None,
        )


def field_seats(field_bots: Sequence[BotSpec], seats: int, taken: Sequence[str]) -> tuple[BotSpec, ...]:
    """``seats`` field bots from ``field_bots``, repeated in order to fill them;
    a name already seated (or one of ``taken``: A's and B's) gets ``#2``,
    ``#3``... (as ``referee play`` names repeated bots)."""
    if seats > 0 and not field_bots:
        raise ValueError("no field bots to fill the other seats")
    used = set(taken)
    out = []
    for k in range(seats):
        bot = field_bots[k % len(field_bots)]
        name, n = bot.name, 1
        while name in used:
            n += 1
            name = f"{bot.name}#{n}"
        used.add(name)
        out.append(dataclasses.replace(bot, name=name))
    return tuple(out)
