"""Resolving ``[[bots]]``: commands, folders, clocks, resource limits and runtime presets."""

from __future__ import annotations

import os
from typing import Any

import msgspec

from referee.core.spec import ClockSpec

from .canonical import (
    is_strict,
)
from .context import (
    ErrorAt,
    _command,
    _Resolving,
)
from .league import (
    Bot,
)
from .schema import (
    BotConfig,
    ClockConfig,
    LeagueConfig,
)

#: what the competition preset refuses in a limits table: key -> (the refused values, why)
_COMPETITION_REFUSES: dict[str, tuple[tuple[Any, ...], str]] = {
    "sandbox": (("basic", "none", False), "runs every bot in bubblewrap only"),
    "require_sandbox": ((False,), "runs every bot in bubblewrap only"),
    "network": ((True,), "runs the bots without network"),
    "writable": ((True,), "gives no bot a writable folder (what a bot writes must not outlive its process)"),
}


def _refused_by_competition(table: dict[str, Any] | None, where: str, err: ErrorAt) -> None:
    """Raise ``err`` for the first key of a limits ``table`` that undoes the competition preset."""
    for key, (values, why) in _COMPETITION_REFUSES.items():
        if key not in (table or {}):
            continue
        value = (table or {})[key]
        if any(value is v if isinstance(v, bool) else value == v for v in values):
            shown = f'"{value}"' if isinstance(value, str) else str(value).lower()
            raise err(
                f"{where}.{key}",
                f"{key} = {shown} is refused by the competition preset ([competition] strict = true, "
                f"implied by require_sandbox = true), which {why}; remove it "
                "(or set [competition] strict = false for a night that is no competition)",
            )


def _resolve_bot(cfg: LeagueConfig, i: int, names: dict[str, int], ctx: _Resolving, limits_ok: bool) -> Bot:
    """``bots[i]``: its name (unique: ``names`` holds the earlier ones), working
    directory, clock overrides, limits and commands (each mistake recorded)."""
    b = cfg.bots[i]
    where = f"bots[{i}]"
    err = ctx.err
    with ctx.check():
        if not b.name.strip():
            raise err(f"{where}.name", "must not be empty")
    with ctx.check():
        if b.name in names:
            raise err(
                f"{where}.name", f"duplicate bot name '{b.name}' (also bots[{names[b.name]}]); names must be unique"
            )
    names.setdefault(b.name, i)
    cwd = (ctx.config_dir / b.cwd).resolve() if b.cwd is not None else ctx.config_dir
    with ctx.check():
        if not cwd.is_dir() and not ctx.schedule_only:
            raise err(f"{where}.cwd", f"directory {cwd} does not exist (paths are relative to the config file)")
    data = tuple(str((ctx.config_dir / d).resolve()) for d in b.data)
    for j, d in enumerate(data):
        with ctx.check():
            if not os.path.isdir(d) and not ctx.schedule_only:
                what = "is not a folder" if os.path.exists(d) else "does not exist"
                raise err(
                    f"{where}.data[{j}]",
                    f"{d} {what} (data = [...] takes folders the bot may read, relative to the config file)",
                )
    clock = _bot_clock(cfg, b, where, ctx)
    limits = None
    env = dict(b.env) if b.env else None  # extra variables; the runtime's sandbox adds a minimal base
    if not ctx.schedule_only and limits_ok:
        with ctx.check():
            limits, env = _runtime_preset(cfg, b, where, err)
    command: Any = None
    build: Any = None
    with ctx.check():
        command = _command(b.command, ctx.config_dir, f"{ctx.source}: {where}.command")
    with ctx.check():
        build = _command(b.build, ctx.config_dir, f"{ctx.source}: {where}.build") if b.build is not None else None
    return Bot(
        name=b.name,
        command=command,
        cwd=str(cwd),
        env=env,
        build=build,
        clock=clock,
        limits=limits,
        data=data,
    )


def _check_linked_cwds(cfg: LeagueConfig, bots: tuple[Bot, ...], ctx: _Resolving) -> None:
    """A ``cwd`` reached through a link (``cwd = "bots/a/peek"``, ``peek`` a link to
    ``../b``) must not lead to another bot's folder, into it or around it (bots that
    name the same folder without a link share it, see docs/SECURITY.md)."""
    from referee.runtime.sandbox import bot_folders

    folders = [
        bot_folders(b.command, b.cwd, named_cwd=c.cwd is not None) if b.command is not None else []
        for b, c in zip(bots, cfg.bots, strict=True)
    ]
    for i, (b, c) in enumerate(zip(bots, cfg.bots, strict=True)):
        if c.cwd is None or os.path.normpath(os.path.join(ctx.config_dir, c.cwd)) == b.cwd:
            continue
        for j, other in enumerate(bots):
            for f in folders[j] if j != i else []:
                if b.cwd == f or b.cwd.startswith(f + "/") or f.startswith(b.cwd + "/"):
                    with ctx.check():
                        raise ctx.err(
                            f"bots[{i}].cwd",
                            f"{c.cwd} leads by a link to {b.cwd}, "
                            + ("the folder" if b.cwd == f else "into or around the folder")
                            + f" {f} of bot '{other.name}'; give every bot a folder of its own",
                        )


