"""``referee merge``: combine the output directories of a split league night.

Each input is a league output directory: a shard (``referee run --shard K/N``,
ledger meta ``shard``), an earlier merge (meta ``merged``) or a whole league
(neither; counts as shard 1/1). :func:`merge` checks everything before it
writes anything:

* every input is a league output directory (a readable ``ledger.sqlite`` with
  a stored config), none given twice, none the same folder as ``DIR``;
* every input was played with the same canonical config (the differences are
  listed as for a changed config) and split into the same number of shards,
  and no shard comes from two inputs;
* every game is a game of that config's schedule and of the shard its input
  holds, no game id is in two inputs, and every game's log file is present;
* ``DIR``, if it already holds a ledger, holds a merge of the same league and
  split; a game it already holds must be recorded identically in the input
  (so merging the same inputs again changes nothing, and merging a partial
  set first and the rest later works).

Then it copies every game's log into ``DIR/games/`` (each via a temporary
file and a rename; a log already there with the same size and time is kept),
commits all new ledger rows and the meta entries in one transaction (rows are
copied verbatim except ``log_path``, which points into ``DIR/games/``), and
writes ``standings.json/.csv/.md`` and ``report.html`` exactly as
``referee standings`` and ``referee report`` do. The meta ``merged`` says which
shards are in and whether every planned game is.

Errors: every refusal is a :class:`referee.errors.UserError` and happens
before ``DIR`` is changed. A kill or Ctrl-C while copying leaves at most some
extra log files in ``DIR/games/``; the ledger is committed in one
transaction after the copies, so running the same merge again completes it.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from referee.errors import UserError
from referee.league import schedule as sched
from referee.league.config import SECRET, League, describe_diff, from_canonical, normalize_stored
from referee.league.ledger import LEDGER_NAME, BotInfo, GameRow, Ledger, MergedMeta, config_text, run_lock_held
from referee.league.outdir import WriteOutputs, private
from referee.league.secret import META_KEY as SECRET_KEY
from referee.league.secret import stored_seed
from referee.league.shards import Shard, format_shards, parse_shard, shard_of


@dataclass
class _Input:
    path: Path
    ledger: Ledger
    n: int
    shards: set[int]
    config: dict[str, Any]
    name: str
    kind: str
    running: bool = False
    secret_seed: int | None = None  # a secret night's master seed (referee.league.secret)

    def describe(self) -> str:
        return _describe(self.n, self.shards, self.kind)


@dataclass
class MergeResult:
    """What :func:`merge` did, for the command's report."""

    into: Path
    n: int  # the split: N shards
    shards: list[int]  # shards now in DIR
    added: int  # games new in DIR
    already: int  # games of the inputs DIR already held
    games: int  # games in DIR now
    planned: int  # games of the whole league
    missing_shards: dict[int, int]  # shard -> its planned games (not merged yet)
    incomplete: dict[int, tuple[int, int]]  # merged shard -> (games held, planned)
    running: list[Path] = field(default_factory=list)  # inputs a run was still playing into
    standings: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.games >= self.planned

    @property
    def missing_games(self) -> int:
        return self.planned - self.games


def _shards_of(path: Path, ledger: Ledger) -> tuple[int, set[int], str]:
    """``(N, shards held, kind)`` of an output directory from its ledger meta."""
    merged = ledger.get_meta("merged")
    if merged is not None:
        meta = MergedMeta.parse(merged)
        if meta is None:
            raise UserError(f"{path}: the ledger's merge record is damaged ({merged!r})")
        return meta.of, set(meta.shards), "merged"
    held = ledger.get_meta("shard")
    if held is not None:
        try:
            s = parse_shard(held)
        except UserError:
            raise UserError(f"{path}: the ledger's shard record is damaged ({held!r})") from None
        return s.n, {s.k}, "shard"
    return 1, {1}, "whole"


def _describe(n: int, shards: set[int], kind: str) -> str:
    if kind == "whole":
        return "the whole league (played without --shard)"
    if kind == "shard":
        return f"shard {min(shards)}/{n}"
    return f"the merged shards {format_shards(shards, n)}"


