"""The site's HTML pages (Jinja2 templates in ``referee/site/templates/``, static files in
``referee/site/static/``). :func:`routes` gives the app (:func:`referee.site.app.make_app`) its routes.

=============================  =========================================================================
``GET  /``                     the season's leaderboard: rating, interval mu +- 3 sigma, games, and a
                               rating-over-time plot per entry (inline SVG, :func:`rating_history_svg`)
``GET  /login``                the login form (the entrant's token; ``POST /login`` is the back end's)
``GET  /entries/NAME``         an entrant's page: its versions and their states, its games (viewer
                               links) and faults; its owner and the host also see each failure's error
                               and fix, and the stderr links
``GET  /versions/ID``          one version (owner and host only): its states with times, the build log,
                               the check-bot results, the gauntlet and the duel, its games
``GET  /upload``, ``POST``     the upload form (zip or tar.gz, CSRF): hands the archive to
                               :func:`referee.site.api.receive_version`, then redirects to the version
``GET  /live``                 the games being played, each linked to the viewer following it
``GET  /watch/viewer.html``    the project's viewer shell: ``?game=GAME&live=/live/GAME`` follows a
                               running game by server-sent events, ``?game=GAME`` shows a finished one
``GET  /watch/GAME.frames.js`` a finished game's frames for that shell (stderr cut out but for the host)
``GET  /night``                the league's night: its report (the host's link) and ``referee verify``'s
                               result; ``POST /night/verify`` (the host, CSRF) runs verify again
=============================  =========================================================================

Every page gets ``site_title``, ``entrant`` (or None), ``csrf`` (the session's CSRF token, for
forms) from :func:`context`. Pages that change as the ladder plays (the leaderboard, the live list,
a version's state) carry ``data-refresh``: ``static/site.js`` fetches the page again every few
seconds and swaps those parts in place (nothing to reload by hand, no front-end build).

Privacy: what a bot wrote to stderr, its build log, its check-bot report (which quotes stderr),
its failure's error text and its sources are its owner's and the host's only. Everyone else gets a
403 page for ``/versions/ID`` and sees versions' states, games and faults with every ``stderr
ends`` part cut out (:func:`referee.site.games.redact`).
"""

from __future__ import annotations

import datetime as dt
import html
import math
from pathlib import Path
from typing import Any

import msgspec
import trio
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates

from referee.site import auth
from referee.site.runtime import SiteRuntime
from referee.site.store import RatingPoint, Version

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))

#: the steps a version goes through, in order (the progress line of a version's page)
STEPS = ("received", "building", "checking", "candidate", "active")
#: seconds between two refreshes of a page's data-refresh parts (static/site.js reads it)
REFRESH_S = 2.0


def _when(t: float | None) -> str:
    if t is None:
        return ""
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


TEMPLATES.env.filters["when"] = _when


def context(request: Request, **extra: Any) -> dict[str, Any]:
    rt: SiteRuntime = request.app.state.runtime
    return {
        "site_title": rt.site.settings.title,
        "entrant": auth.current_entrant(request),
        "csrf": auth.csrf_token(request),
        "refresh_ms": int(REFRESH_S * 1000),
        **extra,
    }


def _rt(request: Request) -> SiteRuntime:
    rt: SiteRuntime = request.app.state.runtime
    return rt


def _page(request: Request, name: str, code: int = 200, **extra: Any) -> Response:
    return TEMPLATES.TemplateResponse(request, name, context(request, **extra), status_code=code)


def problem_page(request: Request, exc: auth.HTTPProblem) -> Response:
    """An error as a page (the status, ``error: ...``, and a way on)."""
    resp = _page(request, "error.html", exc.status, status=exc.status, message=exc.message)
    resp.headers.update(exc.headers)
    return resp


# --------------------------------------------------------------------------
# the rating-over-time plot


