"""The pipeline with real builds and check-bot in the sandbox, the gauntlet, the duel, the ladder."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from referee.site import pipeline
from referee.site.api import receive_version
from referee.site.archive import pack_folder
from referee.site.config import load_site
from referee.site.runtime import SiteRuntime
from tests.site.conftest import ROOT, write_site

FAST = """
[site]
title = "Pipeline"
gauntlet_tables = 1
duel_games = 4
ladder_interval = 0
"""


def bot_folder(tmp: Path, starter: str, manifest: str) -> Path:
    # a folder of its own per call (a name from the manifest's hash could collide: 1 in 1,000)
    dest = Path(tempfile.mkdtemp(prefix=f"src-{starter}-", dir=tmp)) / "bot"
    shutil.copytree(ROOT / "starters" / starter, dest)
    (dest / "referee.toml").write_text(manifest)
    return dest


async def submit(rt: SiteRuntime, name: str, folder: Path):
    e = rt.store.entrant_named(name) or rt.store.entrant_named(name)
    assert e is not None
    return await receive_version(rt, e, pack_folder(folder), "tar.gz")


async def test_versions_through_the_pipeline_and_the_ladder(tmp_path: Path) -> None:
    from tests.site.conftest import SITE_TOML

    text = SITE_TOML.split("[site]")[0] + FAST
    rt = SiteRuntime.open(load_site(write_site(tmp_path, text=text)))
    try:
        rt.store.add_entrant("alice")
        c = bot_folder(tmp_path, "c", 'command = ["./bot"]\nbuild = "cc -O2 -o bot bot.c"\nruntime = "c"\n')
        broken = bot_folder(tmp_path, "c", 'command = ["./bot"]\nbuild = "cc -o bot missing.c"\n')
        silent = bot_folder(tmp_path, "c", 'command = ["sh", "-c", "exit 3"]\n')

        v1 = await pipeline.build_and_check(rt, await submit(rt, "alice", c))
        assert v1.state == "candidate" and v1.check_report and v1.check_report["ok"]
        assert v1.build_log is not None and (Path(v1.folder or "") / "bot").exists()  # built in its folder
        v1 = await pipeline.trial(rt, v1)
        assert v1.state == "active" and v1.gauntlet and v1.gauntlet["games"] > 0  # the first version: active
        assert [t.state for t in rt.store.transitions(v1.id)][-3:] == ["candidate", "candidate", "active"]

        # v2: v1's built folder again (a C bot: quick games), without its build; check-bot is v1's test:
        # v2 goes straight to its trial
        built = tmp_path / "built"
        shutil.copytree(v1.folder or "", built)
        (built / "referee.toml").write_text('command = ["./bot"]\nruntime = "c"\n')
        v2 = await submit(rt, "alice", built)
        for state in ("building", "checking", "candidate"):
            v2 = rt.store.move(v2.id, state)
        v2 = await pipeline.trial(rt, v2)
        assert v2.gauntlet and v2.gauntlet.get("games", 0) > 0, v2.gauntlet
        assert v2.duel is not None and v2.duel["against"] == "alice-v1" and v2.duel["games"] > 0
        assert v2.state == ("active" if v2.duel["result"] == "H1" else "rejected")

        v3 = await pipeline.build_and_check(rt, await submit(rt, "alice", broken))
        assert v3.state == "failed" and "build failed" in (v3.error or "") and "missing.c" in (v3.build_log or "")
        assert v3.fix and "log" in v3.fix

        v4 = await pipeline.build_and_check(rt, await submit(rt, "alice", silent))
        assert v4.state == "failed" and v4.error and v4.error.startswith("check-bot: handshake")
        assert v4.check_report and not v4.check_report["ok"] and v4.fix

        await pipeline.ladder_loop(rt, tables=1)
        history = rt.store.rating_history(rt.store.active()[0].bot)
        assert len(history) == 1 and history[0].games > 0
        board = rt.leaderboard()
        assert {r.bot for r in board} >= {"house-random", "house-random-2", rt.store.active()[0].bot}
        assert (rt.site.league_out / "ledger.sqlite").exists() and (rt.site.league_out / "report.html").exists()
        assert "alice-v1" in rt.site.pool_path.read_text() or v2.state == "active"
        await _games_are_private_where_they_should_be(rt)
    finally:
        rt.store.close()


async def test_host_mode_waits_for_the_host(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.site.conftest import SITE_TOML

    text = SITE_TOML.split("[site]")[0] + FAST + 'promote = "host"\n'
    rt = SiteRuntime.open(load_site(write_site(tmp_path, text=text)))
    try:
        rt.store.add_entrant("bob")
        folder = bot_folder(tmp_path, "python", 'command = ["{python}", "bot.py"]\n')
        v = await submit(rt, "bob", folder)
        rt.store.move(v.id, "building")
        rt.store.move(v.id, "checking")
        v = rt.store.move(v.id, "candidate", gauntlet={"skipped": "test"})
        v = await pipeline.trial(rt, v)
        assert v.state == "candidate" and v.duel == {"waiting": "host"}
        assert pipeline.next_job(rt.store, host_mode=True) is None
        import httpx

        from referee.site.app import make_app

        host = rt.store.add_entrant("boss", host=True)
        transport = httpx.ASGITransport(app=make_app(rt, access_log=rt.log.append))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            r = await client.post(f"/api/versions/{v.id}/promote", headers={"Authorization": f"Bearer {host}"})
        assert r.status_code == 200 and r.json()["state"] == "active"
        assert rt.store.transitions(v.id)[-1].note == "promoted by the host"
        # `referee host SITE.toml promote ID` (another process's, as a host's shell is): the active one retired
        w = await submit(rt, "bob", folder)
        for state in ("building", "checking", "candidate"):
            rt.store.move(w.id, state)
        from referee.cli import main

        assert main(["host", str(rt.site.path), "promote", str(w.id)]) == 0
        assert "(bob-v2) is active" in capsys.readouterr().out
        assert rt.store.version(w.id).state == "active" and rt.store.version(v.id).state == "retired"  # type: ignore[union-attr]
    finally:
        rt.store.close()


async def _games_are_private_where_they_should_be(rt: SiteRuntime) -> None:
    import httpx

    from referee.site.app import make_app

    alice = rt.store.new_token("alice")
    bob = rt.store.add_entrant("bob")
    host = rt.store.add_entrant("boss", host=True)
    active = rt.store.active()[0]
    transport = httpx.ASGITransport(app=make_app(rt, access_log=rt.log.append))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:

        def auth(token: str) -> dict[str, str]:
            return {"Authorization": f"Bearer {token}"}

        r = await client.get(f"/api/versions/{active.id}/games", headers=auth(alice))
        games = r.json()["games"]
        assert r.status_code == 200 and games and all(active.bot in g["bots"] for g in games)
        assert (await client.get(f"/api/versions/{active.id}/games", headers=auth(bob))).status_code == 403
        game = games[0]["game"]
        r = await client.get(f"/api/versions/{active.id}/games/{game}/stderr", headers=auth(alice))
        assert r.status_code in (200, 404)
        r = await client.get(f"/view/{game}")
        assert r.status_code == 200 and "game-data" in r.text  # public, without stderr
        assert (await client.get(f"/log/{game}")).status_code == 401
        assert (await client.get(f"/log/{game}", headers=auth(bob))).status_code == 403
        assert (await client.get(f"/log/{game}", headers=auth(host))).status_code == 200
        assert (await client.get("/report/report.html", headers=auth(bob))).status_code == 403
        r = await client.get("/report/report.html", headers=auth(host))
        assert r.status_code == 200 and "<html" in r.text.lower()
        assert (await client.get("/report/ledger.sqlite", headers=auth(host))).status_code == 404
        assert (await client.get("/view/..%2Fledger")).status_code == 404


def test_redact_cuts_stderr_out() -> None:
    from referee.site.games import HIDDEN, redact

    data = {"faults": [{"detail": "exited with status 1; stderr ends: 'secret'", "stderr": "x"}], "n": 3}
    assert redact(data) == {"faults": [{"detail": "exited with status 1" + HIDDEN}], "n": 3}


async def test_a_version_killed_before_it_was_unpacked_is_unpacked_again(runtime: SiteRuntime, tmp_path: Path) -> None:
    alice = runtime.store.add_entrant("alice")
    e = runtime.store.entrant_by_token(alice)
    assert e is not None
    archive = tmp_path / "kept.tar.gz"
    archive.write_bytes(pack_folder(ROOT / "starters" / "python"))
    v = runtime.store.add_version(e, str(archive))  # as if killed right after the archive was kept
    (runtime.site.bots_dir / "alice" / "v1").mkdir(parents=True)  # and a half-written folder left
    v = await pipeline.unpack_again(runtime, v)
    assert v.state == "received" and v.manifest and v.manifest["runtime"] == "python"
    assert (Path(v.folder or "") / "bot.py").is_file()
    archive.unlink()
    w = await pipeline.unpack_again(runtime, runtime.store.add_version(e, str(archive)))
    assert w.state == "failed" and "archive is gone" in (w.error or "")


async def test_the_site_answers_while_its_background_loop_is_blocked(runtime: SiteRuntime) -> None:
    """The queue and the ladder run on a loop of their own (``background_thread``): a background stuck
    in synchronous work (a ledger write, a standings fit, a spawn on a loaded machine) cannot hold up a
    request. Here the background blocks its loop outright until the test has had its answers."""
    import threading

    import httpx
    import trio

    from referee.site.app import make_app

    entered, release = threading.Event(), threading.Event()
    seen: list[str] = []

    async def stuck(bg: SiteRuntime) -> None:
        assert bg is not runtime and bg.store is not runtime.store  # its own runtime and connection
        entered.set()
        # synchronous: nothing else runs on the background's loop meanwhile (on the web's loop this would
        # hold every request until the wait gave up: then the test fails, it does not hang)
        seen.append("released" if release.wait(120) else "gave up")
        await bg.wake.wait()  # the web's poke reaches it through its loop
        seen.append("poked")
        try:
            await trio.sleep_forever()
        finally:
            seen.append("cancelled")

    token = runtime.store.add_entrant("alice")
    transport = httpx.ASGITransport(app=make_app(runtime, access_log=runtime.log.append))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client, trio.open_nursery() as nursery:
        nursery.start_soon(pipeline.background_thread, runtime, stuck)
        await trio.to_thread.run_sync(entered.wait)
        r = await client.get("/api/me", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 200 and r.json()["name"] == "alice"
        assert (await client.get("/")).status_code == 200
        assert not release.is_set() and not seen  # answered while the background was blocked
        release.set()
        assert runtime.forward is not None  # (set by the background as it started)
        runtime.poke()
        while len(seen) < 2:  # noqa: ASYNC110  (seen is appended on the background's thread: polled)
            await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert seen == ["released", "poked", "cancelled"] and runtime.forward is None
