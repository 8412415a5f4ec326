"""Loading and resolving a config into a :class:`League` (and a stored config back into one)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from referee.errors import UserError

from .bots import (
    _check_ceiling,
    _check_league_limits,
    _check_linked_cwds,
    _clock_spec,
    _refused_by_competition,
    _resolve_bot,
)
from .canonical import (
    is_strict,
)
from .context import (
    _Resolving,
)
from .decode import (
    decode_config,
)
from .league import (
    League,
)
from .schema import (
    SECRET,
    SEED_LIMIT,
    LeagueConfig,
)
from .variants import (
    _resolve_variant,
    _schedule_table,
)


def from_canonical(canonical: dict[str, Any], where: str) -> League:
    """Rebuild the schedule-relevant League of a canonical config stored in a
    ledger (``schedule_only``: this machine's paths and limits are not checked).
    Raises :class:`UserError` naming ``where`` if it does not decode."""
    try:
        cfg = msgspec.convert(canonical, type=LeagueConfig)
    except msgspec.ValidationError as exc:
        raise UserError(
            f"{where}: the stored config cannot be read ({exc}); was it written by another referee version?"
        ) from None
    return resolve(cfg, Path(where) / "stored-config.toml", source=f"{where} (stored config)", schedule_only=True)


def load_config(path: str | os.PathLike[str], *, out: str | None = None) -> League:
    """Read, decode and check a league config.

    ``out`` overrides the config's output directory (relative to the current
    directory, as a command-line path). Raises :class:`UserError` on any
    mistake, naming the file and the key path.
    """
    p = Path(path)
    source = str(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{source}: no such config file") from None
    except OSError as exc:
        raise UserError(f"{source}: cannot read the config file: {exc.strerror}") from None
    cfg = decode_config(data, source)
    if is_strict(cfg) and cfg.seed == 0 and "seed" not in msgspec.toml.decode(data):
        cfg = msgspec.structs.replace(cfg, seed=SECRET)  # the competition preset's secret seed
    return resolve(cfg, p, source=source, out=out)


def resolve(
    cfg: LeagueConfig, path: Path, *, source: str | None = None, out: str | None = None, schedule_only: bool = False
) -> League:
    """Check a decoded config and resolve it into a :class:`League`.

    ``schedule_only=True`` skips the checks that depend on this machine (bot
    working directories, resource limits): enough to rebuild the schedule of
    a config stored in a ledger played elsewhere (``referee merge``); such a
    League must not be used to play. Raises one :class:`UserError` naming
    ``source`` (default: ``path``) and the key path of every mistake.
    """
    ctx = _Resolving(source or str(path), path.resolve().parent, schedule_only)
    limits_ok = _check_top(cfg, ctx)
    names: dict[str, int] = {}
    bots = tuple(_resolve_bot(cfg, i, names, ctx, limits_ok) for i in range(len(cfg.bots)))
    if not schedule_only:
        _check_linked_cwds(cfg, bots, ctx)
    top = _schedule_table(cfg.schedule, "schedule", cfg.schedule.kind or "round-robin", cfg, ctx)
    slugs: dict[str, int] = {}
    variants = [_resolve_variant(cfg, i, slugs, ctx, top) for i in range(len(cfg.variants))]
    ctx.problems.raise_if_any()
    return League(
        path=path.resolve(),
        config_dir=ctx.config_dir,
        name=cfg.name or path.stem,
        seed=cfg.seed if isinstance(cfg.seed, int) else None,  # a secret seed is read from the ledger
        out=_out_dir(cfg, path, ctx.config_dir, out),
        concurrency=cfg.concurrency or os.cpu_count() or 1,
        reuse=cfg.reuse,
        fill=cfg.fill,
        clock=_clock_spec(cfg.clock),
        faults=cfg.faults,
        bots=bots,
        variants=tuple(v for v in variants if v is not None),
        raw=cfg,
    )


def _check_top(cfg: LeagueConfig, ctx: _Resolving) -> bool:
    """The league-wide keys: bots and variants present, concurrency, clock, seed,
    faults, the league's ``[limits]``. Returns whether those limits are valid."""
    err = ctx.err
    with ctx.check():
        if not cfg.bots:
            raise UserError(f"{ctx.source}: no bots: add at least one [[bots]] table with a name and a command")
    with ctx.check():
        if not cfg.variants:
            raise UserError(f'{ctx.source}: no variants: add at least one [[variants]] table, e.g. name = "kwartet"')
    with ctx.check():
        if cfg.concurrency is not None and cfg.concurrency < 1:
            raise err("concurrency", "must be at least 1")
    with ctx.check():
        if cfg.clock.move_ms < 1:
            raise err("clock.move_ms", "must be at least 1 (milliseconds)")
    with ctx.check():
        if cfg.clock.startup_ms < 1:
            raise err("clock.startup_ms", "must be at least 1 (milliseconds)")
    with ctx.check():
        if cfg.clock.bank_ms is not None and cfg.clock.bank_ms < 1:
            raise err("clock.bank_ms", "must be at least 1 (milliseconds), or left out for no bank")
    with ctx.check():
        if isinstance(cfg.seed, int) and not 0 <= cfg.seed < SEED_LIMIT:
            raise err(
                "seed",
                f"must be a whole number from 0 to 2**64 - 1 ({SEED_LIMIT - 1}), as for "
                f"referee play --seed; got {cfg.seed}",
            )
    with ctx.check():
        _check_ceiling(cfg.clock.wall_ceiling_ms, cfg.clock.move_ms, "clock.wall_ceiling_ms", "clock.move_ms", err)
    with ctx.check():
        if cfg.faults.retries < 0:
            raise err("faults.retries", "must be 0 or more")
    with ctx.check():
        if cfg.faults.max_decisions is not None and cfg.faults.max_decisions < 1:
            raise err(
                "faults.max_decisions",
                "must be at least 1 (a hand still running after that many decisions "
                "is aborted), or left out for the automatic cap",
            )
    with ctx.check():
        if cfg.faults.max_line < 64:
            raise err("faults.max_line", "must be at least 64 (bytes)")
    if is_strict(cfg) and not ctx.schedule_only:  # (a stored config was checked when it was stored)
        with ctx.check():
            if cfg.reuse == "table":
                raise err(
                    "reuse",
                    'reuse = "table" is refused by the competition preset ([competition] strict = true, implied '
                    "by require_sandbox = true), which lets no bot process play the same deal twice: use "
                    '"session" (the default) or "game"',
                )
        with ctx.check():
            if cfg.seed != SECRET:
                raise err(
                    "seed",
                    f"a fixed seed ({cfg.seed}) is refused by the competition preset ([competition] strict = "
                    'true, implied by require_sandbox = true), which plays with seed = "secret" (drawn at the '
                    "first run, revealed at the end): remove the seed",
                )
    if ctx.schedule_only:
        return True
    limits_ok = False
    with ctx.check():
        _check_league_limits(cfg.limits, err)
        limits_ok = True
    if is_strict(cfg):
        with ctx.check():
            _refused_by_competition(cfg.limits, "limits", err)
    return limits_ok


def _out_dir(cfg: LeagueConfig, path: Path, config_dir: Path, out: str | None) -> Path:
    """The output directory: ``out`` (a command-line path), else the config's
    ``out`` (relative to the config file), else ``out/<config name>`` next to it."""
    if out is not None:
        return Path(out).resolve()
    if cfg.out is not None:
        return (config_dir / cfg.out).resolve()
    return (config_dir / "out" / path.stem).resolve()