def rating_history_svg(bot: str, points: list[RatingPoint], *, width: int = 160, height: int = 36) -> str:
    """A small inline SVG of ``bot``'s rating over time: the band mu +- 3 sigma and the line of the
    ordinal (mu - 3 sigma, what the leaderboard sorts by) after each ladder table. Accessible: an
    image with a title and a description giving the first and last figures."""
    title = f"{bot}: rating over time"
    if not points:
        desc = "no ladder table played yet"
        return (
            f'<svg role="img" class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
            f"<title>{html.escape(title)}</title><desc>{desc}</desc>"
            f'<text x="2" y="{height / 2 + 4:.0f}" font-size="11" fill="#555">no games yet</text></svg>'
        )
    lows = [p.mu - 3 * p.sigma for p in points]
    highs = [p.mu + 3 * p.sigma for p in points]
    lo, hi = min(lows), max(highs)
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    pad = 2.0
    n = len(points)

    def x(i: int) -> float:
        return pad + (width - 2 * pad) * (i / (n - 1) if n > 1 else 0.5)

    def y(v: float) -> float:
        return pad + (height - 2 * pad) * (1 - (v - lo) / (hi - lo))

    upper = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(highs))
    lower = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in reversed(list(enumerate(lows))))
    line = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(lows))
    first, last = points[0], points[-1]
    desc = (
        f"{n} point{'s' * (n != 1)}: from {first.mu - 3 * first.sigma:.2f} ({first.games} games) "
        f"to {last.mu - 3 * last.sigma:.2f} ({last.games} games); band: mu plus or minus 3 sigma"
    )
    dot = f'<circle cx="{x(n - 1):.1f}" cy="{y(lows[-1]):.1f}" r="2" fill="#1d3557"/>'
    if n == 1:
        band = (
            f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{y(highs[0]):.1f}" y2="{y(lows[0]):.1f}" '
            'stroke="#a8c5e6" stroke-width="4"/>'
        )
        path = ""
    else:
        band = f'<polygon points="{upper} {lower}" fill="#a8c5e6" opacity="0.6"/>'
        path = f'<polyline points="{line}" fill="none" stroke="#1d3557" stroke-width="1.5"/>'
    return (
        f'<svg role="img" class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'data-points="{n}"><title>{html.escape(title)}</title><desc>{html.escape(desc)}</desc>'
        f"{band}{path}{dot}</svg>"
    )


# --------------------------------------------------------------------------
# pages


async def home(request: Request) -> Response:
    rt = _rt(request)
    board = await rt.leaderboard_off_loop()
    plots = {row.bot: rating_history_svg(row.bot, rt.store.rating_history(row.bot)) for row in board}
    queue = len(rt.store.queue())
    return _page(request, "home.html", board=board, plots=plots, queue=queue, running=len(_running(rt)))


async def login_page(request: Request) -> Response:
    token = auth.login_csrf(request)
    nxt = request.query_params.get("next", "")
    resp = _page(request, "login.html", login_csrf=token, error=request.query_params.get("error"), next=nxt)
    auth.set_login_csrf(request, resp, token)
    return resp


def _viewer(request: Request) -> tuple[bool, str | None]:
    """(is the host, the entrant's name) of the request."""
    e = auth.current_entrant(request)
    return (e is not None and e.host, e.name if e is not None else None)


def _private_ok(request: Request, owner: str) -> bool:
    host, name = _viewer(request)
    return host or name == owner


async def _games(rt: SiteRuntime, bot: str, private: bool) -> list[dict[str, Any]]:
    """``bot``'s league games, the newest first (the ledger read in a thread: it grows all season)."""
    from referee.site.games import redact, version_games

    games = await trio.to_thread.run_sync(version_games, rt, bot)
    games.reverse()  # the newest first
    out = games if private else [redact(g) for g in games]
    for g in out:
        g["watch"] = f"/watch/viewer.html?game={g['game']}"
    return out


def _public_version(v: Version) -> dict[str, Any]:
    """What anyone sees of a version: no build log, no check-bot report, no error text, no folder."""
    return {"id": v.id, "bot": v.bot, "number": v.number, "state": v.state, "created": v.created, "updated": v.updated}


async def entry_page(request: Request) -> Response:
    rt = _rt(request)
    name = request.path_params["name"]
    who = rt.store.entrant_named(name)
    if who is None:
        return problem_page(request, auth.HTTPProblem(404, f"no entrant named {name!r}"))
    private = _private_ok(request, who.name)
    versions = rt.store.versions(entrant=who.name)
    versions.reverse()
    shown = []
    for v in versions:
        item = _public_version(v)
        if private:
            item.update(error=v.error, fix=v.fix)
        item["plot"] = rating_history_svg(v.bot, rt.store.rating_history(v.bot))
        shown.append(item)
    games: list[dict[str, Any]] = []
    for v in versions:
        if v.state in ("active", "retired"):
            for g in await _games(rt, v.bot, private):
                games.append({**g, "version": v.bot, "vid": v.id})
    games.sort(key=lambda g: g.get("finished") or 0, reverse=True)
    faults = [(g, f) for g in games for f in g["faults"]]
    return _page(request, "entry.html", who=who, versions=shown, games=games[:100], faults=faults, private=private)