def _open_input(path: Path) -> _Input:
    if not path.exists():
        raise UserError(f"{path}: no such directory; give the output directories of `referee run --shard K/N`")
    if not path.is_dir() or not (path / LEDGER_NAME).is_file():
        raise UserError(
            f"{path}: not a league output directory (no {LEDGER_NAME} in it); "
            "give the output directories of `referee run --shard K/N`"
        )
    ledger = Ledger(path / LEDGER_NAME, create=False)
    config = normalize_stored(ledger.config())  # today's canonical form (e.g. without the name)
    if config is None:
        ledger.close()
        raise UserError(f"{path}: not a league output directory (its ledger stores no config)")
    n, shards, kind = _shards_of(path, ledger)
    name = ledger.get_meta("league") or ""
    try:
        seed = stored_seed(ledger)
    except BaseException:
        ledger.close()
        raise
    return _Input(path, ledger, n, shards, config, name, kind, running=run_lock_held(path), secret_seed=seed)


def _log_source(inp: _Input, row: GameRow) -> Path | None:
    if not row.log_path:
        return None
    p = Path(row.log_path)
    return p if p.is_absolute() else inp.path / p


def _copy_log(src: Path, dst: Path) -> None:
    """Copy one log (temporary file + rename); keep a copy already there with
    the same size and modification time."""
    try:
        a = src.stat()
        try:
            b = dst.stat()
            if a.st_size == b.st_size and a.st_mtime_ns == b.st_mtime_ns:
                return
        except FileNotFoundError:
            pass
        tmp = dst.with_name(dst.name + ".tmp")
        shutil.copy2(src, tmp)
        os.replace(tmp, dst)
    except OSError as exc:
        raise UserError(
            f"cannot copy the game log {src} to {dst}: {exc.strerror or exc}; fix this and run the same merge again"
        ) from None


def merge(inputs: list[Path], into: Path, outputs: WriteOutputs) -> MergeResult:
    """Merge the league output directories ``inputs`` into ``into`` (see the
    module docstring); ``outputs`` writes the merged night's standings and report
    (:func:`referee.view.night.write_outputs`, with the viewer limit of a run). Raises
    :class:`UserError` before changing anything if the inputs do not fit together or do
    not fit ``into``."""
    if not inputs:
        raise UserError("give at least one output directory to merge")
    into = Path(into).resolve()
    seen: dict[Path, str] = {}
    for raw in inputs:
        p = Path(raw).resolve()
        if p in seen:
            raise UserError(f"{raw}: given twice (also as {seen[p]}); give each shard's directory once")
        if p == into:
            raise UserError(f"{raw}: is also the --into directory; merge into a new directory")
        seen[p] = str(raw)
    opened: list[_Input] = []
    try:
        for p in seen:
            opened.append(_open_input(p))
        return _merge(opened, into, outputs)
    finally:
        for inp in opened:
            inp.ledger.close()


class _Found(NamedTuple):
    """A game of an input: its row and its log file (None: the game has no log)."""

    inp: _Input
    row: GameRow
    src: Path | None


@dataclass(frozen=True)
class _Prior:
    """What ``DIR`` held before this merge: its shards and its league name."""

    shards: frozenset[int] = frozenset()
    name: str | None = None


class _ShardOf:
    """The shard (1..n) a ledger row belongs to, from the schedule of ``league``."""

    def __init__(self, league: League, n: int) -> None:
        self.offsets = sched.table_offsets(league)
        self.n = n

    def __call__(self, where: Path, row: GameRow) -> int:
        start, count = self.offsets.get((row.variant, row.size), (0, 0))
        if not 0 <= row.table < count:
            raise UserError(
                f"{where}: game {row.game_id} is not a game of this league's schedule "
                "(a damaged ledger?); remove its row or play that shard again"
            )
        return shard_of(start + row.table, self.n)


def _merge(opened: list[_Input], into: Path, outputs: WriteOutputs) -> MergeResult:
    """Check, then write (see :func:`merge`)."""
    first = opened[0]
    n = _check_fit(opened)
    league = from_canonical(first.config, str(first.path))
    shard_of_row = _ShardOf(league, n)
    found = _collect(opened, shard_of_row)
    prior = _check_target(into, first.config, n, found, opened)
    return _write(into, opened, league, found, prior, shard_of_row, outputs)


