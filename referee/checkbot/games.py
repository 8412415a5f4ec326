"""check-bot's games: real games through the runtime (session and per-game mode) and self-play."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

import trio

from referee.rules import get_variant

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
PRESETS = ["happy-families", "happy-families-jaques", "authors", "kwartet", "chickens"]

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
    """A check-bot game's id, shaped like a league game's (``kwartet-4p-t0003-d000-r2``:
    variant, table size, table, deal, rotation; :mod:`referee.league.schedule`), so a
    bot cannot tell check-bot from a league night by its game ids. Tables are
    numbered apart per check: the session games from 1, per-game mode from 101,
    self-play from 201 (each game's id is unique within check-bot's log folder)."""
    from referee.league.config import slugify

    return f"{slugify(rules.name)}-{players}p-t{table:04d}-d000-r{rotation % players}"


def _table_sizes(rules: Any) -> list[int]:
    lo, hi = rules.min_players, rules.max_players
    return sorted({lo, max(lo, min(hi, 4)), hi})


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


async def _games(
    command: list[str] | str,
    name: str,
    cwd: str | None,
    report: Report,
    variants: list[Any],
    move_ms: int,
    startup_ms: int,
    grace_ms: int,
    log_dir: Path | None,
    progress: Callable[[str], None],
    limits: Any = None,
    env: dict[str, str] | None = None,
    *,
    bank_ms: int | None = None,
    clock_mode: Literal["wall", "cpu"] = "wall",
    data: tuple[str, ...] = (),
) -> None:
    from referee.core.errors import BotError
    from referee.runtime import BotSession, BotSpec, ClockSpec, GameSpec, open_bots, play_game

    clock = ClockSpec(move_ms=move_ms, startup_ms=startup_ms, grace_ms=grace_ms, bank_ms=bank_ms, mode=clock_mode)
    spec = BotSpec(name=name, command=command, cwd=cwd, env=env, limits=limits, data=data)
    plans = []
    for v in variants:
        rules = get_variant(v)
        plans.append((rules, _table_sizes(rules)))
    max_seats = max(max(sizes) for _, sizes in plans)
    instant_specs = [BotSpec(name=f"instant-{i}", command=[*INSTANT_BOT, str(i)]) for i in range(max_seats - 1)]
    async with open_bots(instant_specs, clock) as lineup:
        nursery = lineup.nursery
        instants = lineup.sessions
        cand: Any = None
        game_no = 0
        for rules, sizes in plans:
            played, problems, decisions = 0, [], 0
            for n in sizes:
                seat = game_no % n
                game_no += 1
                if cand is None or not cand.alive:
                    if cand is not None:
                        await cand.close()
                    try:
                        cand = await BotSession.start(spec, clock, nursery)
                    except BotError as exc:
                        problems.append((f"could not start the bot: {exc}", FIXES["crash"]))
                        cand = None
                        break
                bots = list(instants[: n - 1])
                bots.insert(seat, cand)
                gspec = GameSpec(
                    game_id=game_id(rules, n, game_no, seat),
                    rules=rules,
                    players=n,
                    seed=1000 + game_no,
                    clock=clock,
                )
                progress(f"{rules.name}: {n} seats, seat {seat}")
                result = await play_game(gspec, bots, log_dir)
                played += 1
                decisions += result.think_ms[seat].count
                if any(f.seat == seat for f in result.faults):
                    detail, fix = _describe_faults(
                        result.faults, seat, cand.stderr_tail(), _turns_sent(log_dir, gspec.game_id, seat)
                    )
                    problems.append((f"{n} seats, seat {seat}: {detail}", fix))
                    # its output may be out of step now (a reply still unread): the next game gets a
                    # fresh process, so one mistake is not reported again as stale ids in later games
                    await cand.close()
                    cand = None
                # an instant bot never faults; restart one if it died anyway
                for i, b in enumerate(instants):
                    if not b.alive:
                        await lineup.restart(i)
            label = f"game: {rules.name}"
            if problems:
                more = f" (and {plural(len(problems) - 1, 'more game')})" if len(problems) > 1 else ""
                report.add(label, False, problems[0][0] + more, problems[0][1])
            else:
                report.add(
                    label,
                    True,
                    f"{plural(played, 'game')} at {', '.join(map(str, sizes))} seats, "
                    f"{plural(decisions, 'decision')}, no faults (session mode)",
                )
        if cand is not None:
            await cand.close()
        await _self_play(spec, clock, [rules for rules, _ in plans], instants, nursery, report, log_dir, progress)
        # per-game mode: a fresh process per game
        problems = []
        per_game = [get_variant("kwartet"), get_variant("authors"), get_variant("chickens")]
        for k, rules in enumerate(per_game):
            n = rules.min_players
            seat = k % n
            progress(f"per-game mode: {rules.name}")
            try:
                fresh = await BotSession.start(spec, clock, nursery)
            except BotError as exc:
                problems.append((f"could not start the bot: {exc}", FIXES["crash"]))
                break
            bots = list(instants[: n - 1])
            bots.insert(seat, fresh)
            gid = game_id(rules, n, 101 + k, seat)
            result = await play_game(
                GameSpec(game_id=gid, rules=rules, players=n, seed=77 + k, clock=clock), bots, log_dir
            )
            if any(f.seat == seat for f in result.faults):
                detail, fix = _describe_faults(
                    result.faults, seat, fresh.stderr_tail(), _turns_sent(log_dir, gid, seat)
                )
                problems.append((f"{rules.name}: {detail}", fix))
            await fresh.close()
        if problems:
            report.add("per-game mode", False, problems[0][0], problems[0][1])
        else:
            report.add("per-game mode", True, f"{plural(len(per_game), 'game')}, a fresh process for each")


async def _self_play(
    spec: Any,
    clock: Any,
    variants: list[Any],
    instants: list[Any],
    nursery: trio.Nursery,
    report: Report,
    log_dir: Path | None,
    progress: Callable[[str], None],
) -> None:
    """The self-play check: per ask variant, two copies of the bot (instant bots
    fill the variant's smallest table) and three copies at one table, in session
    mode (a copy that faulted is restarted for the next table). Adds one check
    line, ``self-play`` (none when no ask variant is chosen; skipped when a game
    check failed). The copies are closed (shielded) on the way out, also on
    cancellation."""
    from dataclasses import replace

    from referee.core.errors import BotError
    from referee.runtime import BotSession, FaultPolicy, GameSpec, play_game

    ask_variants = [r for r in variants if r.kind == "ask"]
    name = "self-play"
    if not ask_variants:
        return  # chickens only: no asking in circles, nothing to check
    if any(c.name.startswith("game: ") and not c.ok for c in report.checks):
        report.skip(
            name,
            "not run: fix the failed games above first (self-play needs a bot that plays legal games without faults)",
        )
        return
    policy = FaultPolicy(max_decisions=SELF_PLAY_MAX_DECISIONS)
    problems: list[tuple[str, str]] = []
    tables: list[str] = []  # "kwartet x2": the tables played
    copies: list[Any] = []

    async def ensure(k: int) -> None:
        """``copies[:k]`` are running copies of the bot (raises BotError if one cannot start)."""
        for i in range(k):
            if i < len(copies) and copies[i].alive:
                continue
            if i < len(copies):
                await copies[i].close()
            fresh = await BotSession.start(replace(spec, name=f"{spec.name}-{i + 1}"), clock, nursery)
            if i < len(copies):
                copies[i] = fresh
            else:
                copies.append(fresh)

    try:
        for rules in ask_variants:
            for k in sorted({2, min(3, rules.max_players)}):
                n = max(k, rules.min_players)
                if n > rules.max_players or n - k > len(instants):
                    continue
                progress(f"self-play: {rules.name}, {k} copies")
                try:
                    await ensure(k)
                except BotError as exc:
                    problems.append((f"could not start a copy of the bot: {exc}", FIXES["crash"]))
                    return
                bots = [*copies[:k], *instants[: n - k]]
                gid = game_id(rules, n, 201 + len(tables))
                tables.append(f"{rules.name} x{k}")
                result = await play_game(
                    GameSpec(game_id=gid, rules=rules, players=n, seed=SELF_PLAY_SEED, clock=clock, policy=policy),
                    bots,
                    log_dir,
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
                        result.faults, seat, bots[seat].stderr_tail(), _turns_sent(log_dir, gid, seat)
                    )
                    problems.append((f"{who}: {detail}", fix))
                    for c in copies[:k]:  # perhaps out of step now: fresh copies for the next table
                        await c.close()
                elif result.reason == "stalled":
                    problems.append(
                        (
                            f"{who}: the hand stalled: {rules.stall} asks in a row moved no card (the "
                            "copies kept asking for cards they had just been told were not there); "
                            f"scores {_scores(result.scores)}",
                            SELF_PLAY_FIX,
                        )
                    )
                elif result.reason != "complete":
                    problems.append(
                        (
                            f"{who}: the hand was aborted: no end after {SELF_PLAY_MAX_DECISIONS} "
                            "decisions (the copies ask in circles, or hand the same cards back and "
                            "forth)",
                            SELF_PLAY_FIX,
                        )
                    )
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


def _scores(scores: Sequence[float]) -> str:
    return "[" + ", ".join(f"{s:g}" for s in scores) + "]"
