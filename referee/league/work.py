"""The unit of work of a league night, and the one interface that plays it.

A :class:`Unit` is a share of one table's games, played in order by one set
of bot processes (one per lineup position). It is a plain description: the
lineup (how to start each bot, its session clock), what every game of the
table shares (rules, table size, match format, clock, fault policy), each
game's id, seed and seating, the process reuse mode, and the bots given up
before the night. It holds no open resource and pickles, so it can be sent
to another process or machine.

An :class:`Executor` plays units: ``await executor.play(unit, deliver)``
plays ``unit.games`` in order and calls ``deliver(GameDone(...))`` once per
game, as soon as that game is over. What happens to a finished game (its log
file, its ledger row, progress) is the caller's business
(:mod:`referee.league.runner`). The executor here is
:class:`referee.league.local.LocalExecutor` (trio, bot processes on this
machine); a remote executor returns the log as bytes in :attr:`GameDone.log`.

:class:`UnitMaker` turns a league's scheduled games into units (the runtime
specs for its bots and games).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from referee.errors import UserError
from referee.league.config import League
from referee.league.schedule import ScheduledGame, Table
from referee.rules import Rules
from referee.rules.match import MatchFormat
from referee.runtime import BotSpec, ClockSpec, FaultPolicy, GameResult, GameSpec
from referee.runtime.limits import LimitsError, parse_limits


@dataclass(frozen=True, slots=True)
class Entrant:
    """One bot of a lineup: ``index`` into ``League.bots`` (the config's
    ``bots[index]``), how to start it (``bot``) and its session ``clock`` (the
    league clock with the bot's own overrides; it times the ``hello``)."""

    index: int
    bot: BotSpec
    clock: ClockSpec


@dataclass(frozen=True, slots=True)
class UnitGame:
    """One game of a unit: its id, its deal's seed, and who plays which seat
    (seat ``s`` is played by the process of lineup position ``positions[s]``)."""

    game_id: str
    seed: int
    positions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Unit:
    """A share of one table's games (see the module docstring).

    Every game of a unit has the same ``rules``, ``players``, ``match``,
    ``clock`` and fault ``policy``; :meth:`spec` makes a game's
    :class:`~referee.runtime.GameSpec`. ``own_clocks``: the lineup's bots have
    clocks of their own, so every seat is timed by its bot's (``Entrant.clock``).
    ``reuse``: ``"session"`` keeps each position's process for the unit's
    games up to the next cut in ``fresh`` (a dead one is restarted for the next game); ``"game"`` starts fresh
    processes for every game. ``max_line``: the longest line a bot may write
    (also during ``hello``). ``given_up``: the bots of the lineup (``Entrant.index``) that
    failed the start check under ``[faults] broken_bot = "forfeit"``; they are
    never started, their seats are played by the referee's fallback.
    ``compress``: write the game logs zstandard-compressed (``GAME.jsonl.zst``).
    ``fresh``: the indices into ``games`` before which every process of the
    lineup is replaced by a fresh one (session mode's cuts, see
    :func:`session_order`: no process plays the same deal twice).
    """

    table: str  # the table's key, e.g. "kwartet-4p-t0003"
    lineup: tuple[Entrant, ...]
    games: tuple[UnitGame, ...]
    rules: Rules
    players: int
    match: MatchFormat | None
    clock: ClockSpec
    policy: FaultPolicy
    own_clocks: bool
    reuse: Literal["session", "game"]
    max_line: int
    given_up: frozenset[int] = frozenset()
    compress: bool = False
    fresh: frozenset[int] = frozenset()
    #: per lineup position: the stderr bytes that bot may have copied into this unit's game
    #: logs (its grant of the night's budget, :mod:`referee.league.logbudget`); None: the executor's own
    log_budgets: tuple[int, ...] | None = None

    def spec(self, game: UnitGame) -> GameSpec:
        """What the runtime plays for ``game``."""
        seat_clocks: list[ClockSpec | None] | None = (
            [self.lineup[p].clock for p in game.positions] if self.own_clocks else None
        )
        return GameSpec(
            game_id=game.game_id,
            rules=self.rules,
            players=self.players,
            seed=game.seed,
            match=self.match,
            clock=self.clock,
            policy=self.policy,
            seat_clocks=seat_clocks,
        )


@dataclass(frozen=True, slots=True)
class GameDone:
    """One finished game, as an executor delivers it. ``wall_ms``: how long it
    took to play. ``log``: the game log's bytes when the executor wrote it
    somewhere the caller cannot read (a remote worker; the caller writes it to
    its own ``games/<game_id>.jsonl``, or ``.jsonl.zst`` for compressed bytes,
    and ignores ``result.log_path``); None
    when it is already at ``result.log_path``. ``stderr_logged``: per seat, the bytes of
    its bot's stderr the log copied (charged to the bot's night budget)."""

    game_id: str
    result: GameResult
    wall_ms: float
    log: bytes | None = None
    #: per seat: the bytes of that bot's stderr the game's log copied, charged to its budget
    stderr_logged: tuple[int, ...] = ()


#: what an executor calls once per finished game, before it starts the unit's next game
Deliver = Callable[[GameDone], None]


class Executor(Protocol):
    """Plays units of work (see the module docstring)."""

    async def play(self, unit: Unit, deliver: Deliver) -> None:
        """Play ``unit.games`` in order; call ``deliver`` once per finished game.

        An exception raised by ``deliver`` stops the unit and propagates.
        Raises :class:`referee.errors.UserError` for what stops the night (a
        bot that cannot start at all, a log that cannot be written).
        Cancellation stops the unit at once and leaves no bot process behind.
        """
        ...


def session_order(games: Sequence[ScheduledGame]) -> tuple[list[ScheduledGame], frozenset[int]]:
    """The order in which one set of bot processes plays ``games`` (of one
    table) in session mode, and where its processes are cut: the games by
    seat rotation (stable: deal order within a rotation), and a fresh set of
    processes wherever a game's deal (its seed) was already played by the
    current set. So a process plays at most one rotation of each deal - it
    never holds a hand of a deal it has seen, whatever it remembers - and
    keeps its speed for the deals of one rotation: ``rotations`` sets of
    processes per unit instead of one (``"game"`` mode: one per game).
    Returns the ordered games and the indices before which processes are
    replaced (never 0: the first game starts fresh ones anyway)."""
    ordered = sorted(games, key=lambda g: g.rotation)
    cuts: set[int] = set()
    seen: set[int] = set()
    for i, g in enumerate(ordered):
        if g.seed in seen:
            cuts.add(i)
            seen.clear()
        seen.add(g.seed)
    return ordered, frozenset(cuts)


class UnitMaker:
    """Builds the units of one league: the runtime specs of its bots (built on
    first use and kept) and of its games.

    Raises :class:`UserError` for a bot whose limits do not parse (the config
    loader has checked them already, so this is not expected)."""

    def __init__(self, league: League) -> None:
        self.league = league
        self._entrants: dict[int, Entrant] = {}

    def entrant(self, index: int) -> Entrant:
        """Bot ``index`` of the league, ready to start."""
        found = self._entrants.get(index)
        if found is None:
            b = self.league.bots[index]
            try:
                limits = parse_limits(b.limits)  # the sandbox defaults, then [limits], then the bot's own
            except LimitsError as exc:
                raise UserError(f"bots[{index}].limits: {exc}") from None
            env = b.env
            if env and not (limits.sandbox and limits.clean_env):
                env = {**os.environ, **env}  # without the scrubbed environment, a dict would replace it all
            spec = BotSpec(name=b.name, command=b.command, cwd=b.cwd, env=env, limits=limits, data=b.data)
            found = self._entrants[index] = Entrant(index, spec, b.clock or self.league.clock)
        return found

    def unit(self, table: Table, games: Sequence[ScheduledGame], given_up: frozenset[int] = frozenset()) -> Unit:
        """The unit that plays ``games`` (of ``table``): in this order in
        ``"game"`` mode; in session mode in :func:`session_order`, with its cuts."""
        v = table.variant
        reuse: Literal["session", "game"] = "game" if self.league.reuse == "game" else "session"
        fresh: frozenset[int] = frozenset()
        if self.league.reuse == "session":  # ("table": the old sessions, one per position for the unit)
            games, fresh = session_order(games)
        return Unit(
            table=table.key,
            lineup=tuple(self.entrant(i) for i in table.lineup),
            games=tuple(UnitGame(g.game_id, g.seed, g.positions) for g in games),
            rules=v.rules,
            players=table.size,
            match=None if v.match.kind == "single" else v.match,
            clock=self.league.clock,
            policy=v.policy(table.size),
            own_clocks=any(self.league.bots[i].clock is not None for i in table.lineup),
            reuse=reuse,
            max_line=self.league.faults.max_line,
            given_up=given_up & frozenset(table.lineup),  # only those it seats: an executor has no others
            compress=self.league.compress,
            fresh=fresh,
        )