def _check_fit(opened: list[_Input]) -> int:
    """Refuse inputs of different configs or splits, or a shard given twice;
    return the split (N)."""
    first = opened[0]
    for inp in opened[1:]:
        if inp.config != first.config:
            raise UserError(
                f"{inp.path} was played with a different config than {first.path} "
                f'("was" is {first.path.name}\'s, "now" is {inp.path.name}\'s):\n'
                f"  {describe_diff(first.config, inp.config)}\n"
                "Only shards of one league (the same config and seed on every machine) can be merged."
            )
    for inp in opened[1:]:
        if inp.n != first.n:
            raise UserError(
                f"{first.path} holds {first.describe()}, but {inp.path} holds {inp.describe()}: only the shards "
                "of one split (the same N in --shard K/N on every machine) can be merged"
            )
    if first.config.get("seed") == SECRET:
        _check_secret(opened)
    n = first.n
    owner: dict[int, Path] = {}
    for inp in opened:
        for s in inp.shards:
            if s in owner:
                raise UserError(f"shard {s}/{n} is in both {owner[s]} and {inp.path}; give each shard once")
            owner[s] = inp.path
    return n


def _check_secret(opened: list[_Input]) -> None:
    """The shards of a secret night: every input holds its seed, and the same one
    (never named in the message: the night may not be over)."""
    for inp in opened:
        if inp.secret_seed is None and inp.ledger.count():
            raise UserError(
                f"{inp.path}: the ledger of a secret night holds no seed (a damaged ledger?); restore it from a copy"
            )
    seeds = {inp.secret_seed for inp in opened if inp.secret_seed is not None}
    if len(seeds) > 1:
        paths = ", ".join(str(inp.path) for inp in opened)
        raise UserError(
            f"the inputs ({paths}) were played with different secret seeds (each machine drew its own, "
            "or was given another --seed-file), so their deals do not belong to one league; play every "
            "shard with the same --seed-file FILE"
        )


def _collect(opened: list[_Input], shard_of_row: _ShardOf) -> list[_Found]:
    """Every game of the inputs; refuse a game in two inputs, in the wrong
    shard, or without its log file."""
    found: list[_Found] = []
    where: dict[str, Path] = {}
    for inp in opened:
        for row in inp.ledger.rows():
            if row.game_id in where:
                raise UserError(
                    f"game {row.game_id} is in both {where[row.game_id]} and {inp.path}: the inputs "
                    "overlap; give each shard's directory once"
                )
            where[row.game_id] = inp.path
            s = shard_of_row(inp.path, row)
            if s not in inp.shards:
                raise UserError(
                    f"{inp.path}: game {row.game_id} belongs to shard {s}/{shard_of_row.n}, but the "
                    f"directory holds shards {format_shards(inp.shards, shard_of_row.n)} "
                    "(a damaged ledger?)"
                )
            src = _log_source(inp, row)
            if src is not None and not src.is_file():
                raise UserError(
                    f"{inp.path}: the log of game {row.game_id} ({row.log_path}) is missing; "
                    "copy the whole output directory, games/ included"
                )
            found.append(_Found(inp, row, src))
    return found


