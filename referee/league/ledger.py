"""The results ledger: one SQLite file (WAL mode) per league output directory.

``OUT/ledger.sqlite`` holds:

* ``meta``: the league's canonical config (JSON), the schema version, the
  league name, the bots with their commands and ``hello`` answers from the
  start check (``bots``, :class:`BotInfo`), and for split leagues ``shard`` (``"K/N"``, written by
  ``referee run --shard K/N``) or ``merged`` (:class:`MergedMeta` as JSON,
  written by ``referee merge``).
* ``games``: one row per finished game, keyed by the game id (the primary key,
  so a game can never be recorded twice). Each row is committed in its own
  transaction together with its log file name, scores, ranks, win shares,
  forfeits, faults and think-time statistics.

Crash safety: the runtime writes the game log first, then the league commits
the row. A kill at any moment therefore loses at most the games in flight; on
resume those are played again and their logs are overwritten.

The run lock: a ledger opened with ``lock=True`` holds an exclusive ``flock``
on ``OUT/.lock`` until it is closed (or the process exits, also on kill -9),
so two runs never play into one ledger at once. Meta entries can be *staged*
(:meth:`Ledger.stage_meta`) and written later in one transaction
(:meth:`Ledger.commit_staged`): a league run stages its config, name and
shard when it opens the ledger and commits them only once its bots have
passed the start check.

Integrity: opening a ledger checks it first (:func:`check_db`): SQLite's
``quick_check`` (every page of the file is read: a truncated file or garbage
in the middle is found here, not in the middle of a night) and the schema (the
tables and columns above, nothing else). The ledger file is made ``0600`` (it
may hold a secret seed, :mod:`referee.league.secret`); SQLite gives its
``-wal`` and ``-shm`` files the same mode.

Errors: a file that is not a ledger, a damaged one (one sentence saying what
is wrong and how to recover), or a ledger of a newer schema, raises
:class:`referee.errors.UserError`, as does a run lock held by another run;
``sqlite3`` errors while writing propagate.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import msgspec

from referee.errors import UserError
from referee.fileio import transaction

SCHEMA_VERSION = 1
LEDGER_NAME = "ledger.sqlite"
LOCK_NAME = ".lock"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    game_id   TEXT PRIMARY KEY,
    variant   TEXT NOT NULL,
    size      INTEGER NOT NULL,
    tbl       INTEGER NOT NULL,
    deal      INTEGER NOT NULL,
    rotation  INTEGER NOT NULL,
    seed      TEXT,               -- 64-bit unsigned, as decimal text
    bots      TEXT NOT NULL,      -- JSON: bot name per seat
    scores    TEXT NOT NULL,      -- JSON: per seat
    ranks     TEXT NOT NULL,
    win_shares TEXT NOT NULL,
    forfeits  TEXT NOT NULL,      -- JSON: seats
    faults    TEXT NOT NULL,      -- JSON: [{seat, bot, fault, detail, decision}]
    think     TEXT NOT NULL,      -- JSON: per seat {count, mean_ms, max_ms}
    log_path  TEXT,               -- relative to the output directory
    reason    TEXT NOT NULL,      -- "complete", "stalled" (a result) or "aborted" (none)
    wall_ms   REAL NOT NULL,
    finished  REAL NOT NULL,
    detail    TEXT                -- why an aborted game was aborted
);
"""


@dataclass(frozen=True, slots=True)
class GameRow:
    game_id: str
    variant: str
    size: int
    table: int
    deal: int
    rotation: int
    seed: int | None
    bots: list[str]
    scores: list[float]
    ranks: list[int]
    win_shares: list[float]
    forfeits: list[int]
    faults: list[dict[str, Any]]
    think: list[dict[str, Any]]
    log_path: str | None
    reason: str
    wall_ms: float
    finished: float = 0.0
    detail: str | None = None


class MergedMeta(msgspec.Struct, kw_only=True):
    """The meta ``merged`` of a directory written by ``referee merge``: the split
    (``of`` N shards), the shards in it, and whether every planned game is."""

    of: int
    shards: list[int]
    complete: bool
    missing_games: int

    def text(self) -> str:
        """The stored form (JSON, keys sorted)."""
        return json.dumps(msgspec.to_builtins(self), sort_keys=True)

    @classmethod
    def parse(cls, text: str) -> MergedMeta | None:
        """The stored form decoded; None if it is damaged."""
        try:
            return msgspec.json.decode(text, type=cls)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None


