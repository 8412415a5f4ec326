"""The site's pages (referee/site/pages.py) against the app: login, the leaderboard and its plots, an
entry's and a version's pages and what stays private, the upload form, the live list, the viewer
shell, the night's verify. Fast: the store and the ledger are filled directly, no bot is run."""

from __future__ import annotations

import json
import re

import httpx
import msgspec

from referee.league.ledger import GameRow, Ledger
from referee.site import pages
from referee.site.runtime import SiteRuntime
from referee.site.store import RatingPoint
from referee.view.live import _me, live_path
from tests.site.test_api import login
from tests.site.test_archive import good_tar

SECRETS = ("STDERR-SECRET", "BUILD-SECRET", "CHECK-SECRET", "ERROR-SECRET")


def _standings(runtime: SiteRuntime, rows: list[tuple[str, float, float, int]]) -> None:
    out = runtime.site.league_out
    out.mkdir(parents=True, exist_ok=True)
    bots = [
        {"place": i + 1, "bot": b, "mu": mu, "sigma": s, "ordinal": mu - 3 * s, "games": g, "win_share": 0.5}
        for i, (b, mu, s, g) in enumerate(rows)
    ]
    (out / "standings.json").write_text(json.dumps({"scopes": {"overall": {"bots": bots}}}))


def _active_version(runtime: SiteRuntime, name: str, *, build_log: str = "", stderr: str = "") -> int:
    """An entrant ``name`` with an active version that played one game (with a crash fault)."""
    store = runtime.store
    e = store.entrant_named(name)
    assert e is not None
    v = store.add_version(e, "/nowhere.tar.gz")
    for state in ("building", "checking"):
        store.move(v.id, state)
    report = {"ok": True, "checks": [{"name": "startup", "ok": True, "detail": f"fine; stderr ends: '{stderr}'"}]}
    store.move(v.id, "candidate", build_log=build_log, check_report=report)
    store.move(v.id, "active", note="promoted by the test")
    out = runtime.site.league_out
    out.mkdir(parents=True, exist_ok=True)
    with Ledger.in_dir(out) as ledger:
        bots = [v.bot, "house-random", "house-random-2"]
        fault = {"seat": 0, "bot": v.bot, "fault": "crash", "detail": f"exited 1; stderr ends: '{stderr}'"}
        ledger.record(
            GameRow(
                game_id=f"kwartet-3p-L00000{v.id}-d1-r0",
                variant="kwartet",
                size=3,
                table=1,
                deal=1,
                rotation=0,
                seed=1,
                bots=bots,
                scores=[0.0, 1.0, 2.0],
                ranks=[3, 2, 1],
                win_shares=[0.0, 0.0, 1.0],
                forfeits=[1, 0, 0],
                faults=[fault],
                think=[],
                log_path=None,
                reason="forfeit",
                wall_ms=5.0,
                finished=1.0,
            )
        )
    return v.id


