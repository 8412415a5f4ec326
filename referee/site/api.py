"""The site's HTTP API (JSON). Documented for users in docs/SITE.md ("The API").

Authentication: ``Authorization: Bearer TOKEN`` (scripts, ``referee submit``) or the browser's
session cookie (then a state-changing request needs ``X-CSRF-Token`` or a ``csrf`` form field:
:mod:`referee.site.auth`). Errors are ``{"error": "..."}`` with the HTTP status.

=================================  ======================================================================
``GET  /api/me``                   who am I: ``{"name", "host"}`` (401 without a valid token)
``POST /api/versions``             submit a version: the archive (zip or tar.gz) as the raw body, or as the
                                   multipart field ``archive``; 201 ``Version`` (state ``received``);
                                   the host may add ``?entrant=NAME`` (an upload for that entrant)
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

import uuid
from typing import Any

import msgspec
import trio
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from referee.site import auth
from referee.site.archive import FIX_ARCHIVE, ArchiveError, caps_of, kind_of, unpack
from referee.site.runtime import SiteRuntime
from referee.site.store import Entrant, Version


def _json(obj: Any, status: int = 200) -> Response:
    return Response(msgspec.json.encode(obj), status, media_type="application/json")


def _rt(request: Request) -> SiteRuntime:
    rt: SiteRuntime = request.app.state.runtime
    return rt


def version_json(rt: SiteRuntime, v: Version) -> dict[str, Any]:
    """A version as the API shows it to its owner and the host: the row, its transitions, its page."""
    data = msgspec.to_builtins(v)
    data["transitions"] = msgspec.to_builtins(rt.store.transitions(v.id))
    data["page"] = f"/versions/{v.id}"
    data.pop("archive", None)
    data.pop("folder", None)
    return data


async def me(request: Request) -> Response:
    e = auth.require_entrant(request)
    return _json({"name": e.name, "host": e.host})


async def leaderboard(request: Request) -> Response:
    return _json({"leaderboard": await _rt(request).leaderboard_off_loop()})


async def _upload_bytes(request: Request) -> bytes:
    ctype = request.headers.get("content-type", "")
    if ctype.startswith("multipart/form-data"):
        form = await request.form(max_files=1, max_fields=10)
        auth.check_csrf(request, form)
        part = form.get("archive")
        if not isinstance(part, UploadFile):
            raise auth.HTTPProblem(400, "the multipart form needs the archive as the file field 'archive'")
        return await part.read()
    auth.check_csrf(request)
    return await request.body()


async def submit(request: Request) -> Response:
    """``POST /api/versions``: a new version from an archive (see the module docstring)."""
    rt = _rt(request)
    entrant = auth.require_entrant(request)
    if entrant.host and request.query_params.get("entrant"):
        found = rt.store.entrant_named(request.query_params["entrant"])
        if found is None:
            raise auth.HTTPProblem(404, "no such entrant")
        entrant = found
    data = await _upload_bytes(request)
    limit = rt.site.settings.uploads_per_hour
    if rt.store.recent_uploads(entrant, 3600) >= limit:
        raise auth.HTTPProblem(429, f"at most {limit} uploads an hour: wait a little and upload again")
    if not data:
        raise auth.HTTPProblem(400, "the upload is empty: send the archive as the body, or as the form field 'archive'")
    try:
        kind = kind_of(data)
    except ArchiveError as exc:
        raise auth.HTTPProblem(400, str(exc)) from None
    v = await receive_version(rt, entrant, data, kind)
    status = 422 if v.state == "failed" else 201
    return _json(version_json(rt, v), status)


async def receive_version(rt: SiteRuntime, entrant: Entrant, data: bytes, kind: str) -> Version:
    """Keep the archive, add the version (``received``), unpack it into its own fresh folder (a refused
    archive: the version is ``failed`` with the reason), and wake the pipeline."""
    site = rt.site
    folder = site.uploads_dir / entrant.name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{uuid.uuid4().hex}.{'zip' if kind == 'zip' else 'tar.gz'}"
    path.write_bytes(data)
    v = rt.store.add_version(entrant, str(path))
    dest = site.bots_dir / entrant.name / f"v{v.number}"
    try:
        got = await trio.to_thread.run_sync(unpack, data, dest, caps_of(rt.site.settings))
    except ArchiveError as exc:
        return rt.store.move(v.id, "failed", note="the archive was refused", error=str(exc), fix=FIX_ARCHIVE)
    v = rt.store.move(
        v.id,
        "received",
        note=f"unpacked: {got.files} files, {got.size:,} bytes",
        folder=str(got.root),
        manifest=msgspec.to_builtins(got.manifest),
    )
    rt.poke()
    return v


def _version_of(request: Request) -> Version:
    return auth.version_of(request)


async def versions(request: Request) -> Response:
    rt = _rt(request)
    entrant = auth.require_entrant(request)
    who = request.query_params.get("entrant") if entrant.host else entrant.name
    return _json({"versions": [version_json(rt, v) for v in rt.store.versions(entrant=who)]})


async def version(request: Request) -> Response:
    return _json(version_json(_rt(request), _version_of(request)))


def logs_text(v: Version) -> str:
    """A version's build log and check-bot report as plain text (what only its owner and the host see)."""
    lines = [f"version {v.id} ({v.bot}): {v.state}"]
    if v.error:
        lines += ["", "error:", v.error]
    if v.fix:
        lines += ["", "fix:", v.fix]
    lines += ["", "build log:", v.build_log or "(no build)"]
    report = v.check_report
    if report:
        lines += ["", f"check-bot: {'passed' if report.get('ok') else 'failed'}"]
        for c in report.get("checks", []):
            mark = "SKIP" if c.get("skipped") else "PASS" if c.get("ok") else "FAIL"
            lines.append(f"  {mark} {c.get('name')}: {c.get('detail')}")
            if c.get("fix"):
                lines.append(f"       fix: {c['fix']}")
    return "\n".join(lines) + "\n"


async def logs(request: Request) -> Response:
    return PlainTextResponse(logs_text(_version_of(request)))


async def promote_route(request: Request) -> Response:
    from referee.errors import UserError
    from referee.site.pipeline import promote

    rt = _rt(request)
    auth.require_host(request)
    auth.check_csrf(request)
    v = _version_of(request)
    try:
        v = promote(rt.store, v.id, "the host")
        rt.poke()
    except UserError as exc:
        raise auth.HTTPProblem(409, str(exc)) from None
    return _json(version_json(rt, v))


async def ratings(request: Request) -> Response:
    bot = request.path_params["bot"]
    return _json({"bot": bot, "ratings": _rt(request).store.rating_history(bot)})


async def running(request: Request) -> Response:
    from referee.site.live import running_json

    return _json({"games": running_json(_rt(request))})


def routes(site: SiteRuntime) -> list[BaseRoute]:
    return [
        Route("/api/me", me, name="api_me"),
        Route("/api/leaderboard", leaderboard, name="api_leaderboard"),
        Route("/api/versions", submit, methods=["POST"], name="api_submit"),
        Route("/api/versions", versions, methods=["GET"], name="api_versions"),
        Route("/api/versions/{vid}", version, name="api_version"),
        Route("/api/versions/{vid}/logs", logs, name="api_logs"),
        Route("/api/versions/{vid}/promote", promote_route, methods=["POST"], name="api_promote"),
        Route("/api/ratings/{bot}", ratings, name="api_ratings"),
        Route("/api/games/running", running, name="api_running"),
    ]