class BotInfo(msgspec.Struct, kw_only=True):
    """One bot of the night as the meta ``bots`` stores it (a JSON list, in config
    order): its name, its command, and the ``hello`` it answered at the start
    check (protocol, name, version), None where it did not answer one."""

    name: str
    command: list[str] | str
    hello: dict[str, Any] | None = None

    @staticmethod
    def text(bots: list[BotInfo]) -> str:
        """The stored form of a night's bots."""
        return json.dumps(msgspec.to_builtins(bots))

    @staticmethod
    def parse(text: str | None) -> list[BotInfo] | None:
        """The stored form decoded; None if absent or damaged."""
        if not text:
            return None
        try:
            return msgspec.json.decode(text, type=list[BotInfo])
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None


def config_text(canonical: dict[str, Any]) -> str:
    """The stored form of a canonical config (the meta ``config``)."""
    return json.dumps(canonical, sort_keys=True)


def run_lock_held(out: Path) -> bool:
    """Whether a run (or a merge) holds the run lock of output directory ``out`` right now."""
    try:
        fd = os.open(Path(out) / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _take_run_lock(out: Path) -> int:
    """Take the exclusive run lock of ``out``; return its file descriptor.
    Raises :class:`UserError` if another run holds it."""
    fd = os.open(out / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise UserError(
            f"{out}: another `referee run` is playing into this output directory right now; "
            "wait for it, stop it, or use --out DIR"
        ) from None
    return fd


#: the columns of the ``games`` table, in order
GAME_COLUMNS = (
    "game_id",
    "variant",
    "size",
    "tbl",
    "deal",
    "rotation",
    "seed",
    "bots",
    "scores",
    "ranks",
    "win_shares",
    "forfeits",
    "faults",
    "think",
    "log_path",
    "reason",
    "wall_ms",
    "finished",
    "detail",
)

#: how to get out of a damaged ledger (appended to every message about one)
_RECOVER = "restore it from a copy, or start the league afresh with --new-out"


def check_db(db: sqlite3.Connection, path: Path, *, create: bool) -> None:
    """Check that ``db`` is an undamaged league ledger: SQLite's ``quick_check``
    and the schema (a new, empty file passes when ``create``). Raises
    :class:`UserError` naming ``path``, what is wrong and how to recover."""
    try:
        problems = [r[0] for r in db.execute("PRAGMA quick_check(5)").fetchall()]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        columns = tuple(r[1] for r in db.execute("PRAGMA table_info(games)"))
    except sqlite3.DatabaseError as exc:
        raise UserError(f"{path}: not a league ledger, or a damaged one ({exc}); {_RECOVER}") from None
    if problems != ["ok"]:
        found = [" ".join(str(p).split()) for p in problems]
        found = [p for p in found if p and not p.startswith("*** in database")][:3]
        raise UserError(f"{path}: the ledger is damaged (SQLite finds: {'; '.join(found)}); {_RECOVER}")
    if not tables and create:
        return
    other = sorted(tables - {"meta", "games"})
    if other or "meta" not in tables or "games" not in tables:
        have = ", ".join(sorted(tables)) or "none"
        raise UserError(
            f"{path}: not a league ledger (its tables are: {have}; a ledger has meta and games); "
            "give the output directory of a league run, or move this file away"
        )
    if columns != GAME_COLUMNS:
        raise UserError(
            f"{path}: not a league ledger of this referee (the games table has the columns "
            f"{', '.join(columns)}); {_RECOVER}"
        )


def _values(row: GameRow) -> tuple[Any, ...]:
    return (
        row.game_id,
        row.variant,
        row.size,
        row.table,
        row.deal,
        row.rotation,
        None if row.seed is None else str(row.seed),
        json.dumps(row.bots),
        json.dumps(row.scores),
        json.dumps(row.ranks),
        json.dumps(row.win_shares),
        json.dumps(row.forfeits),
        json.dumps(row.faults),
        json.dumps(row.think),
        row.log_path,
        row.reason,
        row.wall_ms,
        row.finished or time.time(),
        row.detail,
    )


class Ledger:
    """An open ledger. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: Path, *, create: bool = True) -> None:
        self.path = Path(path)
        self._lock_fd: int | None = None
        self._staged: dict[str, str | None] = {}
        if not create and not self.path.exists():
            raise UserError(f"{self.path}: no ledger here; run a league first (referee run CONFIG)")
        if self.path.is_dir():
            raise UserError(f"{self.path}: is a folder, not a league ledger; move it away")
        try:
            self.db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise UserError(f"{self.path}: cannot open the ledger ({exc})") from None
        try:
            check_db(self.db, self.path, create=create)
        except BaseException:
            self.db.close()
            raise
        try:
            os.chmod(self.path, 0o600)
        except OSError:
            pass  # a ledger of another user, read here: its mode is not ours to change
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA busy_timeout=5000")
            if create:
                self.db.executescript(_SCHEMA)
            version = self.get_meta("schema")
        except sqlite3.DatabaseError as exc:
            self.db.close()
            raise UserError(f"{self.path}: not a league ledger ({exc})") from None
        if version is not None and not version.isdigit():
            self.db.close()
            raise UserError(f"{self.path}: the ledger's schema version is damaged ({version!r}); {_RECOVER}")
        if version is None and create:
            self.set_meta("schema", str(SCHEMA_VERSION))
        elif version is None:
            raise UserError(f"{self.path}: not a league ledger (no schema version)")
        elif int(version) > SCHEMA_VERSION:
            raise UserError(
                f"{self.path}: ledger schema {version} is newer than this referee's "
                f"({SCHEMA_VERSION}); upgrade the referee"
            )

    @classmethod
    def in_dir(cls, out: Path, *, create: bool = True, lock: bool = False) -> Ledger:
        """The ledger of output directory ``out``. With ``lock``, first take the
        directory's run lock (:class:`UserError` if another run holds it); it is
        held until :meth:`close`."""
        out = Path(out)
        if not create and not (out / LEDGER_NAME).exists():
            raise UserError(f"{out}: no {LEDGER_NAME} here; give the output directory of a league run")
        fd = _take_run_lock(out) if lock else None
        try:
            ledger = cls(out / LEDGER_NAME, create=create)
        except BaseException:
            if fd is not None:
                os.close(fd)
            raise
        ledger._lock_fd = fd
        return ledger

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database and release the run lock (so that an in-process
        caller can run or resume the same league again). Staged meta entries
        not committed are dropped."""
        self.db.close()
        self._staged = {}
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    # -- meta -----------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            return None
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{self.path}: the ledger cannot be read ({exc}); {_RECOVER}") from None
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def config(self) -> dict[str, Any] | None:
        text = self.get_meta("config")
        if not text:
            return None
        try:
            config = json.loads(text)
        except ValueError:
            config = None
        if not isinstance(config, dict):
            raise UserError(f"{self.path}: the league config stored in the ledger is damaged; {_RECOVER}")
        return config

    def stage_meta(self, entries: Mapping[str, str | None]) -> None:
        """Keep meta entries to write later with :meth:`commit_staged` (a value
        of None removes the key)."""
        self._staged.update(entries)

    def commit_staged(self) -> None:
        """Write the staged meta entries in one transaction (nothing if none are staged)."""
        if not self._staged:
            return
        with transaction(self.db):
            for key, value in self._staged.items():
                if value is None:
                    self.db.execute("DELETE FROM meta WHERE key = ?", (key,))
                else:
                    self.set_meta(key, value)
        self._staged = {}

    # -- games ----------------------------------------------------------
    @contextmanager
    def _reading(self) -> Iterator[None]:
        """A damaged ledger found while reading is a :class:`UserError`."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{self.path}: the ledger cannot be read ({exc}); {_RECOVER}") from None

    def done_ids(self) -> set[str]:
        with self._reading():
            return {r[0] for r in self.db.execute("SELECT game_id FROM games")}

    def count(self) -> int:
        with self._reading():
            return int(self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def log_paths(self) -> list[tuple[str, str]]:
        """``(game id, log path as recorded)`` of every game that has a log, in game-id order."""
        with self._reading():
            return [
                (r[0], r[1])
                for r in self.db.execute(
                    "SELECT game_id, log_path FROM games WHERE log_path IS NOT NULL ORDER BY game_id"
                )
            ]

    def record(self, row: GameRow) -> None:
        """Commit one finished game in one transaction.

        Raises ``sqlite3.IntegrityError`` if the game id is already recorded.
        """
        self.record_many([row])

    def record_many(self, rows: Iterable[GameRow], meta: dict[str, str] | None = None) -> None:
        """Commit many games (and meta entries) in one transaction: all or none.

        Raises ``sqlite3.IntegrityError`` (nothing committed) if a game id is
        already recorded. Used by ``referee merge``.
        """
        with transaction(self.db):
            for row in rows:
                self.db.execute("INSERT INTO games VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", _values(row))
            for key, value in (meta or {}).items():
                self.set_meta(key, value)

    def get(self, game_id: str) -> GameRow | None:
        """One recorded game, or None."""
        with self._reading():
            r = self.db.execute("SELECT * FROM games WHERE game_id = ?", (game_id,)).fetchone()
        return None if r is None else self._row(r)

    def rows(self) -> Iterator[GameRow]:
        """Every recorded game, in game-id order (deterministic)."""
        try:
            cur = self.db.execute("SELECT * FROM games ORDER BY game_id")
            for r in cur:
                yield self._row(r)
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{self.path}: the ledger cannot be read ({exc}); {_RECOVER}") from None

    def each_row(self) -> Iterator[tuple[str, GameRow | None, str | None]]:
        """Every recorded game in game-id order as ``(game id, row, None)``, or
        ``(game id, None, what is wrong)`` for a damaged row (``referee verify``
        reports it and goes on)."""
        with self._reading():
            for r in self.db.execute("SELECT * FROM games ORDER BY game_id"):
                try:
                    row = self._row(r)
                except UserError as exc:
                    yield str(r[0]), None, str(exc).split(". Remove it with", 1)[0].split(": ", 1)[-1]
                else:
                    yield str(r[0]), row, None

    def _row(self, r: tuple[Any, ...]) -> GameRow:
        """Decode and check one ledger row; a damaged row is a :class:`UserError`
        that says how to remove it (the league then replays that game)."""
        try:
            row = GameRow(
                game_id=r[0],
                variant=r[1],
                size=r[2],
                table=r[3],
                deal=r[4],
                rotation=r[5],
                seed=None if r[6] is None else int(r[6]),
                bots=json.loads(r[7]),
                scores=json.loads(r[8]),
                ranks=json.loads(r[9]),
                win_shares=json.loads(r[10]),
                forfeits=json.loads(r[11]),
                faults=json.loads(r[12]),
                think=json.loads(r[13]),
                log_path=r[14],
                reason=r[15],
                wall_ms=r[16],
                finished=r[17],
                detail=r[18],
            )
            n = len(row.bots)
            ok = (
                all(isinstance(b, str) for b in row.bots)
                and all(isinstance(x, list) and len(x) == n for x in (row.scores, row.ranks, row.win_shares))
                and all(
                    isinstance(v, (int, float)) and not isinstance(v, bool)
                    for v in (*row.scores, *row.ranks, *row.win_shares)
                )
                and isinstance(row.forfeits, list)
                and all(isinstance(s, int) and 0 <= s < n for s in row.forfeits)
                and isinstance(row.faults, list)
                and all(isinstance(f, dict) for f in row.faults)
                and isinstance(row.think, list)
                and all(isinstance(t, dict) for t in row.think)
            )
            if not ok:
                raise ValueError("fields of the wrong shape")
        except (ValueError, TypeError, IndexError) as exc:
            raise UserError(
                f"{self.path}: the ledger row of game {r[0]!r} is damaged ({exc}). Remove it with\n"
                f"  sqlite3 {self.path} \"DELETE FROM games WHERE game_id = '{r[0]}'\"\n"
                "and run the league again: that game is played again."
            ) from None
        return row
