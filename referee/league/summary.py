"""What a night is, besides its standings: the header of the report and the notes of every standings output.

:func:`summarize` reads it from an open ledger (and, for ledgers written before the meta ``bots``
existed, from the first game log of each bot): the league's name, seed and stored config, the
shard or merge, the referee version, every bot with its command and its ``hello`` answer, games
planned (:class:`referee.league.night.NightPlan`: the stored config, its epochs and top-ups, the
withdrawn bots and shards) and played (planned games; ladder games counted apart), per variant,
stalled and aborted counts, and the dates of the first and last game. :func:`plan_counts` is the
schedule count alone (also used by ``referee serve``). :func:`notes` words the
incomplete/aborted/split notes that the terminal standings, ``standings.md`` and ``report.html`` all show.

Errors: none for a readable ledger; a stored config that cannot be rebuilt (e.g. written by another
version) gives ``planned = None`` ("planned: unknown") rather than an error.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.league.ledger import BotInfo, GameRow, Ledger, MergedMeta, run_lock_held

if TYPE_CHECKING:
    from referee.league.night import NightPlan


@dataclass
class NightSummary:
    league: str
    out: str
    referee: str
    seed: int | str | None = None  # the master seed as it may be shown ("secret" until a secret night is complete)
    #: a grown secret night's later epochs' secrets (epoch 1, 2, ...), shown with ``seed`` (else empty)
    epoch_seeds: list[int] = field(default_factory=list)
    config: dict[str, Any] | None = None
    shard: str | None = None
    merged: MergedMeta | None = None
    bots: list[BotInfo] = field(default_factory=list)
    planned: int | None = None
    played: int = 0  # planned games in the ledger, aborted ones included (all games, if the plan is unknown)
    ladder: int = 0  # ladder games in the ledger (referee ladder: not planned)
    played_per_variant: dict[str, int] = field(default_factory=dict)
    stalled: int = 0
    aborted: int = 0
    first: float | None = None  # time the first game finished (Unix seconds)
    last: float | None = None
    running: bool = False  # a `referee run` holds the directory's lock right now

    @property
    def ladder_only(self) -> bool:
        """A folder that ``referee ladder`` played into, and ``referee run`` never (no planned game yet)."""
        return self.ladder > 0 and self.played == 0

    @property
    def incomplete(self) -> bool:
        return self.planned is not None and self.played < self.planned and not self.ladder_only

    @property
    def complete(self) -> bool:
        """Every planned game of the night is played (the report's Complete banner)."""
        return self.planned is not None and self.played >= self.planned

    @property
    def missing(self) -> int:
        return max(0, (self.planned or 0) - self.played)


def plan_counts(
    config: dict[str, Any] | None, meta: Callable[[str], str | None], where: str = "ledger"
) -> tuple[int | None, dict[str, int]]:
    """Games planned in all and per variant by a ledger's stored config and meta
    (``meta(key)``: its epochs, withdrawn bots, shards;
    :class:`referee.league.night.NightPlan`); ``(None, {})`` when the config is
    absent or cannot be rebuilt."""
    night = night_plan(config, meta, where)
    if night is None:
        return None, {}
    return night.total(), night.per_variant()


def night_plan(config: dict[str, Any] | None, meta: Callable[[str], str | None], where: str) -> NightPlan | None:
    """The ledger's :class:`~referee.league.night.NightPlan` as the standings measure it (a shard's
    ledger: that shard's games; a merge: the whole night's), None when its config is absent or
    cannot be rebuilt."""
    if not config:
        return None
    from referee.league.night import NightPlan

    try:
        night = NightPlan.of(config, meta, where)
    except Exception:  # noqa: BLE001 - an unreadable config: shown as "planned: unknown", never an error
        return None
    return dataclasses.replace(night, shards=(None,)) if meta("merged") is not None else night


def _header_bots(out: Path, rows: list[GameRow], names: list[str]) -> list[BotInfo]:
    """Each bot's command and hello from the header of the first log it played in (for ledgers
    written before the meta ``bots``)."""
    from referee.runtime.gamelog import read_log_bytes

    found: dict[str, BotInfo] = {}
    for row in rows:
        if len(found) == len(names):
            break
        if not row.log_path or all(b in found for b in row.bots):
            continue
        path = Path(row.log_path) if Path(row.log_path).is_absolute() else out / row.log_path
        try:
            if path.suffix == ".jsonl":
                with open(path, "rb") as f:
                    first = f.readline()
            else:
                first = read_log_bytes(path.read_bytes()).split(b"\n", 1)[0]
            header = json.loads(first)
        except (OSError, ValueError):
            continue
        for seat in header.get("seats") or []:
            bot = seat.get("bot")
            if isinstance(bot, str) and bot not in found:
                found[bot] = BotInfo(name=bot, command=seat.get("command") or "", hello=seat.get("hello"))
    return [found.get(n) or BotInfo(name=n, command="") for n in names]


def summarize(out: Path, ledger: Ledger, rows: list[GameRow] | None = None) -> NightSummary:
    """The night in ``out`` (see the module docstring). ``rows``: the ledger's rows when the caller
    has read them already."""
    from referee import __version__

    out = Path(out)
    rows = list(ledger.rows()) if rows is None else rows
    config = ledger.config()
    shard = ledger.get_meta("shard")
    merged_text = ledger.get_meta("merged")
    s = NightSummary(
        league=ledger.get_meta("league") or out.name,
        out=str(out),
        referee=__version__,
        config=config,
        shard=shard,
        merged=MergedMeta.parse(merged_text) if merged_text else None,
        running=run_lock_held(out),
    )
    from referee.league.night import ladder_number, shown_epoch_seeds, shown_seed

    s.seed = shown_seed(ledger)
    s.epoch_seeds = shown_epoch_seeds(ledger) or []
    night = night_plan(config, ledger.get_meta, str(ledger.path))
    if night is not None:
        s.planned = night.total()
    gone = set(night.league.withdrawn) if night is not None else set()
    names: list[str] = []
    for row in rows:
        if ladder_number(row.game_id) is not None:
            s.ladder += 1
        elif night is None or (night.holds(row.game_id) and not gone.intersection(row.bots)):
            s.played += 1
            s.played_per_variant[row.variant] = s.played_per_variant.get(row.variant, 0) + 1
        s.stalled += row.reason == "stalled"
        s.aborted += row.reason == "aborted"
        if row.finished:
            s.first = row.finished if s.first is None else min(s.first, row.finished)
            s.last = row.finished if s.last is None else max(s.last, row.finished)
        for b in row.bots:
            if b not in names:
                names.append(b)
    stored = BotInfo.parse(ledger.get_meta("bots"))
    if stored is not None:
        s.bots = stored
    else:
        cfg_names = [b.get("name") for b in (config or {}).get("bots", []) if isinstance(b, dict)]
        order = [n for n in cfg_names if isinstance(n, str)] + [n for n in names if n not in cfg_names]
        s.bots = _header_bots(out, rows, order)
    return s


def when_text(s: NightSummary) -> str:
    """The night's date(s) in UTC: ``"2026-03-01 20:01 to 20:14 UTC"``; ``""`` without games."""
    if s.first is None or s.last is None:
        return ""
    a = datetime.fromtimestamp(s.first, UTC)
    b = datetime.fromtimestamp(s.last, UTC)
    end = b.strftime("%H:%M") if a.date() == b.date() else b.strftime("%Y-%m-%d %H:%M")
    return f"{a.strftime('%Y-%m-%d %H:%M')} to {end} UTC"


def notes(s: NightSummary) -> list[str]:
    """The notes every standings output shows: an incomplete night, aborted and stalled games, a
    shard or an incomplete merge. Plain sentences, most important first."""
    out: list[str] = []
    if s.incomplete:
        again = "it is still running" if s.running else "run the same `referee run` command again to play the rest"
        out.append(
            f"INCOMPLETE: {s.played} of {s.planned} planned games played ({s.missing} missing; {again}). "
            "These standings cover the games played so far."
        )
    elif s.planned is None:
        out.append(f"{s.played} games played (the number planned is unknown: the stored config cannot be read).")
    if s.ladder:
        played = (
            "no planned game of the config's schedule is played yet"
            if s.ladder_only
            else f"{s.played} of {s.planned} planned games played besides them"
        )
        out.append(
            f"{s.ladder} ladder game{'s' * (s.ladder != 1)} (referee ladder: tables chosen as the night went on, "
            f"not part of the planned schedule; counted in the standings); {played}."
        )
    if s.aborted:
        out.append(
            f"{s.aborted} game{'s were' if s.aborted != 1 else ' was'} aborted (no result: not counted in "
            "the standings; listed with the reason why)."
        )
    if s.stalled:
        out.append(
            f"{s.stalled} game{'s' if s.stalled != 1 else ''} stalled (an ask hand ended by the stalemate "
            "rule, scored as it stood): counted like any other."
        )
    if s.shard:
        out.append(
            f"This folder holds shard {s.shard} only: these are that shard's standings "
            "(combine the shards with referee merge OUT1 OUT2 ... --into DIR)."
        )
    if s.merged is not None and not s.merged.complete:
        out.append(f"An incomplete merge: shards {', '.join(map(str, s.merged.shards))} of {s.merged.of}.")
    return out
