"""Who is asking: tokens, browser sessions, CSRF, rate limits and request size limits.

- **Tokens.** Scripts send ``Authorization: Bearer TOKEN`` (the token ``referee host SITE.toml
  add-entrant NAME`` printed once; the store keeps its sha256). Such requests need no CSRF token:
  a browser never adds that header by itself.
- **Sessions.** ``POST /login`` with the token sets the cookie :data:`SESSION_COOKIE` (random id,
  stored hashed; ``HttpOnly``, ``SameSite=Lax``, ``Secure`` unless ``site.cookie_secure = false``).
- **CSRF.** Every state-changing request authenticated by the session cookie must carry the
  session's CSRF token (a session-bound token): the form field ``csrf`` or the header
  ``X-CSRF-Token``. The login form itself uses a double-submit cookie (:data:`LOGIN_CSRF_COOKIE`
  equal to the form's ``csrf``). :func:`csrf_token(request)` gives the token a page puts in a form.
- **Rate limits.** :class:`RateLimiter` (a sliding window in memory): logins per client address per
  minute; uploads per entrant per hour are counted from the store (they survive a restart).
- **Size.** :class:`BodyLimit` refuses a request whose body is larger than ``site.upload_mb``
  (by its Content-Length, and while it streams), with 413.

:func:`current_entrant` and :func:`require_owner_or_host` are what every private route uses.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee.site.store import Entrant, Store, Version

SESSION_COOKIE = "referee_session"
LOGIN_CSRF_COOKIE = "referee_login_csrf"
CSRF_HEADER = "x-csrf-token"


class HTTPProblem(Exception):
    """An error answer: status and a message (``{"error": ...}`` for the API, a page for the pages)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def _store(request: Request) -> Store:
    store: Store = request.app.state.runtime.store
    return store