def _clock_spec(c: ClockConfig, overrides: dict[str, Any] | None = None) -> ClockSpec:
    """The runtime clock of ``[clock]``, with a bot's ``overrides`` (the keys it gives) on top."""
    data: dict[str, Any] = msgspec.structs.asdict(c)
    if overrides:
        data.update(overrides)
    return ClockSpec(**data)


def _bot_clock(cfg: LeagueConfig, b: BotConfig, where: str, ctx: _Resolving) -> ClockSpec | None:
    """A bot's own clock (the league clock with its overrides on top; None without
    overrides), its overrides checked against the league clock."""
    clock = {k: v for k, v in msgspec.to_builtins(b.clock).items() if v is not None} if b.clock else {}
    for k, v in clock.items():
        with ctx.check():
            if isinstance(v, int) and v < 1:
                raise ctx.err(f"{where}.clock.{k}", "must be at least 1 (milliseconds)")
    if "move_ms" in clock or "wall_ceiling_ms" in clock:
        own = "wall_ceiling_ms" in clock
        with ctx.check():
            _check_ceiling(
                clock.get("wall_ceiling_ms", cfg.clock.wall_ceiling_ms),
                clock.get("move_ms", cfg.clock.move_ms),
                f"{where}.clock.wall_ceiling_ms" if own else f"{where}.clock.move_ms",
                f"{where}.clock.move_ms" if "move_ms" in clock else "clock.move_ms",
                ctx.err,
                inherited=None if own else "clock.wall_ceiling_ms",
            )
    return _clock_spec(cfg.clock, clock) if clock else None


def _check_ceiling(
    ceiling: int | None, move_ms: int, where: str, move_key: str, err: ErrorAt, inherited: str | None = None
) -> None:
    """A wall ceiling (the wall limit per decision of the cpu clock) must be at
    least 1 ms and not below the move limit it bounds."""
    if ceiling is None:
        return
    if inherited is not None:
        if ceiling < move_ms:
            raise err(
                where,
                f"{move_ms} is above the league's {inherited} ({ceiling}), which bounds every "
                f"decision; give this bot its own clock.wall_ceiling_ms (at least {move_ms})",
            )
        return
    if ceiling < 1:
        raise err(where, "must be at least 1 (milliseconds), or left out for the default (3 x move_ms)")
    if ceiling < move_ms:
        raise err(
            where,
            f"{ceiling} is below {move_key} ({move_ms}): the wall ceiling bounds every decision, "
            f"so it must be at least the move limit (or leave it out for 3 x move_ms)",
        )


def _runtime_preset(
    cfg: LeagueConfig, b: BotConfig, where: str, err: ErrorAt
) -> tuple[dict[str, Any], dict[str, str] | None]:
    """A bot's merged limits table and its env, with its ``runtime`` preset applied
    (``referee.runtime.runtimes``: the preset's limits between the league's and the
    bot's, its variables under the bot's ``env``)."""
    from referee.runtime.limits import parse_limits
    from referee.runtime.runtimes import UnknownRuntime, apply_runtime, runtime_env

    try:
        own = apply_runtime(b.runtime, cfg.limits, b.limits)
    except UnknownRuntime as exc:
        raise err(f"{where}.runtime", str(exc)) from None
    limits = _check_limits(cfg.limits, own, b.cwd is not None, f"{where}.limits", err, is_strict(cfg))
    return limits, runtime_env(b.runtime, parse_limits(limits), dict(b.env) if b.env else None)


def _check_limits(
    league: dict[str, Any] | None,
    bot: dict[str, Any] | None,
    cwd_named: bool,
    where: str,
    err: ErrorAt,
    strict: bool = False,
) -> dict[str, Any]:
    """Check the league's ``[limits]`` and a bot's ``limits`` (see
    ``referee.runtime.limits.parse_limits``); return the bot's merged table
    (a bot whose config names a ``cwd`` runs there, not in a temporary folder).
    ``strict``: the competition preset, which refuses what undoes it and turns on
    bubblewrap only, no network, no writable folder."""
    from referee.runtime.limits import LimitsError, parse_limits
    from referee.runtime.sandbox import limits_problem

    try:
        parse_limits(league)
    except LimitsError as exc:
        raise err(f"limits.{exc.key}" if exc.key else "limits", exc.message) from None
    if strict:
        _refused_by_competition(bot, where, err)
    merged = {**(league or {}), **(bot or {})}
    if cwd_named and "temp_workdir" not in (bot or {}):
        merged["temp_workdir"] = False
    if strict:
        merged.update(require_sandbox=True, network=False, writable=False)
    try:
        problem = limits_problem(parse_limits(merged))
    except LimitsError as exc:
        raise err(f"{where}.{exc.key}" if exc.key else where, exc.message) from None
    if problem:
        raise err(where, problem)
    return merged


def _check_league_limits(league: dict[str, Any] | None, err: ErrorAt) -> None:
    """Check the league's ``[limits]`` table on its own (raises ``err(...)``)."""
    from referee.runtime.limits import LimitsError, parse_limits

    try:
        parse_limits(league)
    except LimitsError as exc:
        raise err(f"limits.{exc.key}" if exc.key else "limits", exc.message) from None
