"""The league's games as the site shows them: public views without anyone's stderr, private details.

What a bot writes to stderr is its owner's (and the host's) only: the game logs record each seat's
stderr tail, and a crash's fault detail ends with ``; stderr ends: '...'``. So:

- ``GET /view/GAME`` (public): the game viewer (:func:`referee.view.render_viewer`), its data with
  every ``stderr ends`` part cut out (:func:`redact`) unless the host asks;
- ``GET /log/GAME``: the full log as text, the host only;
- ``GET /report/`` and ``/report/PATH``: the league's ``report.html`` and the files
  :func:`referee.view.serve.servable` allows, the host only (its fault table has the full details);
- ``GET /api/versions/ID/games``: the version's games with its results and its faults in full, and
  ``GET /api/versions/ID/games/GAME/stderr`` its stderr tail in that game: owner and host only.
"""

from __future__ import annotations

import json
import mimetypes
import re
from pathlib import Path
from typing import Any

import trio
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from referee.site import auth
from referee.site.runtime import SiteRuntime

GAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_STDERR_RE = re.compile(r"; stderr ends: .*", re.DOTALL)
HIDDEN = "; its stderr is shown to its owner and the host only"
LOG_SUFFIXES = (".jsonl.zst", ".jsonl", ".jsonl.gz")


def redact(x: Any) -> Any:
    """``x`` (plain data) with every crash's ``stderr ends: ...`` cut from its strings."""
    if isinstance(x, str):
        return _STDERR_RE.sub(HIDDEN, x) if "; stderr ends: " in x else x
    if isinstance(x, list):
        return [redact(v) for v in x]
    if isinstance(x, dict):
        return {k: redact(v) for k, v in x.items() if k != "stderr"}
    return x


def log_path(out: Path, game: str) -> Path | None:
    if not GAME_RE.fullmatch(game):
        return None
    games = out / "games"
    for s in LOG_SUFFIXES:
        p = games / f"{game}{s}"
        if p.is_file() and not p.is_symlink():
            return p
    return None


def _rt(request: Request) -> SiteRuntime:
    rt: SiteRuntime = request.app.state.runtime
    return rt


def _is_host(request: Request) -> bool:
    e = auth.current_entrant(request)
    return e is not None and e.host


async def view(request: Request) -> Response:
    from referee.errors import UserError
    from referee.view import render_viewer
    from referee.view.events import events_from_log

    game = request.path_params["game"]
    path = log_path(_rt(request).site.league_out, game)
    if path is None:
        raise auth.HTTPProblem(404, f"no game {game} (finished games only; a running one is on /live/{game})")
    host = _is_host(request)

    def page() -> str:  # a log's frames and the page: decoding and rendering a long game takes a while
        data = events_from_log(path)
        return render_viewer(data if host else redact(data))

    try:
        return HTMLResponse(await trio.to_thread.run_sync(page))
    except UserError as exc:
        raise auth.HTTPProblem(422, str(exc)) from None


async def log_text(request: Request) -> Response:
    from referee.runtime.gamelog import read_log_bytes

    auth.require_host(request)
    game = request.path_params["game"]
    path = log_path(_rt(request).site.league_out, game)
    if path is None:
        raise auth.HTTPProblem(404, f"no game {game}")
    try:
        text = await trio.to_thread.run_sync(lambda: read_log_bytes(path.read_bytes()))
    except ValueError as exc:
        raise auth.HTTPProblem(422, f"{path.name}: {exc}") from None
    return Response(text, media_type="text/plain; charset=utf-8")


async def report(request: Request) -> Response:
    from referee.view.serve import servable

    auth.require_host(request)
    rel = request.path_params.get("path") or ""
    if not rel:
        return RedirectResponse("/report/report.html", 302)
    out = _rt(request).site.league_out
    target = out / rel
    if not servable(rel) or not target.is_file() or target.is_symlink():
        raise auth.HTTPProblem(404, f"no {rel} in the league's report")
    ctype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    if target.name.endswith((".jsonl", ".jsonl.zst", ".jsonl.gz")):
        ctype = "application/octet-stream"
    return FileResponse(target, media_type=ctype)


def version_games(rt: SiteRuntime, bot: str) -> list[dict[str, Any]]:
    """The league's games of pool entry ``bot``: its seat(s), ranks, scores, faults (in full)."""
    from referee.league.ledger import LEDGER_NAME, Ledger

    out = rt.site.league_out
    if not (out / LEDGER_NAME).exists():
        return []
    ledger = Ledger.in_dir(out, create=False)
    try:
        games = []
        for row in ledger.rows():
            if bot not in row.bots:
                continue
            seats = [i for i, b in enumerate(row.bots) if b == bot]
            games.append(
                {
                    "game": row.game_id,
                    "variant": row.variant,
                    "bots": row.bots,
                    "seats": seats,
                    "ranks": [row.ranks[i] for i in seats],
                    "scores": [row.scores[i] for i in seats],
                    "win_share": sum(row.win_shares[i] for i in seats),
                    "reason": row.reason,
                    "faults": [f for f in row.faults if f.get("seat") in seats or f.get("bot") == bot],
                    "view": f"/view/{row.game_id}",
                    "finished": row.finished,
                }
            )
        return games
    finally:
        ledger.close()


def stderr_tail(out: Path, game: str, bot: str) -> str | None:
    """``bot``'s stderr tail recorded in the log of ``game`` (None: no such log or record)."""
    from referee.runtime.gamelog import read_log_bytes

    path = log_path(out, game)
    if path is None:
        return None
    try:
        text = read_log_bytes(path.read_bytes())
    except ValueError:
        return None
    tails = []
    for line in text.splitlines():
        if b'"stderr"' not in line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        err = rec.get("stderr") if isinstance(rec, dict) else None
        if isinstance(err, dict) and err.get("bot") == bot:
            tails.append(str(err.get("tail", "")))
    return "\n".join(tails) if tails else None


def _version(request: Request) -> Any:
    return auth.version_of(request)


async def games_of_version(request: Request) -> Response:
    v = _version(request)
    games = await trio.to_thread.run_sync(version_games, _rt(request), v.bot)  # the whole ledger: in a thread
    return JSONResponse({"bot": v.bot, "games": games})


async def stderr_of_version(request: Request) -> Response:
    v = _version(request)
    tail = await trio.to_thread.run_sync(stderr_tail, _rt(request).site.league_out, request.path_params["game"], v.bot)
    if tail is None:
        raise auth.HTTPProblem(404, f"no stderr of {v.bot} in that game")
    return PlainTextResponse(tail)


def routes(site: SiteRuntime) -> list[BaseRoute]:
    return [
        Route("/view/{game}", view, name="view_game"),
        Route("/log/{game}", log_text, name="log_game"),
        Route("/report/", report, name="report_index"),
        Route("/report/{path:path}", report, name="report_file"),
        Route("/api/versions/{vid}/games", games_of_version, name="api_version_games"),
        Route("/api/versions/{vid}/games/{game}/stderr", stderr_of_version, name="api_version_stderr"),
    ]
