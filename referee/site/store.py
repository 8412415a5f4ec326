"""The site's state: one SQLite file (``DATA/site.sqlite``, WAL, one writer) next to the league's ledger.

Tables: ``entrants`` (name, the sha256 of the token, host or not), ``sessions`` (browser logins: the
sha256 of the session id, its CSRF token, expiry), ``versions`` (one row per submission: its state,
manifest, folder, build log, check-bot report, failure and fix, the gauntlet's and the duel's
outcome), ``transitions`` (every state change with its time and note), ``ratings`` (rating history
per pool entry: mu, sigma and games after each ladder table) and ``meta``.

A version moves through::

    received -> building -> checking -> candidate -> active -> retired
                   |            |           |
                   +-> failed <-+           +-> rejected (the duel said H0, or undecided)

The *queue* is every version in ``received``, ``building``, ``checking`` or ``candidate`` that has
not been decided: :meth:`Store.resume` (at every start) puts ``building`` and ``checking`` back to
``received`` (a kill -9 cut that step off; it runs again from the archive kept in ``uploads/``), so
nothing submitted is ever lost. Every method commits before it returns (one transaction each).

A store (one connection) is used from one trio loop's thread only: ``referee host`` opens one for
its web loop and one for its background loop (:func:`referee.site.pipeline.background_thread`);
calls are short and synchronous, WAL lets either read while the other writes, and a write waits
(``timeout``) at most for the other's one short transaction.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
import time
from pathlib import Path
from typing import Any, Literal

import msgspec

from referee.errors import UserError
from referee.fileio import transaction

State = Literal["received", "building", "checking", "candidate", "active", "retired", "failed", "rejected"]
#: the states of the queue (not yet decided)
QUEUED: tuple[State, ...] = ("received", "building", "checking", "candidate")
#: the legal transitions
NEXT: dict[str, tuple[str, ...]] = {
    "received": ("building", "failed"),
    "building": ("checking", "failed", "received"),
    "checking": ("candidate", "failed", "received"),
    "candidate": ("active", "rejected", "candidate"),
    "active": ("retired",),
    "rejected": ("active",),  # the host may still promote a rejected version (promote = "host")
    "retired": ("active",),  # and bring back an older one
    "failed": (),
}

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entrants (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, token_sha256 TEXT NOT NULL UNIQUE,
    host INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    id_sha256 TEXT PRIMARY KEY, entrant INTEGER NOT NULL REFERENCES entrants(id), csrf TEXT NOT NULL,
    created REAL NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY, entrant INTEGER NOT NULL REFERENCES entrants(id), number INTEGER NOT NULL,
    state TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL,
    archive TEXT NOT NULL, folder TEXT, manifest TEXT, bot TEXT NOT NULL,
    build_log TEXT, check_report TEXT, error TEXT, fix TEXT, gauntlet TEXT, duel TEXT,
    UNIQUE (entrant, number));
CREATE TABLE IF NOT EXISTS transitions (
    version INTEGER NOT NULL REFERENCES versions(id), state TEXT NOT NULL, at REAL NOT NULL, note TEXT);
CREATE TABLE IF NOT EXISTS ratings (
    bot TEXT NOT NULL, at REAL NOT NULL, mu REAL NOT NULL, sigma REAL NOT NULL, games INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS ratings_bot ON ratings (bot, at);
"""


class Entrant(msgspec.Struct, frozen=True):
    id: int
    name: str
    host: bool
    created: float


class Transition(msgspec.Struct, frozen=True):
    state: str
    at: float
    note: str | None = None


class Version(msgspec.Struct, frozen=True):
    """One submission. ``bot`` is its name in the pool and the ledger (``ENTRANT-vN``)."""

    id: int
    entrant: str
    number: int
    state: str
    created: float
    updated: float
    archive: str
    bot: str
    folder: str | None = None
    manifest: dict[str, Any] | None = None
    build_log: str | None = None
    check_report: dict[str, Any] | None = None
    error: str | None = None
    fix: str | None = None
    gauntlet: dict[str, Any] | None = None
    duel: dict[str, Any] | None = None


class RatingPoint(msgspec.Struct, frozen=True):
    at: float
    mu: float
    sigma: float
    games: int


