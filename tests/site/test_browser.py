"""The whole path in Debian's chromium (Playwright, no browser download) against ``referee host``:
log in, upload a bot folder, watch it go active, open its page, watch a live game step by step, see
the leaderboard change; axe-core finds nothing on the pages at 390 px wide."""

from __future__ import annotations

import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.site.archive import pack_folder
from referee.site.config import load_site
from referee.site.store import Store
from tests.site.conftest import ROOT, write_site
from tests.site.test_app import _free_port, start_host, wait_up
from tests.view.axe import violations
from tests.view.conftest import PageProbe

BOTS = ROOT / "tests" / "bots"
#: a house bot (tests/bots/botlib.py's random legal moves, copied into its folder) that thinks 400 ms
#: a turn once its folder holds ``slow.flag``: the ladder's games then last a few seconds, long enough
#: to watch live, while the candidate's check-bot and gauntlet before it run at full speed
FLAGGED_BOT = """
import os, sys, time
import botlib
def think(turn):
    if os.path.exists("slow.flag"):
        time.sleep(0.4)
sys.exit(botlib.run(think=think, hello={"type": "hello", "protocol": 1, "name": "slow"}))
"""

SITE = """
name = "browser-site"
seed = 11
concurrency = 1

[clock]
move_ms = 5000

[[bots]]
name = "house-random"
command = ["./c_bot"]
cwd = "{house_c}"

[[bots]]
name = "house-slow"
command = ["{python}", "slow.py"]
cwd = "house"

[[variants]]
name = "kwartet"
sizes = [3]
deals = 1

[site]
title = "Browser league"
cookie_secure = false
gauntlet_tables = 1
ladder_interval = 0.2
"""


@pytest.fixture
def phone(browser: Any) -> Iterator[PageProbe]:
    """A page 390 px wide (a phone), with its console errors and requests recorded."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, service_workers="block")
    page = context.new_page()
    p = PageProbe(page)
    page.on("console", lambda m: p.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: p.page_errors.append(str(e)))
    page.on("request", lambda r: p.requests.append(r.url))
    page.set_default_timeout(30_000)
    try:
        yield p
    finally:
        context.close()


@pytest.fixture
def browser(chromium: Any) -> Any:
    """The test process's chromium (tests/conftest.py, shared with tests/view); fails when it is not installed."""
    if chromium is None:
        pytest.fail("the browser test needs Debian's chromium: apt-get install -y chromium")
    return chromium


def _check(page: Any, what: str) -> None:
    found = violations(page)
    assert not found, f"{what}: axe-core: " + "\n".join(found)
    wide = page.evaluate("() => document.documentElement.scrollWidth")
    assert wide <= 390, f"{what}: the page is {wide} px wide at 390 px"