def _check_target(into: Path, config: dict[str, Any], n: int, found: list[_Found], opened: list[_Input]) -> _Prior:
    """Refuse a ``DIR`` that is a file or holds anything but an earlier merge
    of the same league and split (with the same record of every game the
    inputs have too); return what it holds."""
    if into.exists() and not into.is_dir():
        raise UserError(f"--into {into}: is a file; give a directory for the merged league")
    existing = into / LEDGER_NAME
    if not existing.exists():
        return _Prior()
    with Ledger(existing, create=False) as check:
        stored = normalize_stored(check.config())
        held_n, held_shards, kind = _shards_of(into, check)
        if kind == "shard":
            raise UserError(
                f"--into {into}: holds shard {min(held_shards)}/{held_n} played by `referee run`; "
                "merge into a new directory (and give this one as an input)"
            )
        if kind == "whole" and (check.count() or stored is not None):
            raise UserError(
                f"--into {into}: already holds a league played by `referee run`, not a merge; "
                "merge into a new directory"
            )
        if stored is not None and stored != config:
            raise UserError(
                f'--into {into}: already holds a different league ("was" is the one there, "now" the inputs\'):\n'
                f"  {describe_diff(stored, config)}\nMerge into a new directory."
            )
        held_seed = stored_seed(check)
        in_seeds = {inp.secret_seed for inp in opened if inp.secret_seed is not None}
        if held_seed is not None and in_seeds and in_seeds != {held_seed}:
            raise UserError(
                f"--into {into}: already holds shards of this secret night played with another seed; "
                "merge into a new directory"
            )
        if kind == "merged" and held_n != n:
            raise UserError(
                f"--into {into}: holds {_describe(held_n, held_shards, kind)}, but the inputs "
                f"are shards of a split into {n}; merge into a new directory"
            )
        done = check.done_ids()
        for f in found:
            if f.row.game_id in done and check.get(f.row.game_id) != _moved(f.row):
                raise UserError(
                    f"--into {into}: already holds game {f.row.game_id} with a different record than "
                    f"{f.inp.path} (was that shard played again?); merge into a new directory"
                )
        return _Prior(frozenset(held_shards) if kind == "merged" else frozenset(), check.get_meta("league"))


def _bots_meta(ledgers: list[Ledger]) -> str | None:
    """The meta ``bots`` of the merged night: every bot the ledgers' own meta
    ``bots`` name (in the order they first appear), each with the first ``hello``
    recorded for it; None when none of them has one."""
    found: dict[str, BotInfo] = {}
    for led in ledgers:
        for info in BotInfo.parse(led.get_meta("bots")) or []:
            have = found.get(info.name)
            if have is None or (have.hello is None and info.hello is not None):
                found[info.name] = info
    return BotInfo.text(list(found.values())) if found else None


def _write(
    into: Path,
    opened: list[_Input],
    league: League,
    found: list[_Found],
    prior: _Prior,
    shard_of_row: _ShardOf,
    outputs: WriteOutputs,
) -> MergeResult:
    """Copy the logs, commit the new rows and the meta in one transaction, write the outputs."""
    try:
        (into / "games").mkdir(parents=True, exist_ok=True)
        private(into, into / "games")
    except OSError as exc:
        raise UserError(f"--into {into}: cannot create the directory: {exc.strerror or exc}") from None
    n = shard_of_row.n
    first = opened[0]
    with Ledger.in_dir(into, lock=True) as ledger:
        done = ledger.done_ids()
        for f in found:
            if f.src is not None:
                _copy_log(f.src, into / "games" / f.src.name)
        new_rows = [_moved(f.row) for f in found if f.row.game_id not in done]
        shards = sorted(prior.shards | {s for inp in opened for s in inp.shards})
        held = Counter(shard_of_row(into, row) for row in itertools.chain(ledger.rows(), new_rows))
        planned_by = {k: sched.total_games(league, Shard(k, n)) for k in range(1, n + 1)}
        planned, games = sum(planned_by.values()), sum(held.values())
        name = prior.name or first.name or league.name
        merged = MergedMeta(of=n, shards=shards, complete=games >= planned, missing_games=planned - games)
        meta = {"config": config_text(first.config), "league": name, "merged": merged.text()}
        seeds = [inp.secret_seed for inp in opened if inp.secret_seed is not None]
        if seeds:
            meta[SECRET_KEY] = str(seeds[0])
        bots = _bots_meta([ledger, *(inp.ledger for inp in opened)])
        if bots is not None:
            meta["bots"] = bots
        ledger.record_many(new_rows, meta)
        st = outputs(into, ledger, name)
    return MergeResult(
        into=into,
        n=n,
        shards=shards,
        added=len(new_rows),
        already=len(found) - len(new_rows),
        games=games,
        planned=planned,
        missing_shards={k: planned_by[k] for k in range(1, n + 1) if k not in shards},
        incomplete={k: (held[k], planned_by[k]) for k in shards if held[k] < planned_by[k]},
        running=[inp.path for inp in opened if inp.running],
        standings=st,
    )


def _moved(row: GameRow) -> GameRow:
    """The row as the merged ledger records it: its log in ``DIR/games/``."""
    if not row.log_path:
        return row
    return replace(row, log_path=f"games/{Path(row.log_path).name}")