def token_hash(token: str) -> str:
    """The stored form of a token or session id (sha256 of a 32-byte random secret: no need to stretch)."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """A fresh entrant token (32 random bytes, URL-safe text, prefixed so it is recognisable)."""
    return "rt_" + secrets.token_urlsafe(32)


_VERSION_COLUMNS = (
    "v.id, e.name, v.number, v.state, v.created, v.updated, v.archive, v.bot, v.folder, v.manifest, "
    "v.build_log, v.check_report, v.error, v.fix, v.gauntlet, v.duel"
)


def _version(row: tuple[Any, ...]) -> Version:
    def js(x: str | None) -> Any:
        return json.loads(x) if x else None

    return Version(
        id=row[0],
        entrant=row[1],
        number=row[2],
        state=row[3],
        created=row[4],
        updated=row[5],
        archive=row[6],
        bot=row[7],
        folder=row[8],
        manifest=js(row[9]),
        build_log=row[10],
        check_report=js(row[11]),
        error=row[12],
        fix=row[13],
        gauntlet=js(row[14]),
        duel=js(row[15]),
    )


class Store:
    """The site's database (see the module docstring). ``Store.open(path)``; ``close()``."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Store:
        p = Path(path)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            fresh = not p.exists()
            db = sqlite3.connect(p, isolation_level=None, check_same_thread=False, timeout=10)
            if fresh:
                os.chmod(p, 0o600)  # token hashes and sessions: the host's only
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{p}: the site's database cannot be used ({exc}); restore it from a copy") from None
        except OSError as exc:
            raise UserError(f"{p}: cannot open the site's database: {exc.strerror or exc}") from None
        return cls(db, p)

    def close(self) -> None:
        self.db.close()

    # ---------------------------------------------------------------- entrants

    def add_entrant(self, name: str, *, host: bool = False) -> str:
        """Add an entrant; return its token (shown once: only its hash is kept)."""
        name = name.strip()
        if not name or not all(c.isalnum() or c in "-_" for c in name) or len(name) > 40:
            raise UserError(f"entrant name {name!r}: use 1 to 40 letters, digits, '-' or '_'")
        token = new_token()
        try:
            self.db.execute(
                "INSERT INTO entrants (name, token_sha256, host, created) VALUES (?, ?, ?, ?)",
                (name, token_hash(token), int(host), time.time()),
            )
        except sqlite3.IntegrityError:
            raise UserError(f"entrant {name!r} exists already; choose another name (or use new-token)") from None
        return token

    def new_token(self, name: str) -> str:
        """A new token for an entrant (the old one stops working, and so do its browser sessions)."""
        token = new_token()
        e = self.entrant_named(name)
        if e is None:
            raise UserError(f"no entrant named {name!r}")
        with transaction(self.db):
            self.db.execute("UPDATE entrants SET token_sha256 = ? WHERE id = ?", (token_hash(token), e.id))
            self.db.execute("DELETE FROM sessions WHERE entrant = ?", (e.id,))
        return token

    def _entrant(self, where: str, arg: Any) -> Entrant | None:
        row = self.db.execute(f"SELECT id, name, host, created FROM entrants WHERE {where}", (arg,)).fetchone()
        return Entrant(row[0], row[1], bool(row[2]), row[3]) if row else None

    def entrant_by_token(self, token: str) -> Entrant | None:
        return self._entrant("token_sha256 = ?", token_hash(token))

    def entrant_named(self, name: str) -> Entrant | None:
        return self._entrant("name = ?", name)

    def entrants(self) -> list[Entrant]:
        rows = self.db.execute("SELECT id, name, host, created FROM entrants ORDER BY id").fetchall()
        return [Entrant(r[0], r[1], bool(r[2]), r[3]) for r in rows]

    # ---------------------------------------------------------------- sessions

    def new_session(self, entrant: Entrant, hours: float) -> tuple[str, str]:
        """A browser session: (session id for the cookie, its CSRF token)."""
        sid, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
        now = time.time()
        self.db.execute(
            "INSERT INTO sessions (id_sha256, entrant, csrf, created, expires) VALUES (?, ?, ?, ?, ?)",
            (token_hash(sid), entrant.id, csrf, now, now + hours * 3600),
        )
        return sid, csrf

    def session(self, sid: str) -> tuple[Entrant, str] | None:
        """The entrant and CSRF token of a live session, or None."""
        row = self.db.execute(
            "SELECT e.id, e.name, e.host, e.created, s.csrf, s.expires FROM sessions s JOIN entrants e "
            "ON e.id = s.entrant WHERE s.id_sha256 = ?",
            (token_hash(sid),),
        ).fetchone()
        if row is None or row[5] < time.time():
            return None
        return Entrant(row[0], row[1], bool(row[2]), row[3]), row[4]

    def end_session(self, sid: str) -> None:
        self.db.execute("DELETE FROM sessions WHERE id_sha256 = ?", (token_hash(sid),))

    # ---------------------------------------------------------------- versions

    def add_version(self, entrant: Entrant, archive: str) -> Version:
        """A new submission in state ``received`` (its archive already saved at ``archive``)."""
        now = time.time()
        with transaction(self.db):
            (n,) = self.db.execute(
                "SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE entrant = ?", (entrant.id,)
            ).fetchone()
            cur = self.db.execute(
                "INSERT INTO versions (entrant, number, state, created, updated, archive, bot) "
                "VALUES (?, ?, 'received', ?, ?, ?, ?)",
                (entrant.id, n, now, now, archive, f"{entrant.name}-v{n}"),
            )
            vid = cur.lastrowid
            self.db.execute("INSERT INTO transitions VALUES (?, 'received', ?, NULL)", (vid, now))
        got = self.version(int(vid or 0))
        assert got is not None
        return got

    def version(self, vid: int) -> Version | None:
        row = self.db.execute(
            f"SELECT {_VERSION_COLUMNS} FROM versions v JOIN entrants e ON e.id = v.entrant WHERE v.id = ?", (vid,)
        ).fetchone()
        return _version(row) if row else None

    def versions(self, entrant: str | None = None, states: tuple[str, ...] | None = None) -> list[Version]:
        """Versions in submission order, of one entrant and/or in some states."""
        where, args = [], []
        if entrant is not None:
            where.append("e.name = ?")
            args.append(entrant)
        if states is not None:
            where.append(f"v.state IN ({','.join('?' * len(states))})")
            args.extend(states)
        sql = f"SELECT {_VERSION_COLUMNS} FROM versions v JOIN entrants e ON e.id = v.entrant"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [_version(r) for r in self.db.execute(sql + " ORDER BY v.id", args).fetchall()]

    def recent_uploads(self, entrant: Entrant, seconds: float) -> int:
        (n,) = self.db.execute(
            "SELECT COUNT(*) FROM versions WHERE entrant = ? AND created > ?", (entrant.id, time.time() - seconds)
        ).fetchone()
        return int(n)

    def move(self, vid: int, state: str, note: str | None = None, **fields: Any) -> Version:
        """Move a version to ``state`` (a legal transition, else ``ValueError``), setting ``fields``
        (folder, manifest, build_log, check_report, error, fix, gauntlet, duel) in the same transaction."""
        allowed = {"folder", "manifest", "build_log", "check_report", "error", "fix", "gauntlet", "duel"}
        if not set(fields) <= allowed:
            raise ValueError(f"unknown version fields: {sorted(set(fields) - allowed)}")
        with transaction(self.db):
            row = self.db.execute("SELECT state FROM versions WHERE id = ?", (vid,)).fetchone()
            if row is None:
                raise ValueError(f"no version {vid}")
            if state != row[0] and state not in NEXT[row[0]]:
                raise ValueError(f"version {vid}: {row[0]} -> {state} is not a transition")
            now = time.time()
            sets = ["state = ?", "updated = ?"]
            args: list[Any] = [state, now]
            for k, v in fields.items():
                sets.append(f"{k} = ?")
                args.append(json.dumps(v) if isinstance(v, (dict, list)) else v)
            self.db.execute(f"UPDATE versions SET {', '.join(sets)} WHERE id = ?", (*args, vid))
            if state != row[0] or note:
                self.db.execute("INSERT INTO transitions VALUES (?, ?, ?, ?)", (vid, state, now, note))
        got = self.version(vid)
        assert got is not None
        return got

    def transitions(self, vid: int) -> list[Transition]:
        rows = self.db.execute("SELECT state, at, note FROM transitions WHERE version = ? ORDER BY rowid", (vid,))
        return [Transition(*r) for r in rows.fetchall()]

    def active(self) -> list[Version]:
        """The active versions (the entrants' part of the pool), in the order they became active."""
        return sorted(self.versions(states=("active",)), key=lambda v: (v.updated, v.id))

    def queue(self) -> list[Version]:
        """The undecided versions, oldest first (candidates waiting for the host excluded when ``host``)."""
        return self.versions(states=QUEUED)

    def resume(self) -> list[Version]:
        """At start: a step cut off by a kill (``building``, ``checking``) starts again from ``received``.
        Returns the queue."""
        for v in self.versions(states=("building", "checking")):
            self.move(v.id, "received", note=f"restarted: the site stopped while {v.state}")
        return self.queue()

    # ---------------------------------------------------------------- ratings

    def add_ratings(self, points: dict[str, tuple[float, float, int]], at: float | None = None) -> None:
        """One rating point per pool entry (bot name -> (mu, sigma, games)), all at one time."""
        t = time.time() if at is None else at
        with transaction(self.db):
            self.db.executemany(
                "INSERT INTO ratings VALUES (?, ?, ?, ?, ?)", [(b, t, mu, s, g) for b, (mu, s, g) in points.items()]
            )

    def rating_history(self, bot: str) -> list[RatingPoint]:
        rows = self.db.execute("SELECT at, mu, sigma, games FROM ratings WHERE bot = ? ORDER BY at", (bot,))
        return [RatingPoint(*r) for r in rows.fetchall()]

    # ---------------------------------------------------------------- meta

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