def bearer_token(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def current_entrant(request: Request) -> Entrant | None:
    """The entrant making the request (by its bearer token, else its session cookie), or None.
    A wrong bearer token is a 401 (a script should hear that its token is wrong, not be anonymous)."""
    cached = request.scope.get("referee.entrant", False)
    if cached is not False:
        return cached  # type: ignore[no-any-return]
    store = _store(request)
    entrant: Entrant | None = None
    token = bearer_token(request)
    if token is not None:
        entrant = store.entrant_by_token(token)
        if entrant is None:
            raise HTTPProblem(
                401, "the token is not valid (ask the host for a new one)", {"WWW-Authenticate": "Bearer"}
            )
        request.scope["referee.auth"] = "token"
    else:
        sid = request.cookies.get(SESSION_COOKIE)
        found = store.session(sid) if sid else None
        if found is not None:
            entrant, request.scope["referee.csrf"] = found
            request.scope["referee.auth"] = "session"
    request.scope["referee.entrant"] = entrant
    return entrant


def require_entrant(request: Request) -> Entrant:
    entrant = current_entrant(request)
    if entrant is None:
        raise HTTPProblem(401, "log in first (or send Authorization: Bearer TOKEN)", {"WWW-Authenticate": "Bearer"})
    return entrant


def require_host(request: Request) -> Entrant:
    entrant = require_entrant(request)
    if not entrant.host:
        raise HTTPProblem(403, "only the host may do this")
    return entrant


def require_owner_or_host(request: Request, version: Version | None) -> Entrant:
    """The entrant, if it owns ``version`` or is the host; else 401/403 (404 for no version)."""
    entrant = require_entrant(request)
    if version is None:
        raise HTTPProblem(404, "no such version")
    if not entrant.host and entrant.name != version.entrant:
        raise HTTPProblem(403, "this is another entrant's version: only its owner and the host may see it")
    return entrant


def version_of(request: Request) -> Version:
    """The version named by the route's ``vid``, for its owner or the host only (else 403/404)."""
    try:
        vid = int(request.path_params["vid"])
    except ValueError:
        raise HTTPProblem(404, "no such version") from None
    v = _store(request).version(vid)
    require_owner_or_host(request, v)
    assert v is not None
    return v


def csrf_token(request: Request) -> str | None:
    """The CSRF token a page puts in its forms (the session's), or None when not logged in by cookie."""
    current_entrant(request)
    token = request.scope.get("referee.csrf")
    return token if isinstance(token, str) else None


def check_csrf(request: Request, form: Any = None) -> None:
    """For a state-changing request authenticated by the session cookie: its CSRF token must match
    (form field ``csrf`` or header ``X-CSRF-Token``); bearer-token requests pass. 403 otherwise."""
    current_entrant(request)
    if request.scope.get("referee.auth") != "session":
        return
    expected = request.scope.get("referee.csrf")
    given = request.headers.get(CSRF_HEADER) or (form.get("csrf") if form is not None else None)
    if not isinstance(expected, str) or not isinstance(given, str) or not hmac.compare_digest(expected, given):
        raise HTTPProblem(403, "the form's CSRF token is missing or wrong: reload the page and try again")


def login_csrf(request: Request) -> str:
    """The double-submit token of the login form: the cookie's, or a new one (set it with
    :func:`set_login_csrf`)."""
    return request.cookies.get(LOGIN_CSRF_COOKIE) or secrets.token_urlsafe(24)


def set_login_csrf(request: Request, response: Response, token: str) -> None:
    """Set the login form's double-submit cookie on ``response``."""
    rt = request.app.state.runtime
    response.set_cookie(
        LOGIN_CSRF_COOKIE, token, max_age=3600, httponly=True, samesite="strict", secure=rt.site.settings.cookie_secure
    )


def set_session(request: Request, response: Response, sid: str) -> None:
    rt = request.app.state.runtime
    s = rt.site.settings
    response.set_cookie(
        SESSION_COOKIE, sid, max_age=int(s.session_hours * 3600), httponly=True, samesite="lax", secure=s.cookie_secure
    )


def check_login_csrf(request: Request, form: Any) -> None:
    cookie = request.cookies.get(LOGIN_CSRF_COOKIE)
    given = form.get("csrf")
    if not cookie or not isinstance(given, str) or not hmac.compare_digest(cookie, given):
        raise HTTPProblem(403, "the login form's CSRF token is missing or wrong: reload the page and try again")


class RateLimiter:
    """At most ``limit`` events per ``window`` seconds per key (a sliding window, in memory)."""

    def __init__(self, limit: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self.hits: dict[str, deque[float]] = defaultdict(deque)

    def hit(self, key: str) -> float | None:
        """Count one event; None if allowed, else the seconds until the next one would be."""
        now = self.clock()
        q = self.hits[key]
        while q and q[0] <= now - self.window:
            q.popleft()
        if len(q) >= self.limit:
            return q[0] + self.window - now
        q.append(now)
        return None


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes gets 413 (declared or streamed)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await self._refuse(scope, receive, send)
                return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge()
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if not started:
                await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        mb = self.limit / 2**20
        resp = JSONResponse({"error": f"the request is larger than this site's limit of {mb:g} MiB"}, 413)
        await resp(scope, receive, send)


class _TooLarge(Exception):
    pass


class AccessLine(msgspec.Struct, kw_only=True):
    """One line of the access log (JSON): when, who, what, how it ended and how long it took."""

    time: str  # UTC, ISO 8601, to the second
    client: str | None  # the client's address (the forwarded one behind trusted proxies)
    method: str
    path: str
    status: int
    bytes: int  # of the response body
    ms: float
    entrant: str | None  # who it was, when known


class AccessLog:
    """ASGI middleware: one JSON line per request (time, client, method, path, status, bytes, ms,
    entrant) to ``write``."""

    def __init__(self, app: ASGIApp, write: Callable[[str], Any]) -> None:
        self.app = app
        self.write = write

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.monotonic()
        status = 0
        size = 0

        async def watched(message: Message) -> None:
            nonlocal status, size
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                size += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, watched)
        finally:
            entrant = scope.get("referee.entrant")
            client = scope.get("client")
            line = AccessLine(
                time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                client=client[0] if client else None,
                method=str(scope.get("method")),
                path=str(scope.get("path")),
                status=status or 500,
                bytes=size,
                ms=round((time.monotonic() - t0) * 1000, 1),
                entrant=entrant.name if isinstance(entrant, Entrant) else None,
            )
            self.write(msgspec.json.encode(line).decode())