async def test_login_logout_and_a_wrong_token(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    token = runtime.store.add_entrant("alice")
    page = await client.get("/login?next=/upload")
    assert page.status_code == 200 and 'name="next" value="/upload"' in page.text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None
    r = await client.post("/login", data={"token": "rt_wrong", "csrf": csrf[1]})
    assert r.status_code == 303 and "error=" in r.headers["location"]
    assert "That token is not valid." in (await client.get(r.headers["location"])).text
    r = await client.post("/login", data={"token": token, "csrf": "forged"})
    assert r.status_code == 403
    r = await client.post("/login", data={"token": token, "csrf": csrf[1], "next": "/upload"})
    assert r.status_code == 303 and r.headers["location"] == "/upload"
    home = await client.get("/")
    assert 'data-testid="who">alice' in home.text and "Log out" in home.text
    session_csrf = re.search(r'name="csrf" value="([^"]+)"', home.text)
    assert session_csrf is not None
    assert (await client.post("/logout", data={"csrf": "forged"})).status_code == 403
    assert (await client.post("/logout", data={"csrf": session_csrf[1]})).status_code == 303
    assert "Log in" in (await client.get("/")).text


async def test_leaderboard_intervals_and_rating_plots(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    runtime.store.add_entrant("alice")
    assert 'data-testid="leaderboard-empty"' in (await client.get("/")).text
    vid = _active_version(runtime, "alice")
    bot = runtime.store.version(vid).bot  # type: ignore[union-attr]
    _standings(runtime, [(bot, 30.0, 2.0, 12), ("house-random", 25.0, 3.0, 12)])
    runtime.store.add_ratings({bot: (26.0, 4.0, 3)}, at=100.0)
    runtime.store.add_ratings({bot: (30.0, 2.0, 12)}, at=200.0)
    page = (await client.get("/")).text
    assert 'data-testid="leaderboard"' in page
    assert "24.00" in page and "24.0 to 36.0" in page  # ordinal 30 - 6, interval 30 +- 6
    assert f'<a href="/entries/alice">{bot}</a>' in page and "house</span>" in page
    assert 'data-points="2"' in page and "from 14.00 (3 games) to 24.00 (12 games)" in page
    assert "data-refresh" in page and "site.js" in page


def test_rating_history_svg() -> None:
    assert "no games yet" in pages.rating_history_svg("b", [])
    one = pages.rating_history_svg("b<x>", [RatingPoint(1.0, 25.0, 1.0, 2)])
    assert 'data-points="1"' in one and "b&lt;x&gt;" in one and "<line" in one
    flat = pages.rating_history_svg("b", [RatingPoint(1.0, 0.0, 0.0, 2), RatingPoint(2.0, 0.0, 0.0, 4)])
    assert "<polygon" in flat and "nan" not in flat


async def test_private_stays_private(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    """An entrant's stderr tails, build log, check-bot details and error text: its owner and the host
    see them; another entrant and an anonymous visitor get 403 for the version's page, 404 for what is
    not there, and no private text in any page."""
    alice = runtime.store.add_entrant("alice")
    bob = runtime.store.add_entrant("bob")
    boss = runtime.store.add_entrant("boss", host=True)
    vid = _active_version(runtime, "alice", build_log="BUILD-SECRET", stderr="STDERR-SECRET")
    e = runtime.store.entrant_named("alice")
    assert e is not None
    failed = runtime.store.add_version(e, "/nowhere.tar.gz")
    runtime.store.move(failed.id, "failed", error="ERROR-SECRET in your build", fix="fix it")
    report = {"ok": False, "checks": [{"name": "hands", "ok": False, "detail": "CHECK-SECRET"}]}
    runtime.store.move(failed.id, "failed", check_report=report)
    game = f"kwartet-3p-L00000{vid}-d1-r0"
    public = ["/", "/entries/alice", "/live", "/night", "/entries/bob", f"/watch/{game}.frames.js"]

    async def everything(expect_version: int) -> str:
        text = ""
        for path in public:
            r = await client.get(path)
            assert r.status_code in (200, 404), (path, r.status_code)
            text += r.text
        for v in (vid, failed.id):
            r = await client.get(f"/versions/{v}")
            assert r.status_code == expect_version, r.text
            text += r.text
        return text

    text = await everything(403)  # anonymous
    assert not [s for s in SECRETS if s in text], text
    assert "log in as its owner" in text and "its stderr is shown to its owner and the host only" in text
    assert (await client.get("/versions/999")).status_code == 404
    assert (await client.get("/versions/x")).status_code == 404
    assert (await client.get("/entries/nobody")).status_code == 404

    await login(client, bob)
    text = await everything(403)
    assert not [s for s in SECRETS if s in text], text
    assert "another entrant&#39;s version" in text

    for who in (alice, boss):
        client.cookies.clear()
        await login(client, who)
        text = await everything(200)
        assert all(s in text for s in SECRETS), [s for s in SECRETS if s not in text]
        page = (await client.get(f"/versions/{vid}")).text
        assert f"/api/versions/{vid}/games/{game}/stderr" in page and "BUILD-SECRET" in page
        entry = (await client.get("/entries/alice")).text
        assert "ERROR-SECRET" in entry and f'href="/versions/{failed.id}"' in entry


async def test_version_page_shows_the_steps_and_the_failure(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    token = runtime.store.add_entrant("alice")
    await login(client, token)
    e = runtime.store.entrant_named("alice")
    assert e is not None
    v = runtime.store.add_version(e, "/x.tar.gz")
    runtime.store.move(v.id, "building")
    page = (await client.get(f"/versions/{v.id}")).text
    assert 'data-testid="state">building' in page and 'aria-current="step">building' in page
    assert "data-final" not in page
    runtime.store.move(v.id, "failed", build_log="cc: error", error="the build failed", fix="fix the build")
    page = (await client.get(f"/versions/{v.id}")).text
    assert 'data-testid="failure"' in page and "error: the build failed" in page and "fix: fix the build" in page
    assert "cc: error" in page and "data-final" in page


async def test_upload_form_redirects_to_the_version(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    token = runtime.store.add_entrant("alice")
    r = await client.get("/upload")
    assert r.status_code == 303 and r.headers["location"] == "/login?next=/upload"
    assert (await client.post("/upload", files={"archive": ("b.tar.gz", good_tar())})).status_code == 401
    await login(client, token)
    form = (await client.get("/upload")).text
    assert 'enctype="multipart/form-data"' in form
    csrf = re.search(r'name="csrf" value="([^"]+)"', form)
    assert csrf is not None
    r = await client.post("/upload", data={"csrf": "forged"}, files={"archive": ("b.tar.gz", good_tar())})
    assert r.status_code == 403 and "CSRF" in r.text
    r = await client.post("/upload", data={"csrf": csrf[1]}, files={"archive": ("b.txt", b"hello")})
    assert r.status_code == 400 and "neither a zip nor a tar.gz" in r.text and "<form" in r.text
    r = await client.post("/upload", data={"csrf": csrf[1]}, files={"archive": ("b.tar.gz", good_tar())})
    assert r.status_code == 303, r.text
    vid = int(r.headers["location"].rsplit("/", 1)[1])
    v = runtime.store.version(vid)
    assert v is not None and v.entrant == "alice" and v.state == "received" and v.manifest
    page = (await client.get(r.headers["location"])).text
    assert "alice-v1" in page and 'data-testid="state">received' in page
    assert runtime.wake.is_set()


async def test_live_list_and_the_viewer_shell(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    assert 'data-testid="live-empty"' in (await client.get("/live")).text
    game = "kwartet-3p-L000009-d1-r0"
    path = live_path(runtime.site.league_out, game)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "format": "card-referee-frames",
        "version": 2,
        "game": game,
        "variant": "kwartet",
        "seats": [{"bot": "a"}, {"bot": "b"}, {"bot": "c"}],
        "deck": {"cards": []},
        "writer": msgspec.to_builtins(_me()),
    }
    path.write_text(json.dumps(header) + "\n" + json.dumps(["S", 0, [0, 1, 2], {}]) + "\n")
    page = (await client.get("/live")).text
    assert f'href="/watch/viewer.html?game={game}&amp;live=/live/{game}"' in page and "a, b, c" in page
    shell = await client.get("/watch/viewer.html")
    assert shell.status_code == 200 and 'data-testid="viewer"' in shell.text and 'href="/live"' in shell.text
    assert (await client.get(f"/watch/{game}.frames.js")).status_code == 404  # not finished yet
    assert (await client.get("/watch/..%2Fsite.frames.js")).status_code == 404


async def test_night_verify_is_the_hosts(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    page = (await client.get("/night")).text
    assert 'data-testid="verify-none"' in page and "No report yet" in page and "Verify now" not in page
    assert (await client.post("/night/verify", data={})).status_code == 401
    token = runtime.store.add_entrant("boss", host=True)
    csrf = await login(client, token)
    assert "Verify now" in (await client.get("/night")).text
    assert (await client.post("/night/verify", data={"csrf": "forged"})).status_code == 403
    r = await client.post("/night/verify", data={"csrf": csrf})
    assert r.status_code == 303
    page = (await client.get("/night")).text
    assert 'data-testid="verify"' in page and "error: " in page and "no such directory" in page
