"""The site's API: tokens, sessions, CSRF, privacy between entrants, rate and size limits, uploads."""

from __future__ import annotations

import io
import json
import re
import tarfile

import httpx

from referee.site.runtime import SiteRuntime
from tests.site.test_archive import GOOD_MANIFEST, file_info, good_tar, tgz


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def login(client: httpx.AsyncClient, token: str) -> str:
    """Log in through the form (double-submit CSRF); return the session's CSRF token from a page."""
    page = await client.get("/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None
    r = await client.post("/login", data={"token": token, "csrf": csrf[1]})
    assert r.status_code == 303, r.text
    home = await client.get("/")
    m = re.search(r'name="csrf" value="([^"]+)"', home.text)
    assert m is not None, home.text
    return m[1]


async def test_tokens(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    token = runtime.store.add_entrant("alice")
    assert (await client.get("/api/me")).status_code == 401
    r = await client.get("/api/me", headers=bearer("rt_wrong"))
    assert r.status_code == 401 and "not valid" in r.json()["error"]
    r = await client.get("/api/me", headers=bearer(token))
    assert r.json() == {"name": "alice", "host": False}
    logged = json.loads(runtime.log[-1])
    assert (logged["path"], logged["status"], logged["entrant"]) == ("/api/me", 200, "alice")
    assert token not in runtime.store.db.execute("SELECT token_sha256 FROM entrants").fetchone()[0]


async def test_submit_and_privacy_between_entrants(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    alice, bob = runtime.store.add_entrant("alice"), runtime.store.add_entrant("bob")
    host = runtime.store.add_entrant("boss", host=True)
    r = await client.post("/api/versions", content=good_tar(), headers=bearer(alice))
    assert r.status_code == 201, r.text
    v = r.json()
    assert v["state"] == "received" and v["bot"] == "alice-v1" and v["manifest"]["runtime"] == "python"
    assert [t["state"] for t in v["transitions"]] == ["received", "received"]
    vid = v["id"]
    for path in (f"/api/versions/{vid}", f"/api/versions/{vid}/logs"):
        assert (await client.get(path, headers=bearer(alice))).status_code == 200
        r = await client.get(path, headers=bearer(bob))
        assert r.status_code == 403 and "another entrant's" in r.json()["error"]
        assert (await client.get(path)).status_code == 401
        assert (await client.get(path, headers=bearer(host))).status_code == 200
    assert (await client.get("/api/versions/999", headers=bearer(alice))).status_code == 404
    assert [x["id"] for x in (await client.get("/api/versions", headers=bearer(bob))).json()["versions"]] == []
    assert [x["id"] for x in (await client.get("/api/versions", headers=bearer(host))).json()["versions"]] == [vid]
    r = await client.post("/api/versions?entrant=bob", content=good_tar(), headers=bearer(host))
    assert r.status_code == 201 and r.json()["bot"] == "bob-v1"  # the host uploads for an entrant
    r = await client.post("/api/versions?entrant=bob", content=good_tar(), headers=bearer(alice))
    assert r.status_code == 201 and r.json()["bot"] == "alice-v2"  # an entrant only for itself
    r = await client.post(f"/api/versions/{vid}/promote", headers=bearer(alice))
    assert r.status_code == 403
    r = await client.post(f"/api/versions/{vid}/promote", headers=bearer(host))
    assert r.status_code == 409 and "only a candidate" in r.json()["error"]


async def test_multipart_upload_and_a_malicious_archive(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    alice = runtime.store.add_entrant("alice")
    files = {"archive": ("bot.tar.gz", good_tar(), "application/gzip")}
    r = await client.post("/api/versions", files=files, headers=bearer(alice))
    assert r.status_code == 201, r.text
    evil = tgz([(file_info("referee.toml"), GOOD_MANIFEST), (file_info("../../etc/cron.d/x"), b"x")])
    r = await client.post("/api/versions", content=evil, headers=bearer(alice))
    assert r.status_code == 422
    body = r.json()
    assert body["state"] == "failed" and "'..'" in body["error"] and "pack your bot's folder again" in body["fix"]
    r = await client.post("/api/versions", content=b"not an archive", headers=bearer(alice))
    assert r.status_code == 400 and "neither a zip nor a tar.gz" in r.json()["error"]
    r = await client.post("/api/versions", files={"other": ("x", b"y")}, headers=bearer(alice))
    assert r.status_code == 400 and "'archive'" in r.json()["error"]


async def test_csrf_on_cookie_sessions(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    token = runtime.store.add_entrant("alice")
    csrf = await login(client, token)
    assert (await client.get("/api/me")).json()["name"] == "alice"  # the cookie session
    r = await client.post("/api/versions", content=good_tar())
    assert r.status_code == 403 and "CSRF" in r.json()["error"]
    r = await client.post("/api/versions", content=good_tar(), headers={"X-CSRF-Token": "wrong"})
    assert r.status_code == 403
    r = await client.post("/api/versions", content=good_tar(), headers={"X-CSRF-Token": csrf})
    assert r.status_code == 201
    r = await client.post("/api/versions", files={"archive": ("b.tgz", good_tar())}, data={"csrf": csrf})
    assert r.status_code == 201
    # logging out needs it too
    assert (await client.post("/logout", data={"csrf": "nope"})).status_code == 403
    assert (await client.post("/logout", data={"csrf": csrf})).status_code == 303
    assert (await client.get("/api/me")).status_code == 401


async def test_login_csrf_and_bad_token(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    token = runtime.store.add_entrant("alice")
    r = await client.post("/login", data={"token": token})  # no double-submit token
    assert r.status_code == 403
    page = await client.get("/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert csrf is not None
    r = await client.post("/login", data={"token": "rt_wrong", "csrf": csrf[1]})
    assert r.status_code == 303 and "error=" in r.headers["location"]
    r = await client.post("/login", data={"token": token, "csrf": csrf[1], "next": "//evil.example/"})
    assert r.headers["location"] == "/"
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie


async def test_login_rate_limit(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    page = await client.get("/login")
    m = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert m is not None
    codes = [(await client.post("/login", data={"token": "rt_x", "csrf": m[1]})).status_code for _ in range(4)]
    assert codes == [303, 303, 303, 429]  # logins_per_minute = 3 in the test site


async def test_upload_rate_limit_and_size_limit(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    alice = runtime.store.add_entrant("alice")
    codes = [
        (await client.post("/api/versions", content=good_tar(), headers=bearer(alice))).status_code for _ in range(6)
    ]
    assert codes == [201] * 5 + [429]  # uploads_per_hour = 5
    bob = runtime.store.add_entrant("bob")
    import os

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = file_info("noise")
        noise = os.urandom(1_200_000)
        info.size = len(noise)
        tf.addfile(info, io.BytesIO(noise))
    r = await client.post("/api/versions", content=buf.getvalue(), headers=bearer(bob))
    assert r.status_code == 413 and "1 MiB" in r.json()["error"]  # upload_mb = 1

    async def chunks():  # no Content-Length: counted while it streams
        for _ in range(20):
            yield bytes(100_000)

    r = await client.post("/api/versions", content=chunks(), headers=bearer(bob))
    assert r.status_code == 413


async def test_public_routes(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    assert (await client.get("/api/leaderboard")).json() == {"leaderboard": []}
    assert (await client.get("/api/games/running")).json() == {"games": []}
    assert (await client.get("/api/ratings/alice-v1")).json() == {"bot": "alice-v1", "ratings": []}
