"""check-bot's games: real games through the runtime (session and per-game mode) and self-play."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import trio

from referee.core.errors import BotError
from referee.rules import VARIANTS, get_variant, kind_of
from referee.runtime import BotLineup, BotSession, BotSpec, ClockSpec, FaultPolicy, GameSpec, open_bots, play_game
from referee.runtime.spec import max_decisions_for

from .fixes import FIXES, fix_for
from .report import Report, plural

ROOT = Path(__file__).resolve().parents[2]
INSTANT_BOT = [sys.executable, str(ROOT / "protocol" / "sdk.py")]

#: custom ask variants check-bot also plays (a bot must read the rules from ``start``)
CUSTOM_VARIANTS: list[dict[str, Any]] = [
    {
        "name": "generations",
        "families": ["Ox", "Elk", "Yak", "Emu", "Gnu"],
        "members": ["I", "II", "III", "IV", "V", "VI"],
        "ask": "card",
        "miss": "next",
        "please": True,
        "stock": 6,
        "first": "dealer",
        "players": [2, 6],
    },
    {
        "name": "tens",
        "families": ["10", "1", "2", "3", "4"],
        "members": ["a", "b", "c"],
        "ask": "family",
        "miss": "asked",
        "please": False,
        "stock": 3,
        "players": [2, 5],
    },
]
#: every preset of every registered kind (referee.rules.registry)
PRESETS: list[str] = list(VARIANTS)

#: self-play: the hand a bot plays against copies of itself is aborted after this many decisions
#: (a long normal hand takes a few hundred; see docs/PERFORMANCE.md "Hand lengths")
SELF_PLAY_MAX_DECISIONS = 2000
#: self-play: the seed of every table (seed 1 is issue 10's endless kwartet game)
SELF_PLAY_SEED = 1
SELF_PLAY_FIX = (
    "remember misses; vary target or card: a seat that just said it lacks a card still lacks it "
    "until a card moves to it, so do not ask it again; ask another seat or for another card "
    "(the example bot in docs/WRITING-A-BOT.md section 1 shows how)"
)


def game_id(rules: Any, players: int, table: int, rotation: int = 0) -> str:
    """A check-bot game's id, made as a league game's (``kwartet-4p-t0003-d000-r2``:
    :func:`referee.league.schedule.game_id` of the table's key), so a bot cannot
    tell check-bot from a league night by its game ids. Tables are numbered apart
    per check: the probes' table 0, the session games from 1, per-game mode from
    101, self-play from 201 (each game's id is unique within check-bot's log folder)."""
    from referee.league.config import slugify
    from referee.league.schedule import game_id as league_game_id
    from referee.league.schedule import table_key

    return league_game_id(table_key(slugify(rules.name), players, table), 0, rotation % players)


def helper_name(i: int) -> str:
    """The name of check-bot's ``i``-th helper seat (the SDK's random bot), named as a
    league's entries are (``random-01``, as tournaments/big-field.toml names its random
    bots): a bot cannot tell check-bot's table from a league's by the seat names."""
    return f"random-{i + 1:02d}"


def copy_name(name: str, i: int) -> str:
    """The seat name of the ``i``-th copy (0-based) of the candidate in self-play: the first
    keeps its name, the others are numbered as a league's entries of one author are
    (``mybot-02``)."""
    return name if i == 0 else f"{name}-{i + 1:02d}"


def _table_sizes(rules: Any) -> list[int]:
    """The table sizes check-bot plays ``rules`` at, as its kind registers them (by default its
    smallest, 4 and its largest)."""
    return kind_of(rules).check_sizes(rules)


def _turns_sent(log_dir: Path | None, game_id: str, seat: int) -> dict[int, str]:
    """The ``decide`` of every turn the game log shows sent to ``seat``, by turn id
    ({} without a log)."""
    if log_dir is None:
        return {}
    decides: dict[int, str] = {}
    try:
        with open(Path(log_dir) / f"{game_id}.jsonl", "rb") as f:
            for raw in f:
                if b'"out"' not in raw or b'"turn"' not in raw:
                    continue
                try:
                    rec = json.loads(raw)
                except ValueError:
                    continue
                if rec.get("to") != seat:
                    continue
                for m in rec.get("out") or []:
                    if isinstance(m, dict) and m.get("type") == "turn" and isinstance(m.get("id"), int):
                        decides[m["id"]] = str(m.get("decide"))
    except OSError:
        return {}
    return decides


def _describe_faults(
    faults: Sequence[Any], seat: int, tail: str, decides: dict[int, str] | None = None
) -> tuple[str, str]:
    """The first fault of ``seat`` (the cause; stale replies after a malformed
    or timed-out reply are its knock-on effects and said to be) and its fix."""
    decides = decides or {}
    mine = [f for f in faults if f.seat == seat]
    first = mine[0]
    detail = f"{first.fault}: {first.detail}"
    rest = mine[1:]
    if rest:
        stale = [f for f in rest if f.fault == "stale"]
        if first.fault in ("malformed", "timeout") and len(stale) == len(rest):
            detail += (
                f" (then {plural(len(stale), 'stale reply', 'stale replies')}: knock-on effects of that "
                "first problem, which go away with it)"
            )
        else:
            detail += f" (+{plural(len(rest), 'more fault')})"
    fix = fix_for(
        first.fault,
        first.problem,
        decides.get(first.decision_id) if first.decision_id is not None else None,
        sorted(set(decides.values())),
    )
    if first.fault == "crash" and tail and "stderr" not in detail:
        detail += f"; its stderr ends: {tail.strip()[-300:]!r}"
    if first.fault == "crash":
        # what its output says about the cause (the memory limit, a class or module not found...)
        from referee.runtime.runtimes import crash_fix

        fix = crash_fix(first.detail, tail, fix)
    return detail, fix


@dataclass
class GameOptions:
    """What check-bot's games need of the bot and the night it would play in: its spec's
    parts, the clock's and the fault policy's (as :func:`referee.checkbot.check_bot` takes them)."""

    command: list[str] | str
    name: str
    cwd: str | None
    move_ms: int
    startup_ms: int
    grace_ms: int
    limits: Any = None
    env: dict[str, str] | None = None
    bank_ms: int | None = None
    clock_mode: Literal["wall", "cpu"] = "wall"
    data: tuple[str, ...] = ()
    retries: int = 0
    max_line: int = 65536
    max_decisions: int | None = None

    def clock(self) -> ClockSpec:
        return ClockSpec(
            move_ms=self.move_ms,
            startup_ms=self.startup_ms,
            grace_ms=self.grace_ms,
            bank_ms=self.bank_ms,
            mode=self.clock_mode,
        )

    def spec(self) -> BotSpec:
        return BotSpec(
            name=self.name, command=self.command, cwd=self.cwd, env=self.env, limits=self.limits, data=self.data
        )

    def policy(self, rules: Any, n: int) -> FaultPolicy:
        """The games' fault policy: the options', else a league's defaults for the variant and size."""
        return FaultPolicy(
            retries=self.retries,
            max_line=self.max_line,
            max_decisions=self.max_decisions or max_decisions_for(rules, n),
        )

    def self_play_policy(self) -> FaultPolicy:
        return FaultPolicy(
            retries=self.retries, max_line=self.max_line, max_decisions=self.max_decisions or SELF_PLAY_MAX_DECISIONS
        )