def _check_rows(report: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not report:
        return []
    rows = []
    for c in report.get("checks", []):
        mark = "skipped" if c.get("skipped") else "passed" if c.get("ok") else "failed"
        rows.append({"name": c.get("name"), "mark": mark, "detail": c.get("detail"), "fix": c.get("fix")})
    return rows


async def version_page(request: Request) -> Response:
    rt = _rt(request)
    try:
        vid = int(request.path_params["vid"])
    except ValueError:
        return problem_page(request, auth.HTTPProblem(404, "no such version"))
    v = rt.store.version(vid)
    e = auth.current_entrant(request)
    if v is None:
        return problem_page(request, auth.HTTPProblem(404, "no such version"))
    if e is None:
        return problem_page(
            request, auth.HTTPProblem(403, "a version's page is its owner's and the host's: log in as its owner")
        )
    if not (e.host or e.name == v.entrant):
        return problem_page(
            request,
            auth.HTTPProblem(403, "this is another entrant's version: only its owner and the host may see it"),
        )
    transitions = rt.store.transitions(v.id)
    reached = {t.state for t in transitions}
    steps = [{"state": s, "done": s in reached, "current": s == v.state} for s in STEPS]
    games = await _games(rt, v.bot, True) if v.state in ("active", "retired") else []
    return _page(
        request,
        "version.html",
        v=v,
        steps=steps,
        transitions=transitions,
        checks=_check_rows(v.check_report),
        games=games[:100],
        plot=rating_history_svg(v.bot, rt.store.rating_history(v.bot)),
        duel=v.duel or {},
        gauntlet=v.gauntlet or {},
        final=v.state in ("active", "retired", "failed", "rejected"),
    )


async def upload_page(request: Request) -> Response:
    e = auth.current_entrant(request)
    if e is None:
        return RedirectResponse("/login?next=/upload", 303)
    rt = _rt(request)
    s = rt.site.settings
    return _page(request, "upload.html", upload_mb=s.upload_mb, per_hour=s.uploads_per_hour, error=None)


async def upload(request: Request) -> Response:
    """``POST /upload``: the form's archive to the back end's submission, then the version's page."""
    from referee.site.api import receive_version
    from referee.site.archive import ArchiveError, kind_of

    rt = _rt(request)
    try:
        entrant = auth.require_entrant(request)
        form = await request.form(max_files=1, max_fields=5)
        auth.check_csrf(request, form)
        part = form.get("archive")
        if not isinstance(part, UploadFile):
            raise auth.HTTPProblem(400, "choose your bot's archive (a zip or tar.gz of its folder) and upload again")
        data = await part.read()
        limit = rt.site.settings.uploads_per_hour
        if rt.store.recent_uploads(entrant, 3600) >= limit:
            raise auth.HTTPProblem(429, f"at most {limit} uploads an hour: wait a little and upload again")
        if not data:
            raise auth.HTTPProblem(400, "the file is empty: choose your bot's zip or tar.gz and upload again")
        try:
            kind = kind_of(data)
        except ArchiveError as exc:
            raise auth.HTTPProblem(400, str(exc)) from None
    except auth.HTTPProblem as exc:
        if exc.status in (400, 429):
            s = rt.site.settings
            return _page(
                request,
                "upload.html",
                exc.status,
                upload_mb=s.upload_mb,
                per_hour=s.uploads_per_hour,
                error=exc.message,
            )
        return problem_page(request, exc)
    v = await receive_version(rt, entrant, data, kind)
    return RedirectResponse(f"/versions/{v.id}", 303)


def _running(rt: SiteRuntime) -> list[dict[str, Any]]:
    from referee.site.live import running_json

    return running_json(rt)


async def live_page(request: Request) -> Response:
    games = _running(_rt(request))
    for g in games:
        g["watch"] = f"/watch/viewer.html?game={g['game']}&live={g['live']}"
    return _page(request, "live.html", games=games)


async def watch_shell(request: Request) -> Response:
    from referee.view.page import render_viewer_shell

    return HTMLResponse(render_viewer_shell(back_href="/live", back_label="live games"))


async def watch_frames(request: Request) -> Response:
    """A finished game's ``GAME.frames.js`` for the viewer shell, from the league's or a gauntlet's log."""
    from referee.errors import UserError
    from referee.site.games import GAME_RE, log_path, redact
    from referee.site.live import live_folders
    from referee.view.events import events_from_log
    from referee.view.page import frames_js

    game = request.path_params["game"]
    rt = _rt(request)
    path = None
    if GAME_RE.fullmatch(game):
        path = next((p for out in live_folders(rt) if (p := log_path(out, game)) is not None), None)
    if path is None:
        return Response(f"error: no finished game {game}\n", 404, media_type="text/plain")
    try:
        data = await trio.to_thread.run_sync(events_from_log, path)
    except UserError as exc:
        return Response(f"error: {exc}\n", 422, media_type="text/plain")
    host, _ = _viewer(request)
    if not host:
        data = redact(data)
    return Response(frames_js(data), media_type="text/javascript; charset=utf-8")


# --------------------------------------------------------------------------
# the night: report and verify


class VerifyResult(msgspec.Struct, frozen=True):
    """The last ``referee verify`` of the league's folder the site ran (kept in the app's state)."""

    at: float
    ok: bool
    line: str
    problems: list[str]
    running: bool


def verify_line(report: Any) -> str:
    """``referee verify``'s summary line for ``report`` (an :class:`referee.league.audit.AuditReport`)."""
    from referee.league.audit import KINDS

    ladder = f", {report.ladder} ladder game{'s' * (report.ladder != 1)}" if report.ladder else ""
    planned = f"{report.held} of {report.planned} planned games in the ledger{ladder}"
    if report.ok:
        return f"verified: all {report.verified} games replay and match their ledger rows; {planned}"
    counts = report.counts()
    found = ", ".join(f"{counts[k]} {k}" for k in KINDS if counts[k])
    n = len(report.problems)
    return (
        f"FAILED: {n} problem{'s' * (n != 1)} ({found}); {report.verified} of {report.rows} games verified; {planned}"
    )


def run_verify(out: Path) -> VerifyResult:
    import time

    from referee.errors import UserError
    from referee.league.audit import verify

    try:
        report = verify(out, jobs=1)
    except UserError as exc:
        return VerifyResult(time.time(), False, f"error: {exc}", [], False)
    return VerifyResult(
        time.time(), report.ok, verify_line(report), [p.line() for p in report.problems], report.running
    )


async def night_page(request: Request) -> Response:
    rt = _rt(request)
    out = rt.site.league_out
    result: VerifyResult | None = getattr(request.app.state, "verify_result", None)
    host, _ = _viewer(request)
    return _page(
        request,
        "night.html",
        has_report=(out / "report.html").is_file(),
        result=result,
        is_host=host,
        verifying=getattr(request.app.state, "verifying", False),
    )


async def night_verify(request: Request) -> Response:
    """``POST /night/verify`` (the host): run ``referee verify`` on the league's folder in a thread."""
    rt = _rt(request)
    try:
        auth.require_host(request)
        form = await request.form()
        auth.check_csrf(request, form)
    except auth.HTTPProblem as exc:
        return problem_page(request, exc)
    state = request.app.state
    if not getattr(state, "verifying", False):
        state.verifying = True
        try:
            state.verify_result = await trio.to_thread.run_sync(run_verify, rt.site.league_out)
        finally:
            state.verifying = False
    return RedirectResponse("/night", 303)


def routes(runtime: SiteRuntime) -> list[BaseRoute]:
    """The pages' routes (the app adds the API's, ``/login`` POST, ``/logout``, ``/static`` and ``/live/GAME``)."""
    return [
        Route("/", home, name="home"),
        Route("/login", login_page, methods=["GET"], name="login_page"),
        Route("/entries/{name}", entry_page, name="entry_page"),
        Route("/versions/{vid}", version_page, name="version_page"),
        Route("/upload", upload_page, methods=["GET"], name="upload_page"),
        Route("/upload", upload, methods=["POST"], name="upload"),
        Route("/live", live_page, name="live_page"),
        Route("/watch/viewer.html", watch_shell, name="watch_shell"),
        Route("/watch/{game}.frames.js", watch_frames, name="watch_frames"),
        Route("/night", night_page, methods=["GET"], name="night_page"),
        Route("/night/verify", night_verify, methods=["POST"], name="night_verify"),
    ]
