"""``referee serve OUT``: the report, the game browser, the viewer pages, the logs
and a live page of a league night, over HTTP on localhost.

The server only reads: the ledger is opened read-only (SQLite in WAL mode, so
a ``referee run`` writing into the same folder is never blocked). It serves an
allow-list of the output folder's files (:func:`servable`: the report and its
standings files, ``report-data/games-K.js``, and in ``games/`` the logs, the
viewer pages and their frames); everything else is a 404 - the ledger (it holds
a secret night's seed) and its ``-wal``/``-shm``/``-journal`` files, the lock,
dotfiles, configs, seed files, folders, links, and anything outside the folder
- since any local process can reach the port, a bot with network access
included (issue 19). While a night runs in
another process, ``/live`` shows its progress and standings and refreshes by
itself (it polls ``/api/status``, which adds only the games recorded since the
last poll to a running tally, so a poll costs little even for a big night).

``/live/<game>`` streams a game being played as server-sent events (:func:`referee.view.live.follow`:
an event ``header`` with the frames header, then an event ``frame`` per frame, each with its index as
the event id, then ``end``; ``?start=N`` or a reconnection's ``Last-Event-ID`` resumes after a frame);
``/api/live`` lists the games being played (:func:`referee.view.live.running_games`) and the live
page shows them with a "watch" link each (the viewer shell following ``/live/<game>``).

``/view/<game>`` shows a game: the viewer shell following it while it is played, the report's viewer page
(``/games/viewer.html?game=<game>``, when ``OUT/games/<game>.frames.js`` exists),
else a page built on the spot from its log. ``/log/<game>`` is the game's log as text (decompressed).

The server may start before the night: on a folder that does not exist yet or
holds no ledger, ``/live`` waits (``started`` false in ``/api/status``) and
follows the night once ``referee run`` begins it; nothing is created.

The standard library's threaded HTTP server is enough for this (one user or
a handful on localhost, static files and small JSON answers); it stops with
Ctrl-C. Errors: an ``OUT`` that is a file, or a damaged ledger, is one
``UserError``; a request for a file that is not on the allow-list, or that
does not exist, is a 404.
"""

from __future__ import annotations

import json
import mimetypes
import os
import re
import sqlite3
import stat
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

import msgspec

from referee.errors import UserError
from referee.league.ledger import LEDGER_NAME, GameRow, Ledger, check_db
from referee.league.night import ladder_number
from referee.league.standings import Tally

__all__ = ["LeagueState", "make_server", "serve"]

_TYPES = {
    ".jsonl": "application/x-ndjson; charset=utf-8",
    ".zst": "application/zstd",
    ".gz": "application/gzip",
    ".js": "text/javascript; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".csv": "text/csv; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}


#: the output folder's own files that are served (the report writes them)
_TOP_FILES = frozenset({"report.html", "standings.json", "standings.csv", "standings.md", "head_to_head.csv"})
#: a served file's name: no dotfiles, nothing but letters, digits and ``._-``
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
#: what ``games/`` serves: the logs, the viewer shell, a game's frames and its page
_GAME_FILES = (".jsonl", ".jsonl.zst", ".jsonl.gz", ".frames.js", ".html")
_REPORT_DATA = re.compile(r"games-[0-9]+\.js")


def servable(rel: str) -> bool:
    """Whether ``rel`` (a path relative to the output folder, ``/``-separated)
    is on the allow-list of files ``serve`` hands out: the report, its
    standings files, ``report-data/games-K.js``, and the logs, viewer pages and
    frames in ``games/``. Never the ledger (nor its -wal/-shm/-journal), the lock,
    dotfiles, configs, seed files or anything else."""
    parts = rel.split("/")
    if not all(_NAME.fullmatch(p) for p in parts):
        return False
    if len(parts) == 1:
        return parts[0] in _TOP_FILES
    if len(parts) != 2:
        return False
    folder, name = parts
    if folder == "report-data":
        return _REPORT_DATA.fullmatch(name) is not None
    return folder == "games" and name.endswith(_GAME_FILES)


def _watch_href(game: str) -> str:
    """The viewer shell following ``game`` while it is played (``/live/<game>``)."""
    g = quote(game, safe="")
    return f"/games/viewer.html?game={g}&live={quote('/live/' + g, safe='')}"


