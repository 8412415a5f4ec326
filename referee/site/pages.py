"""The site's HTML pages (Jinja2 templates in ``referee/site/templates/``, static files in
``referee/site/static/``). :func:`routes` gives the app (:func:`referee.site.app.make_app`) its routes.

Every page gets ``site_title``, ``entrant`` (or None), ``csrf`` (the session's CSRF token, for
forms) from :func:`context`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.templating import Jinja2Templates

from referee.site import auth
from referee.site.runtime import SiteRuntime

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))


def context(request: Request, **extra: Any) -> dict[str, Any]:
    rt: SiteRuntime = request.app.state.runtime
    return {
        "site_title": rt.site.settings.title,
        "entrant": auth.current_entrant(request),
        "csrf": auth.csrf_token(request),
        **extra,
    }


async def home(request: Request) -> Response:
    rt: SiteRuntime = request.app.state.runtime
    return TEMPLATES.TemplateResponse(request, "home.html", context(request, board=rt.leaderboard()))


async def login_page(request: Request) -> Response:
    token = auth.login_csrf(request)
    resp = TEMPLATES.TemplateResponse(
        request, "login.html", context(request, login_csrf=token, error=request.query_params.get("error"))
    )
    auth.set_login_csrf(request, resp, token)
    return resp


def routes(runtime: SiteRuntime) -> list[BaseRoute]:
    """The pages' routes (the app adds the API's, ``/login`` POST, ``/logout``, ``/static`` and ``/live``)."""
    return [
        Route("/", home, name="home"),
        Route("/login", login_page, methods=["GET"], name="login_page"),
    ]