def test_the_whole_path_in_the_browser(tmp_path: Path, phone: PageProbe) -> None:
    import time

    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # (imported here: collection stays light)

    t0 = time.monotonic()

    def lap(what: str) -> None:
        print(f"{time.monotonic() - t0:6.1f} s  {what}")

    house = tmp_path / "house"
    house.mkdir()
    (house / "slow.py").write_text(FLAGGED_BOT)
    shutil.copy(BOTS / "botlib.py", house / "botlib.py")
    site_path = write_site(tmp_path, text=SITE)
    store = Store.open(load_site(site_path).db_path)
    token = store.add_entrant("alice")
    store.close()
    folder = tmp_path / "mybot"  # the C starter: built in the sandbox; its check-bot and games start quickly
    shutil.copytree(ROOT / "starters" / "c", folder)
    archive = tmp_path / "mybot.tar.gz"
    archive.write_bytes(pack_folder(folder))

    port = _free_port()
    origin = f"http://127.0.0.1:{port}"
    proc = start_host(site_path, port)
    try:
        wait_up(port, proc, timeout=90)
        page = phone.page
        lap("host up")
        page.goto(origin + "/")
        page.wait_for_selector('[data-testid="leaderboard-empty"]')  # two house bots: no table of three yet
        _check(page, "the empty leaderboard")

        lap("first page")
        # log in
        page.click("text=Log in")
        _check(page, "the login page")
        page.fill("#token", token)
        page.click('main button[type="submit"]')
        page.wait_for_selector('[data-testid="who"]:has-text("alice")')

        lap("logged in")
        # upload the bot folder: the version's page, then watch it go active
        page.click("text=Upload")
        _check(page, "the upload page")
        page.set_input_files("#archive", str(archive))
        page.click('main button[type="submit"]')
        page.wait_for_url("**/versions/*")
        assert page.text_content("h1") == "alice-v1"
        page.wait_for_selector("#version[data-final]", timeout=90_000)
        assert page.text_content('#state [data-testid="state"]') == "active", page.text_content("#version")
        assert page.get_attribute("#version", "data-final") is not None
        assert "passed" in (page.text_content('[data-testid="checks"]') or "")
        assert "games against the pool" in (page.text_content('[data-testid="gauntlet"]') or "")
        _check(page, "the version's page")

        lap("active")
        # its entrant's page
        page.click('[data-testid="who"]')
        page.wait_for_selector('[data-testid="version-1"] [data-testid="state"]:has-text("active")')
        _check(page, "the entry page")

        lap("entry page")
        # a live game of the ladder, step by step
        (house / "slow.flag").write_text("")
        followed = False
        #: three more steps arrive while the viewer follows the game, or the game ended first
        stepped = """(first) => {
            const v = window.refereeViewer, live = document.querySelector('[data-testid="viewer"]').dataset.live;
            return live === "following" ? v.steps > first + 2 : live !== "connecting";
        }"""
        for _ in range(6):
            page.goto(origin + "/live")
            link = page.wait_for_selector('[data-testid="live-games"] a', timeout=30_000)
            assert link is not None
            href = link.get_attribute("href") or ""
            page.goto(origin + href)  # (the list is refreshed in place: no click on a link it may replace)
            try:  # a game that ended meanwhile: /live/GAME says so and the viewer waits; take the next one
                page.wait_for_selector('[data-testid="viewer"][data-live="following"]', timeout=8_000)
            except PlaywrightTimeout:
                continue
            first = page.evaluate("() => window.refereeViewer.steps")
            page.wait_for_function(stepped, arg=first)
            if page.get_attribute('[data-testid="viewer"]', "data-live") != "following":
                continue  # it ended before three more steps came: follow the next one
            followed = True
            break
        assert followed, "no live game was followed for three steps (each ended before)"
        assert page.evaluate("() => window.refereeViewer.step === window.refereeViewer.steps - 1")
        (house / "slow.flag").unlink()  # seen: the rest of the ladder's games at full speed
        page.wait_for_selector('[data-testid="viewer"][data-live="done"]', timeout=30_000)
        assert page.get_attribute('[data-testid="verified"]', "data-verified") == "true"

        lap("live game done")
        page.goto(origin + "/live")
        _check(page, "the live list")

        # the leaderboard, with alice's version on it, changing as the ladder plays
        page.goto(origin + "/")
        row = '[data-testid="leaderboard"] tr[data-bot="alice-v1"]'
        page.wait_for_selector(row)
        games = page.text_content(f'{row} [data-testid="games"]')
        page.wait_for_function(
            "([sel, n]) => { const c = document.querySelector(sel); return c && c.textContent !== n; }",
            arg=[f'{row} [data-testid="games"]', games],
            timeout=30_000,
        )
        assert page.query_selector(f"{row} svg[data-points]") is not None
        _check(page, "the leaderboard")
        lap("leaderboard changed")
        phone.assert_clean(origin + "/")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        print("\n".join(x for x in err.decode().splitlines() if not x.startswith("{"))[-3000:])
    assert proc.returncode == 143, err.decode()[-3000:]
