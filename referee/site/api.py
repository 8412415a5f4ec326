"""The site's HTTP API (JSON). Documented for users in docs/SITE.md ("The API").

Authentication: ``Authorization: Bearer TOKEN`` (scripts, ``referee submit``) or the browser's
session cookie (then a state-changing request needs ``X-CSRF-Token`` or a ``csrf`` form field:
:mod:`referee.site.auth`). Errors are ``{"error": "..."}`` with the HTTP status.

=================================  ======================================================================
``GET  /api/me``                   who am I: ``{"name", "host"}`` (401 without a valid token)
``POST /api/versions``             submit a version: the archive (zip or tar.gz) as the raw body, or as the
                                   multipart field ``archive``; 201 ``Version`` (state ``received``)
``GET  /api/versions``             my versions (the host: everyone's, or ``?entrant=NAME``)
``GET  /api/versions/ID``          one version: state, transitions, manifest, check-bot report (owner/host)
``GET  /api/versions/ID/logs``     its build log and check-bot report as text (owner/host)
``POST /api/versions/ID/promote``  the host makes a candidate (or a rejected/retired version) active
``GET  /api/leaderboard``          the season's leaderboard (public)
``GET  /api/ratings/BOT``          a pool entry's rating history (public)
``GET  /api/games/running``        the games being played now (public)
=================================  ======================================================================
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from referee.site import auth
from referee.site.runtime import SiteRuntime


def _json(obj: Any, status: int = 200) -> Response:
    return Response(msgspec.json.encode(obj), status, media_type="application/json")


def _rt(request: Request) -> SiteRuntime:
    rt: SiteRuntime = request.app.state.runtime
    return rt


async def me(request: Request) -> Response:
    e = auth.require_entrant(request)
    return _json({"name": e.name, "host": e.host})


async def leaderboard(request: Request) -> Response:
    return _json({"leaderboard": _rt(request).leaderboard()})


def routes(site: SiteRuntime) -> list[BaseRoute]:
    return [
        Route("/api/me", me, name="api_me"),
        Route("/api/leaderboard", leaderboard, name="api_leaderboard"),
    ]