def _helper_spec(i: int) -> BotSpec:
    return BotSpec(name=helper_name(i), command=[*INSTANT_BOT, str(i)])


@dataclass
class _Table:
    """What the games share: the options, the candidate's spec and clock, the report, where
    logs go, the progress line and the lineup of helpers (instant bots, started once)."""

    opts: GameOptions
    spec: BotSpec
    clock: ClockSpec
    report: Report
    log_dir: Path | None
    progress: Callable[[str], None]
    helpers: BotLineup

    async def start(self, spec: BotSpec | None = None) -> BotSession:
        """A session of the candidate (or of ``spec``) in the lineup's nursery; its owner closes it."""
        return await BotSession.start(spec or self.spec, self.clock, self.helpers.nursery, max_line=self.opts.max_line)

    async def revive_helpers(self) -> None:
        """An instant bot never faults; restart one if it died anyway."""
        for i, b in enumerate(self.helpers.sessions):
            if not b.alive:
                await self.helpers.restart(i)

    async def play(self, rules: Any, n: int, seat: int, table: int, seed: int, bots: list[Any]) -> Any:
        """One game of ``rules`` at ``n`` seats; returns (its result, the candidate seat's fault text or None)."""
        gid = game_id(rules, n, table, seat)
        spec = GameSpec(
            game_id=gid, rules=rules, players=n, seed=seed, clock=self.clock, policy=self.opts.policy(rules, n)
        )
        result = await play_game(spec, bots, self.log_dir)
        if not any(f.seat == seat for f in result.faults):
            return result, None
        return result, _describe_faults(
            result.faults, seat, bots[seat].stderr_tail(), _turns_sent(self.log_dir, gid, seat)
        )


