"""The site's ASGI app (Starlette) and ``referee host``'s server (Hypercorn's trio worker).

:func:`make_app` assembles the routes: the API (:mod:`referee.site.api`, ``/api/...``), the login
(``POST /login``, ``POST /logout``), the pages (:func:`referee.site.pages.routes`), ``/static``,
the league's report and games (``/report/...``) and the live feed (``/live/GAME``, server-sent
events). Its middleware: the access log (one JSON line per request) and the body size limit. Its
lifespan starts the background work (:mod:`referee.site.pipeline`: the queue and the ladder) in a
trio nursery and cancels it on the way out (no bot outlives the site: every bot process is killed in
a shielded scope by the runtime).

:func:`serve` runs it: ``hypercorn.trio.serve`` on ``--bind`` (default 127.0.0.1:8000), until
Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import trio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from referee.errors import UserError
from referee.site import auth
from referee.site.runtime import SiteRuntime

STATIC = Path(__file__).parent / "static"


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or "application/json" in request.headers.get("accept", "")


async def _problem(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, auth.HTTPProblem)
    if _wants_json(request):
        return JSONResponse({"error": exc.message}, exc.status, headers=exc.headers)
    return Response(f"error: {exc.message}\n", exc.status, headers=exc.headers, media_type="text/plain")


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if _wants_json(request):
        return JSONResponse({"error": exc.detail}, exc.status_code)
    return Response(f"error: {exc.detail}\n", exc.status_code, media_type="text/plain")


def _safe_next(target: str | None) -> str:
    """Only a path on this site (no //host, no scheme): no open redirect."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


async def login(request: Request) -> Response:
    """``POST /login`` (form: ``token``, ``csrf``, optional ``next``): a session cookie, then a redirect."""
    rt: SiteRuntime = request.app.state.runtime
    wait = rt.login_limit.hit(auth.client_address(request))
    if wait is not None:
        raise auth.HTTPProblem(429, f"too many logins from this address: try again in {wait:.0f} s")
    form = await request.form()
    auth.check_login_csrf(request, form)
    token = form.get("token")
    entrant = rt.store.entrant_by_token(token) if isinstance(token, str) and token else None
    if entrant is None:
        return RedirectResponse("/login?error=That+token+is+not+valid.", 303)
    sid, _ = rt.store.new_session(entrant, rt.site.settings.session_hours)
    nxt = form.get("next")
    resp = RedirectResponse(_safe_next(nxt if isinstance(nxt, str) else None), 303)
    auth.set_session(request, resp, sid)
    return resp


async def logout(request: Request) -> Response:
    rt: SiteRuntime = request.app.state.runtime
    form = await request.form()
    auth.check_csrf(request, form)
    sid = request.cookies.get(auth.SESSION_COOKIE)
    if sid:
        rt.store.end_session(sid)
    resp = RedirectResponse("/", 303)
    resp.delete_cookie(auth.SESSION_COOKIE)
    return resp


def make_app(
    site: SiteRuntime,
    *,
    background: Callable[[SiteRuntime], Any] | None = None,
    access_log: Callable[[str], Any] | None = None,
) -> Starlette:
    """The site's app. ``background(site)``: an async function run in the lifespan's nursery (the
    pipeline and the ladder; None: nothing in the background, as in the API tests). ``access_log``
    receives one JSON line per request (default: standard error)."""
    from referee.site import api, games, live, pages

    routes: list[BaseRoute] = [
        Route("/login", login, methods=["POST"], name="login"),
        Route("/logout", logout, methods=["POST"], name="logout"),
        *api.routes(site),
        *games.routes(site),
        *live.routes(site),
        *pages.routes(site),
        Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with trio.open_nursery() as nursery:
            if background is not None:
                nursery.start_soon(background, site)
            try:
                yield
            finally:
                nursery.cancel_scope.cancel()

    write = access_log or (lambda line: print(line, file=sys.stderr, flush=True))
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={auth.HTTPProblem: _problem, HTTPException: _http_exception},
        middleware=[
            Middleware(auth.AccessLog, write=write),
            Middleware(auth.BodyLimit, limit=int(site.site.settings.upload_mb * 2**20)),
        ],
    )
    app.state.runtime = site
    return app


def served_app(site: SiteRuntime, **kw: Any) -> Any:
    """:func:`make_app`, behind ``site.trusted_proxies`` proxies: then the client address (rate limits,
    access log) is the one they forward in ``X-Forwarded-For`` (Hypercorn's ``ProxyFixMiddleware``)."""
    app: Any = make_app(site, **kw)
    hops = site.site.settings.trusted_proxies
    if hops:
        from hypercorn.middleware import ProxyFixMiddleware

        app = ProxyFixMiddleware(app, mode="legacy", trusted_hops=hops)
    return app


async def serve(
    site: SiteRuntime,
    host: str,
    port: int,
    *,
    background: Callable[[SiteRuntime], Any] | None = None,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the site on ``host:port`` with Hypercorn's trio worker until cancelled (Ctrl-C)."""
    from hypercorn.config import Config
    from hypercorn.trio import serve as hypercorn_serve

    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None  # the app writes its own, one JSON line per request
    config.errorlog = "-"
    config.graceful_timeout = 2.0
    config.include_server_header = False
    app = served_app(site, background=background)

    async def never() -> None:  # shutdown is Ctrl-C/SIGTERM (KeyboardInterrupt through trio), not hypercorn's
        await trio.sleep_forever()

    try:
        await hypercorn_serve(app, config, shutdown_trigger=never, task_status=task_status)
    except* OSError as group:
        exc = group.exceptions[0]
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UserError(f"--bind {config.bind[0]}: cannot listen there ({why}); choose another HOST:PORT") from None


def check_bind(host: str, port: int) -> None:
    """Refuse a HOST:PORT that cannot be listened on before anything starts (:class:`UserError`)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise UserError(
                f"--bind {host}:{port}: cannot listen there ({exc.strerror or exc}); choose another HOST:PORT"
            ) from None


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))