def _lock_held(path: Path) -> bool | None:
    """Whether some process holds the run lock of ``OUT/.lock`` (read from
    ``/proc/locks``, so the server never takes the lock itself); None where
    that cannot be known."""
    try:
        st = path.stat()
        with open("/proc/locks") as f:
            text = f.read()
    except OSError:
        return None
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    return any(line.split()[5] == dev for line in text.splitlines() if len(line.split()) > 5)


class LeagueState:
    """What the live page shows, read from the ledger (read-only) and kept up to
    date incrementally. Thread-safe (:meth:`status` may be called from any thread)."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.path = self.out / LEDGER_NAME
        if self.out.exists() and not self.out.is_dir():
            raise UserError(f"{self.out}: not a folder; give the output folder of a league night")
        if self.path.exists() and not self.path.is_file():
            raise UserError(f"{self.path}: not a file; give the output folder of a league night")
        if self.path.is_file():
            db = self._db()
            try:
                # a damaged ledger: one error before serving anything; an empty one is a night whose
                # run has just created the file and not yet its tables (the page waits for them)
                check_db(db, self.path, create=True)
            finally:
                db.close()
        # no ledger (yet): a night not begun, the folder perhaps not made; the live page waits
        self._lock = threading.Lock()
        self._seen: set[str] = set()
        self._tally: Tally | None = None
        self._recent: list[dict[str, Any]] = []
        self._counts = {"aborted": 0, "stalled": 0, "faults": 0}
        self._per_variant: dict[str, int] = {}
        self._planned: tuple[str | None, int | None, dict[str, int]] = (None, None, {})
        self._ladder = 0  # ladder games read (referee ladder in the same folder)
        self._rate: list[tuple[float, int]] = []

    def _db(self) -> sqlite3.Connection:
        try:
            return sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5)
        except sqlite3.Error as exc:
            raise UserError(f"{self.path}: cannot open the ledger to read it ({exc})") from None

    def _plan(self, db: sqlite3.Connection) -> tuple[int | None, dict[str, int]]:
        """Games planned in all and per variant (the night's plan: its stored config and the meta
        that shape it, :class:`referee.league.night.NightPlan`), cached per config and meta."""
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        key = "\0".join(str(meta.get(k)) for k in ("config", "epochs", "withdrawn", "shard", "merged"))
        if key == self._planned[0]:
            return self._planned[1], self._planned[2]
        from referee.league.summary import plan_counts

        try:
            config = json.loads(meta["config"]) if meta.get("config") else None
        except ValueError:
            config = None
        total, per = plan_counts(config, meta.get, str(self.path))
        self._planned = (key, total, per)
        return total, per

    def status(self) -> dict[str, Any]:
        """The live figures: progress, counts, live standings, the latest games."""
        with self._lock:
            if not self.path.is_file():  # the night has not begun: nothing to read (and nothing made)
                return self._answer(self.out.name, None, {}, 0.0, time.time(), started=False)
            db = self._db()
            try:
                if not db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'games'").fetchone():
                    # the run is creating its ledger: a night with nothing read yet
                    return self._answer(self.out.name, None, {}, 0.0, time.time())
                name_row = db.execute("SELECT value FROM meta WHERE key = 'league'").fetchone()
                league = name_row[0] if name_row else self.out.name
                planned, per_planned = self._plan(db)
                if self._tally is None:
                    self._tally = Tally(league, live=True)
                new = (
                    db.execute("SELECT * FROM games ORDER BY finished").fetchall()
                    if not self._seen
                    else db.execute(
                        "SELECT * FROM games WHERE finished >= ? ORDER BY finished", (self._last_finished,)
                    ).fetchall()
                )
            except sqlite3.Error as exc:
                raise UserError(f"{self.path}: the ledger cannot be read ({exc})") from None
            finally:
                db.close()
            reader = Ledger.__new__(Ledger)
            reader.path = self.path
            added = 0
            for r in new:
                if r[0] in self._seen:
                    continue
                row: GameRow = Ledger._row(reader, r)
                self._seen.add(row.game_id)
                self._last_finished = row.finished
                self._tally.add(row)
                added += 1
                if ladder_number(row.game_id) is not None:
                    self._ladder += 1  # a ladder game sharing the folder: not one of the night's planned games
                else:
                    self._per_variant[row.variant] = self._per_variant.get(row.variant, 0) + 1
                if row.reason == "aborted":
                    self._counts["aborted"] += 1
                elif row.reason == "stalled":
                    self._counts["stalled"] += 1
                self._counts["faults"] += len(row.faults)
                self._recent.append(
                    {
                        "game": row.game_id,
                        "variant": row.variant,
                        "bots": row.bots,
                        "scores": row.scores,
                        "reason": row.reason,
                        "faults": len(row.faults),
                        "log": row.log_path,
                        "view": f"/view/{row.game_id}",
                    }
                )
            self._recent = self._recent[-25:]
            now = time.time()
            self._rate = [(t, n) for t, n in self._rate if now - t < 30] + [(now, len(self._seen))]
            t0, n0 = self._rate[0]
            rate = (len(self._seen) - n0) / (now - t0) if now - t0 > 1 else 0.0
            return self._answer(league, planned, per_planned, rate, now)

    def _answer(
        self,
        league: str,
        planned: int | None,
        per_planned: dict[str, int],
        rate: float,
        now: float,
        *,
        started: bool = True,
    ) -> dict[str, Any]:
        """The status (``/api/status``) from what has been read so far;
        ``started``: whether the night has a ledger yet."""
        done = len(self._seen) - self._ladder  # the planned games played (ladder games are counted apart)
        return {
            "league": league,
            "out": str(self.out),
            "started": started,
            "running": _lock_held(self.out / ".lock"),
            "planned": planned,
            "done": done,
            "ladder": self._ladder,
            "complete": planned is not None and done >= planned,
            **self._counts,
            "games_per_s": round(rate, 2),
            "updated": now,
            "variants": {
                v: {"done": self._per_variant.get(v, 0), "planned": per_planned.get(v)}
                for v in sorted(set(per_planned) | set(self._per_variant))
            },
            "top": self._tally.top(20) if self._tally is not None else [],
            "recent": list(reversed(self._recent)),
        }

    _last_finished = 0.0


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        if self.server.verbose:
            super().log_message(format, *args)

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        path = unquote(urlsplit(self.path).path)
        try:
            if path in ("/", ""):
                target = "/report.html" if (self.server.out / "report.html").is_file() else "/live"
                self.send_response(HTTPStatus.FOUND)
                self.send_header("Location", target)
                self.end_headers()
            elif path == "/favicon.ico":  # browsers ask for it; there is none
                self.send_response(HTTPStatus.NO_CONTENT)
                self.end_headers()
            elif path == "/live":
                self._send(HTTPStatus.OK, "text/html; charset=utf-8", LIVE_PAGE.encode())
            elif path == "/api/live":
                from referee.view.live import running_games

                games = [
                    {**msgspec.structs.asdict(g), "watch": _watch_href(g.game)} for g in running_games(self.server.out)
                ]
                self._send(HTTPStatus.OK, "application/json; charset=utf-8", json.dumps(games).encode(), no_cache=True)
            elif path.startswith("/live/"):
                self._live(path[len("/live/") :])
            elif path == "/api/status":
                body = json.dumps(self.server.state.status()).encode()
                self._send(HTTPStatus.OK, "application/json; charset=utf-8", body, no_cache=True)
            elif path.startswith("/view/"):
                self._viewer(path[len("/view/") :])
            elif path.startswith("/log/"):
                self._log_text(path[len("/log/") :])
            else:
                self._file(path)
        except UserError as exc:
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", f"error: {exc}\n".encode())

    def _send(self, status: HTTPStatus, ctype: str, body: bytes, *, no_cache: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if no_cache:
            self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _not_found(self, what: str) -> None:
        self._send(HTTPStatus.NOT_FOUND, "text/plain; charset=utf-8", f"not found: {what}\n".encode())

    def _file(self, path: str) -> None:
        """A file on the allow-list (:func:`servable`), a regular file and no link
        (each folder on the way none either), else a 404."""
        rel = path.removeprefix("/")
        if not servable(rel):
            self._not_found(path)
            return
        target = self.server.out
        try:
            for part in rel.split("/"):
                target = target / part
                if stat.S_ISLNK(os.lstat(target).st_mode):
                    raise FileNotFoundError(target)
            st = os.lstat(target)
            if not stat.S_ISREG(st.st_mode):
                raise FileNotFoundError(target)
            body = target.read_bytes()
        except OSError:
            self._not_found(path)
            return
        suffix = target.suffix
        ctype = _TYPES.get(suffix) or mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        self._send(HTTPStatus.OK, ctype, body)

    def _live(self, game: str) -> None:
        """``/live/<game>``: the event records of a game being played, as server-sent events (HTTP/1.0:
        the stream ends when the connection closes, after the ``end`` event)."""
        from referee.runtime.entry import run as trio_run
        from referee.view.live import follow, live_path

        query = parse_qs(urlsplit(self.path).query)
        resume = self.headers.get("Last-Event-ID")  # a reconnecting EventSource: the last record it got
        try:
            start = int(query["start"][0]) if "start" in query else int(resume) + 1 if resume else 0
        except ValueError:
            start = 0
        start = max(0, start)
        if not _NAME.fullmatch(game) or not live_path(self.server.out, game).is_file():
            self._not_found(f"no game {game} is being played")
            return
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Accel-Buffering", "no")
        self.end_headers()
        out = self.wfile

        async def stream() -> None:
            first = True
            try:
                async for item in follow(self.server.out, game, start):
                    if first:
                        out.write(b"retry: 1000\nevent: header\ndata: " + json.dumps(item).encode() + b"\n\n")
                        first = False
                    else:
                        out.write(b"id: %d\nevent: event\ndata: " % item["i"] + json.dumps(item).encode() + b"\n\n")
                    out.flush()
            except UserError as exc:
                out.write(b"event: gone\ndata: " + json.dumps(str(exc)).encode() + b"\n\n")
                return
            out.write(b"event: end\ndata: {}\n\n")
            out.flush()

        try:
            trio_run(stream)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the browser went away

    def _viewer(self, game: str) -> None:
        games = self.server.out / "games"
        if not _NAME.fullmatch(game) or games.is_symlink():
            self._not_found(game)
            return
        from referee.view.live import live_path

        if live_path(self.server.out, game).is_file() and (games / "viewer.html").is_file():
            self.send_response(HTTPStatus.FOUND)  # being played: the shell follows it
            self.send_header("Location", _watch_href(game))
            self.end_headers()
            return
        if (games / f"{game}.frames.js").is_file() and (games / "viewer.html").is_file():
            self.send_response(HTTPStatus.FOUND)  # the report wrote its viewer page: the shared shell shows it
            self.send_header("Location", f"/games/viewer.html?game={quote(game, safe='')}")
            self.end_headers()
            return
        page = games / f"{game}.html"
        if page.is_file() and not page.is_symlink():
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", page.read_bytes())
            return
        log = next(
            (
                games / f"{game}{s}"
                for s in (".jsonl.zst", ".jsonl", ".jsonl.gz")
                if (games / f"{game}{s}").is_file() and not (games / f"{game}{s}").is_symlink()
            ),
            None,
        )
        if log is None:
            self._not_found(f"the log of game {game}")
            return
        from referee.view import render_viewer
        from referee.view.events import events_from_log

        self._send(HTTPStatus.OK, "text/html; charset=utf-8", render_viewer(events_from_log(log)).encode())

    def _log_text(self, game: str) -> None:
        """``/log/<game>``: the game's log as text (JSON Lines, decompressed), for a browser to show."""
        games = self.server.out / "games"
        if not game or "/" in game or game.startswith("."):
            self._not_found(game)
            return
        log = next(
            (games / f"{game}{s}" for s in (".jsonl.zst", ".jsonl", ".jsonl.gz") if (games / f"{game}{s}").is_file()),
            None,
        )
        if log is None:
            self._not_found(f"the log of game {game}")
            return
        from referee.runtime.gamelog import read_log_bytes

        try:
            text = read_log_bytes(log.read_bytes())
        except ValueError as exc:
            self._send(
                HTTPStatus.UNPROCESSABLE_ENTITY, "text/plain; charset=utf-8", f"error: {log.name}: {exc}\n".encode()
            )
            return
        self._send(HTTPStatus.OK, "text/plain; charset=utf-8", text)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr: tuple[str, int], out: Path, verbose: bool) -> None:
        self.out = Path(out)
        self.state = LeagueState(self.out)
        self.verbose = verbose
        super().__init__(addr, _Handler)