async def _games(
    opts: GameOptions,
    report: Report,
    variants: list[Any],
    log_dir: Path | None,
    progress: Callable[[str], None],
) -> None:
    """check-bot's games: every variant at its table sizes in session mode, self-play, then
    per-game mode; the helper seats are one lineup of instant bots (:func:`open_bots`)."""
    clock = opts.clock()
    plans = []
    for v in variants:
        rules = get_variant(v)
        plans.append((rules, _table_sizes(rules)))
    max_seats = max(max(sizes) for _, sizes in plans)
    async with open_bots([_helper_spec(i) for i in range(max_seats - 1)], clock) as helpers:
        table = _Table(opts, opts.spec(), clock, report, log_dir, progress, helpers)
        await _session_games(table, plans)
        await _self_play(table, [rules for rules, _ in plans], opts.self_play_policy())
        await _per_game(table)


async def _session_games(table: _Table, plans: list[tuple[Any, list[int]]]) -> None:
    """Session mode: one process of the candidate plays every variant's tables (a fresh one
    after a fault, so one mistake is not reported again as stale ids in later games)."""
    cand: BotSession | None = None
    game_no = 0
    try:
        for rules, sizes in plans:
            played, problems, decisions = 0, [], 0
            for n in sizes:
                seat = game_no % n
                game_no += 1
                if cand is None or not cand.alive:
                    if cand is not None:
                        await cand.close()
                    try:
                        cand = await table.start()
                    except BotError as exc:
                        problems.append((f"could not start the bot: {exc}", FIXES["crash"]))
                        cand = None
                        break
                bots: list[Any] = list(table.helpers.sessions[: n - 1])
                bots.insert(seat, cand)
                table.progress(f"{rules.name}: {n} seats, seat {seat}")
                result, faulted = await table.play(rules, n, seat, game_no, 1000 + game_no, bots)
                played += 1
                decisions += result.think_ms[seat].count
                if faulted is not None:
                    problems.append((f"{n} seats, seat {seat}: {faulted[0]}", faulted[1]))
                    # its output may be out of step now (a reply still unread): the next game gets a
                    # fresh process, so one mistake is not reported again as stale ids in later games
                    await cand.close()
                    cand = None
                await table.revive_helpers()
            label = f"game: {rules.name}"
            if problems:
                more = f" (and {plural(len(problems) - 1, 'more game')})" if len(problems) > 1 else ""
                table.report.add(label, False, problems[0][0] + more, problems[0][1])
            else:
                table.report.add(
                    label,
                    True,
                    f"{plural(played, 'game')} at {', '.join(map(str, sizes))} seats, "
                    f"{plural(decisions, 'decision')}, no faults (session mode)",
                )
    finally:
        if cand is not None:
            with trio.CancelScope(shield=True):
                await cand.close()


async def _per_game(table: _Table) -> None:
    """Per-game mode: a fresh process of the candidate for each game."""
    problems: list[tuple[str, str]] = []
    per_game = [get_variant("kwartet"), get_variant("authors"), get_variant("chickens")]
    for k, rules in enumerate(per_game):
        n = rules.min_players
        seat = k % n
        table.progress(f"per-game mode: {rules.name}")
        try:
            fresh = await table.start()
        except BotError as exc:
            problems.append((f"could not start the bot: {exc}", FIXES["crash"]))
            break
        try:
            bots: list[Any] = list(table.helpers.sessions[: n - 1])
            bots.insert(seat, fresh)
            _result, faulted = await table.play(rules, n, seat, 101 + k, 77 + k, bots)
            if faulted is not None:
                problems.append((f"{rules.name}: {faulted[0]}", faulted[1]))
        finally:
            with trio.CancelScope(shield=True):
                await fresh.close()
    if problems:
        table.report.add("per-game mode", False, problems[0][0], problems[0][1])
    else:
        table.report.add("per-game mode", True, f"{plural(len(per_game), 'game')}, a fresh process for each")


