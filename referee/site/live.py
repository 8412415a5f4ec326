"""Games being played on the site, and ``GET /live/GAME``: a running game as server-sent events.

The games come from :mod:`referee.view.live` (the runtime writes each game's public events as it
plays them into ``OUT/live/``): the ladder's in ``DATA/league`` and the candidates' gauntlets in
``DATA/gauntlets/vID``. ``/live/GAME`` follows one (:func:`referee.view.live.follow`) and sends:

- ``event: header``: the header (the game, its variant, rules, seats and deck), once;
- ``event: event``: one per event record (``id:`` its index; data: ``{"i": its index, "event": the
  record}``, version 2 of docs/VIEWER-FORMAT.md, which the viewer expands into frames), the records
  so far first, then each as it is played;
- ``event: end``: the game is over (data: ``{"game": GAME, "view": "/view/GAME"}``), and the stream ends;
- ``event: error``: the game is not running (or its referee stopped), with ``{"error": ...}``.

``?from=N`` starts at record N (a reconnecting viewer). A crash's ``stderr ends`` part is cut from
the records for everyone but the host (:func:`referee.site.games.redact`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from referee.errors import UserError
from referee.site import auth
from referee.site.games import GAME_RE, redact
from referee.site.runtime import SiteRuntime
from referee.view.live import LiveGame


def live_folders(rt: SiteRuntime) -> list[Path]:
    """The output folders whose games the site plays: the league's, then every gauntlet's."""
    folders = [rt.site.league_out]
    gauntlets = rt.site.data / "gauntlets"
    if gauntlets.is_dir():
        folders += sorted(p for p in gauntlets.iterdir() if p.is_dir() and not p.is_symlink())
    return folders


class RunningGame(msgspec.Struct, frozen=True):
    """A game being played on the site: :class:`referee.view.live.LiveGame` (``game``), what it is for
    (``kind``: ``"ladder"`` or ``"gauntlet"``) and where to watch it (``live``)."""

    game: LiveGame
    kind: str
    live: str


def running(rt: SiteRuntime) -> list[RunningGame]:
    """The games being played now, each with its kind and its live URL."""
    from referee.view.live import running_games

    games = []
    for out in live_folders(rt):
        kind = "ladder" if out == rt.site.league_out else "gauntlet"
        games += [RunningGame(g, kind, f"/live/{g.game}") for g in running_games(out)]
    return games


def running_json(rt: SiteRuntime) -> list[dict[str, Any]]:
    """:func:`running` as the API answers it: the live game's fields, ``kind`` and ``live`` side by side."""
    return [{**msgspec.to_builtins(r.game), "kind": r.kind, "live": r.live} for r in running(rt)]


def _sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _folder_of(rt: SiteRuntime, game: str) -> Path | None:
    from referee.view.live import live_path

    for out in live_folders(rt):
        if live_path(out, game).exists():
            return out
    return None


async def stream(rt: SiteRuntime, game: str, start: int, host: bool) -> AsyncIterator[bytes]:
    from referee.view.live import follow

    out = _folder_of(rt, game)
    if out is None:
        yield _sse("error", {"error": f"{game} is not being played (a finished game is at /view/{game})"})
        return
    first = True
    try:
        async for item in follow(out, game, start):
            data = item if host else redact(item)
            yield _sse("header", data) if first else b"id: %d\n" % item["i"] + _sse("event", data)
            first = False
    except UserError as exc:
        yield _sse("error", {"error": str(exc)})
        return
    yield _sse("end", {"game": game, "view": f"/view/{game}"})


async def live(request: Request) -> Response:
    rt: SiteRuntime = request.app.state.runtime
    game = request.path_params["game"]
    if not GAME_RE.fullmatch(game):
        raise auth.HTTPProblem(404, f"{game!r} is not a game id")
    try:
        start = int(request.query_params.get("from", "0"))
    except ValueError:
        raise auth.HTTPProblem(400, "from=N: an event record's number") from None
    entrant = auth.current_entrant(request)
    host = entrant is not None and entrant.host
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(rt, game, max(0, start), host), media_type="text/event-stream", headers=headers)


def routes(site: SiteRuntime) -> list[BaseRoute]:
    return [Route("/live/{game}", live, name="live_game")]