def make_server(out: str | Path, host: str = "127.0.0.1", port: int = 8000, *, verbose: bool = False) -> _Server:
    """A server for ``out`` bound to ``host:port`` (port 0: any free port; the
    bound one is ``server.server_address[1]``). Raises ``UserError`` when the
    folder holds no ledger or the port cannot be bound."""
    try:
        return _Server((host, port), Path(out), verbose)
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --port") from None


def serve(
    out: str | Path,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    verbose: bool = False,
    announce: Callable[[str], None] = print,
) -> int:
    """Serve until Ctrl-C; returns 0."""
    server = make_server(out, host, port, verbose=verbose)
    url = f"http://{host}:{server.server_address[1]}/"
    waiting = "" if server.state.path.is_file() else " (no night there yet: the live page waits for it)"
    announce(f"serving {out} at {url} (live page: {url}live){waiting}; Ctrl-C stops")
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        announce("stopped")
    finally:
        server.server_close()
    return 0


LIVE_PAGE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>League night - live</title>
<style>
:root { --ink:#1d2430; --muted:#5d6878; --line:#d9dee6; --bg:#f6f7f9; --ok:#1b7f4b; --warn:#b7791f; --bad:#b42318; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color:var(--ink); background:var(--bg); }
header { background:#fff; border-bottom:1px solid var(--line); padding:14px 24px; display:flex; gap:24px; align-items:baseline; flex-wrap:wrap; }
h1 { font-size:20px; margin:0; }
main { padding:18px 24px; display:grid; gap:18px; grid-template-columns: minmax(320px, 1fr) minmax(320px, 1.3fr); }
section { background:#fff; border:1px solid var(--line); border-radius:8px; padding:14px 16px; }
h2 { font-size:15px; margin:0 0 10px; color:var(--muted); text-transform:uppercase; letter-spacing:.04em; }
.bar { height:14px; background:#e8ebf0; border-radius:7px; overflow:hidden; }
.bar > div { height:100%; background:var(--ok); width:0; transition: width .4s; }
.figures { display:flex; gap:18px; flex-wrap:wrap; margin-top:10px; }
.figures b { font-size:22px; display:block; }
table { border-collapse:collapse; width:100%; }
th, td { text-align:left; padding:4px 8px; border-bottom:1px solid var(--line); font-variant-numeric: tabular-nums; }
th { color:var(--muted); font-weight:600; font-size:13px; }
.state { font-weight:600; }
.running { color:var(--ok); } .stopped { color:var(--warn); } .done { color:var(--ink); } .waiting { color:var(--muted); }
.aborted { color:var(--bad); } .stalled { color:var(--warn); }
a { color:#1f5fbf; }
@media (max-width: 800px) { main { grid-template-columns: 1fr; } }
</style></head>
<body>
<header><h1 id="league">League night</h1><span id="state" class="state" data-testid="state">connecting...</span>
<a href="/report.html">report</a><span id="updated" style="color:var(--muted)"></span></header>
<main>
<section><h2>Progress</h2>
<div class="bar"><div id="bar"></div></div>
<div class="figures">
<span><b id="done" data-testid="done">0</b>games played</span>
<span><b id="planned" data-testid="planned">?</b>planned</span>
<span><b id="rate">0</b>games/s</span>
<span><b id="aborted" data-testid="aborted">0</b>aborted</span>
<span><b id="stalled" data-testid="stalled">0</b>stalled</span>
<span><b id="faults" data-testid="faults">0</b>faults</span>
</div>
<table style="margin-top:14px"><thead><tr><th>variant</th><th>played</th><th>planned</th></tr></thead><tbody id="variants"></tbody></table>
</section>
<section><h2>Standings so far (all variants, by win share)</h2>
<p style="color:var(--muted);margin:0 0 8px">Live: win share = wins / games (a tie shares the win). The final
standings, with ratings per variant, are in the report when the night ends.</p>
<table><thead><tr><th>#</th><th>bot</th><th>games</th><th>win share</th><th>faults</th></tr></thead>
<tbody id="top" data-testid="standings"></tbody></table></section>
<section style="grid-column: 1 / -1"><h2>Games being played</h2>
<table><thead><tr><th>game</th><th>variant</th><th>bots</th><th>started</th><th>steps</th><th></th></tr></thead>
<tbody id="running" data-testid="running"></tbody></table>
<p id="none-running" style="color:var(--muted);margin:6px 0 0">none at the moment</p></section>
<section style="grid-column: 1 / -1"><h2>Latest games</h2>
<table><thead><tr><th>game</th><th>variant</th><th>bots</th><th>scores</th><th>result</th><th></th></tr></thead>
<tbody id="recent" data-testid="recent"></tbody></table></section>
</main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
// refresh interval: 2 s, or ?every=MS (at least 100)
const EVERY = Math.max(100, Number(new URLSearchParams(location.search).get("every")) || 2000);
function esc(s) { return String(s).replace(/[&<>"']/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;","'":"&#39;"}[c])); }
async function poll() {
  try {
    const r = await fetch("/api/status", {cache: "no-store"});
    if (!r.ok) throw new Error(await r.text());
    const s = await r.json();
    $("league").textContent = s.league;
    document.title = s.league + " - live";
    const st = !s.started ? ["waiting", "waiting for the night to begin (referee run CONFIG)"] : s.complete ? ["done", "complete"] : s.running ? ["running", "running"] : ["stopped", s.running === false ? "not running (interrupted? run the same command again to resume)" : "state unknown"];
    $("state").className = "state " + st[0]; $("state").textContent = st[1];
    $("done").textContent = s.done; $("planned").textContent = s.planned ?? "?";
    $("rate").textContent = s.games_per_s; $("aborted").textContent = s.aborted;
    $("stalled").textContent = s.stalled; $("faults").textContent = s.faults;
    $("bar").style.width = s.planned ? Math.min(100, 100 * s.done / s.planned) + "%" : "0";
    $("variants").innerHTML = Object.entries(s.variants).map(([v, x]) =>
      `<tr><td>${esc(v)}</td><td>${x.done}</td><td>${x.planned ?? "?"}</td></tr>`).join("");
    $("top").innerHTML = s.top.map((t, i) =>
      `<tr><td>${i + 1}</td><td>${esc(t.bot)}</td><td>${t.games}</td><td>${(100 * t.win_share).toFixed(1)}%</td><td>${t.faults}</td></tr>`).join("");
    $("recent").innerHTML = s.recent.map(g =>
      `<tr><td>${esc(g.game)}</td><td>${esc(g.variant)}</td><td>${g.bots.map(esc).join(", ")}</td>` +
      `<td>${g.scores.join(" : ")}</td><td class="${esc(g.reason)}">${esc(g.reason)}${g.faults ? ", " + g.faults + " fault(s)" : ""}</td>` +
      `<td><a href="${esc(g.view)}">watch</a></td></tr>`).join("");
    $("updated").textContent = "updated " + new Date(s.updated * 1000).toLocaleTimeString();
    const lr = await fetch("/api/live", {cache: "no-store"});
    const running = lr.ok ? await lr.json() : [];
    const rows = running.map(g =>
      `<tr><td>${esc(g.game)}</td><td>${esc(g.variant)}</td><td>${g.seats.map(esc).join(", ")}</td>` +
      `<td>${esc(g.started ? new Date(g.started).toLocaleTimeString() : "")}</td><td>${g.frames}</td>` +
      `<td><a href="${esc(g.watch)}" data-testid="watch-${esc(g.game)}">watch</a></td></tr>`).join("");
    if ($("running").innerHTML !== rows) $("running").innerHTML = rows;  // (a link being clicked stays)
    $("none-running").hidden = running.length > 0;
  } catch (e) {
    $("state").className = "state stopped"; $("state").textContent = "no answer from the server";
  }
  setTimeout(poll, EVERY);
}
poll();
</script>
</body></html>
"""