async def _self_play(table: _Table, variants: list[Any], policy: FaultPolicy) -> None:
    """The self-play check: per ask variant, two copies of the bot (instant bots
    fill the variant's smallest table) and three copies at one table, in session
    mode (a copy that faulted is restarted for the next table). Adds one check
    line, ``self-play`` (none when no ask variant is chosen; skipped when a game
    check failed). The copies are closed (shielded) on the way out, also on
    cancellation."""
    report = table.report
    ask_variants = [r for r in variants if kind_of(r).style == "ask"]
    name = "self-play"
    if not ask_variants:
        return  # chickens only: no asking in circles, nothing to check
    if any(c.name.startswith("game: ") and not c.ok for c in report.checks):
        report.skip(
            name,
            "not run: fix the failed games above first (self-play needs a bot that plays legal games without faults)",
        )
        return
    problems: list[tuple[str, str]] = []
    tables: list[str] = []  # "kwartet x2": the tables played
    copies: list[BotSession] = []
    try:
        for rules in ask_variants:
            for k in sorted({2, min(3, rules.max_players)}):
                n = max(k, rules.min_players)
                if n > rules.max_players or n - k > len(table.helpers.sessions):
                    continue
                table.progress(f"self-play: {rules.name}, {k} copies")
                try:
                    await _copies(table, copies, k)
                except BotError as exc:
                    problems.append((f"could not start a copy of the bot: {exc}", FIXES["crash"]))
                    return
                number = 201 + len(tables)
                tables.append(f"{rules.name} x{k}")
                problem = await _self_play_table(table, rules, n, k, copies, policy, number)
                if problem is not None:
                    problems.append(problem)
    finally:
        with trio.CancelScope(shield=True):
            for c in copies:
                await c.close()
        if problems:
            more = f" (and {plural(len(problems) - 1, 'more table')})" if len(problems) > 1 else ""
            report.add(name, False, problems[0][0] + more, problems[0][1])
        elif tables:
            report.add(
                name,
                True,
                f"{plural(len(tables), 'table')} with 2 or 3 copies of the bot in "
                f"{plural(len(ask_variants), 'ask variant')}: every hand ended by the rules",
            )


async def _copies(table: _Table, copies: list[BotSession], k: int) -> None:
    """``copies[:k]`` are running copies of the bot (raises BotError if one cannot start)."""
    for i in range(k):
        if i < len(copies) and copies[i].alive:
            continue
        if i < len(copies):
            await copies[i].close()
        fresh = await table.start(replace(table.spec, name=copy_name(table.spec.name, i)))
        if i < len(copies):
            copies[i] = fresh
        else:
            copies.append(fresh)


async def _self_play_table(
    table: _Table, rules: Any, n: int, k: int, copies: list[BotSession], policy: FaultPolicy, number: int
) -> tuple[str, str] | None:
    """One self-play table: ``k`` copies and ``n - k`` instant bots; its problem, if any."""
    bots: list[Any] = [*copies[:k], *table.helpers.sessions[: n - k]]
    gid = game_id(rules, n, number)
    result = await play_game(
        GameSpec(game_id=gid, rules=rules, players=n, seed=SELF_PLAY_SEED, clock=table.clock, policy=policy),
        bots,
        table.log_dir,
    )
    who = (
        f"{rules.name}, {k} copies"
        + (f" and {plural(n - k, 'instant bot')}" if n > k else "")
        + f", seed {SELF_PLAY_SEED}"
    )
    mine = [f for f in result.faults if f.seat < k]
    if mine:
        seat = mine[0].seat
        detail, fix = _describe_faults(
            result.faults, seat, bots[seat].stderr_tail(), _turns_sent(table.log_dir, gid, seat)
        )
        for c in copies[:k]:  # perhaps out of step now: fresh copies for the next table
            await c.close()
        return f"{who}: {detail}", fix
    if result.reason == "stalled":
        return (
            f"{who}: the hand stalled: {rules.stall} asks in a row moved no card (the "
            "copies kept asking for cards they had just been told were not there); "
            f"scores {_scores(result.scores)}",
            SELF_PLAY_FIX,
        )
    if result.reason != "complete":
        return (
            f"{who}: the hand was aborted: no end after {policy.max_decisions} "
            "decisions (the copies ask in circles, or hand the same cards back and "
            "forth)",
            SELF_PLAY_FIX,
        )
    return None


def _scores(scores: Sequence[float]) -> str:
    return "[" + ", ".join(f"{s:g}" for s in scores) + "]"
