"""The night's report, end to end: a small real league (sample bots and a faulting test bot) ->
report.html -> the game browser in chromium -> a game's viewer page, whose step k shows what the
replay core says for step k; an interrupted night's banner and notes; ``referee serve`` beside a
night that is still running. Screenshots go to test-artifacts/view/."""

from __future__ import annotations

import html
import json
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from referee.view import materialize
from referee.view.frames import frames_from_log
from tests.league.conftest import REFEREE, REPO, referee
from tests.view.conftest import PageProbe
from tests.view.test_viewer_browser import READY, assert_shows, shot

pytestmark = pytest.mark.xdist_group("report")

PY = sys.executable
SAMPLES = REPO / "sample_bots"
TEST_BOTS = REPO / "tests" / "bots"
CONFIG = f"""
name = "report night"
seed = 77
out = "out"
reuse = "session"

[clock]
move_ms = 3000

[[bots]]
name = "rand"
command = ["{PY}", "{SAMPLES / "random_bot.py"}"]

[[bots]]
name = "tracker"
command = ["{PY}", "{SAMPLES / "tracker_bot.py"}", "1"]

[[bots]]
name = "cheat"
command = ["{PY}", "{TEST_BOTS / "illegal_bot.py"}"]

[[variants]]
name = "kwartet"
sizes = 3
deals = 1

[[variants]]
name = "chickens"
sizes = 3
deals = 1
"""


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    d = tmp_path_factory.mktemp("night")
    (d / "night.toml").write_text(CONFIG, encoding="utf-8")
    run = referee("run", str(d / "night.toml"), timeout=120)
    assert run.returncode == 0, run.stderr
    return d / "out", run.stdout


def _games(out: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(out / "ledger.sqlite") as db:
        return list(db.execute("SELECT game_id, variant, log_path FROM games ORDER BY game_id"))


def test_report_header_legend_plots_and_files(night: tuple[Path, str]) -> None:
    out, stdout = night
    page = (out / "report.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    assert "report night" in text and "seed: 77" in " ".join(text.split())
    assert "card-referee 0.1.0" in text
    assert "Complete: all 6 planned games were played." in text and 'data-testid="incomplete"' not in page
    # every bot with its command and its hello, from the start check (the ledger meta)
    for name, hello, cmd in (
        ("rand", "RandomBot 1.0", "random_bot.py"),
        ("tracker", "TrackerBot", "tracker_bot.py"),
        ("cheat", "illegal", "illegal_bot.py"),
    ):
        row = next(r for r in re.findall(r'<tr data-testid="bot-row">(.*?)</tr>', page) if f">{name}<" in r)
        assert hello.lower() in html.unescape(row).lower() and cmd in row
    assert '<details data-testid="config">' in page and "&quot;seed&quot;: 77" in page
    # the legend names every column, and the sort order is said
    from referee.league.standings import COLUMNS, SORT_TEXT

    legend = re.search(r'<dl class="legend" data-testid="legend">(.*?)</dl>', page)
    assert legend and all(f"<dt>{html.escape(c.head)}</dt>" in legend.group(1) for c in COLUMNS)
    assert html.escape(SORT_TEXT) in page
    # no mean score across variants: the overall table has none, each variant's has one
    overall = re.search(r'<table data-testid="standings-overall">(.*?)</table>', page)
    kwartet = re.search(r'<table data-testid="standings-kwartet">(.*?)</table>', page)
    assert overall and "mean score" not in overall.group(1) and "mean rank" in overall.group(1)
    assert kwartet and "mean score" in kwartet.group(1)
    # the four plots, inline SVG
    for plot in ("rating", "win-share", "head-to-head", "think-time"):
        fig = re.search(rf'<figure data-testid="plot-{plot}" tabindex="0"><svg [^>]*role="img"', page)
        assert fig, plot
    assert "<script src" not in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    # the viewer pages next to the logs, one per game, and the game browser's data files
    games = _games(out)
    assert len(games) == 6
    assert (out / "games" / "viewer.html").is_file()
    for gid, _variant, log in games:
        assert (out / "games" / f"{gid}.frames.js").is_file() and (out / log).is_file()
    data = [(out / "report-data" / f"games-{k}.js").read_text() for k in range(2)]
    assert sum(js.count('"games/') for js in data) == 6  # each game row has its log link
    # the terminal and standings.md carry the legend too; the faulting bot's faults are listed
    assert SORT_TEXT in stdout and "ordinal: mu - 3 sigma" in stdout
    assert "viewer pages: 0 written, 6 up to date" in stdout  # each made as its game was played
    md = (out / "standings.md").read_text()
    assert "- **win share**:" in md and SORT_TEXT in md
    assert "illegal" in re.search(r'<section id="faults">(.*?)</section>', page, re.DOTALL).group(1)  # type: ignore[union-attr]


def test_report_again_writes_only_what_is_missing(night: tuple[Path, str], tmp_path: Path) -> None:
    out = tmp_path / "copy"
    shutil.copytree(night[0], out)
    frames = sorted((out / "games").glob("*.frames.js"))
    live = frames[0].read_text(encoding="utf-8")
    frames[0].unlink()
    r = referee("report", str(out))
    assert r.returncode == 0, r.stderr
    assert "viewer pages: 1 written, 5 up to date" in r.stdout
    # the page made again from the log (as for an older night) is the one made as the game was played
    made = frames[0].read_text(encoding="utf-8")

    def doc(text: str) -> object:
        return json.loads(text[text.index("=") + 1 :].rstrip()[:-1])

    assert doc(made) == doc(live)


def test_interrupted_night_has_a_banner_and_notes(night: tuple[Path, str], tmp_path: Path) -> None:
    out = tmp_path / "cut"
    shutil.copytree(night[0], out)
    with sqlite3.connect(out / "ledger.sqlite") as db:  # what a night stopped after 4 games leaves
        ids = [r[0] for r in db.execute("SELECT game_id FROM games ORDER BY game_id")]
        db.execute("DELETE FROM games WHERE game_id IN (?, ?)", ids[:2])
        db.execute(
            "UPDATE games SET reason = 'aborted', detail = 'no end after 9 decisions' WHERE game_id = ?", (ids[2],)
        )
    r = referee("report", str(out))
    assert r.returncode == 0, r.stderr
    page = (out / "report.html").read_text(encoding="utf-8")
    banner = re.search(r'<div class="banner incomplete" role="alert" data-testid="incomplete">(.*?)</div>', page)
    assert banner and "INCOMPLETE: 4 of 6 planned games played (2 missing" in banner.group(1)
    assert "1 game was aborted" in page and "no end after 9 decisions" in page
    assert 'data-testid="complete"' not in page
    assert "<h2>Leading so far (the night is not complete)</h2>" in page and "<h2>Winners</h2>" not in page
    md = (out / "standings.md").read_text()
    assert "> **INCOMPLETE: 4 of 6 planned games played" in md and "1 game was aborted" in md
    st = referee("standings", str(out))
    assert st.returncode == 0 and "INCOMPLETE: 4 of 6" in st.stdout and "1 game was aborted" in st.stdout


def _open_report(probe: PageProbe, out: Path) -> Any:
    page = probe.page
    page.goto((out / "report.html").as_uri())
    page.wait_for_selector('[data-testid="game-browser"][data-ready="true"]')
    return page


def _first_variant(page: Any) -> str:
    return str(page.locator('[data-testid="gb-variant"] option[value="0"]').inner_text().split(" (")[0])


def _rows(page: Any) -> list[str]:
    return page.locator('[data-testid="game-row"]').evaluate_all("(es) => es.map((e) => e.dataset.game)")


def test_game_browser_filters(probe: PageProbe, night: tuple[Path, str], artifacts: Path) -> None:
    out = night[0]
    games = _games(out)
    page = _open_report(probe, out)
    first_variant = games and page.locator('[data-testid="gb-variant"] option[value="0"]').inner_text().split(" (")[0]
    in_first = [g for g, v, _ in games if v == first_variant]
    assert sorted(_rows(page)) == in_first
    # every link resolves to a file that exists
    for href in page.locator('[data-testid="game-row"] a').evaluate_all("(es) => es.map((e) => e.href)"):
        path = Path(urlsplit(href).path)
        assert path.is_file(), href
        if path.name == "viewer.html":
            assert (path.parent / f"{parse_qs(urlsplit(href).query)['game'][0]}.frames.js").is_file()
    # the other variant
    page.select_option('[data-testid="gb-variant"]', "1")
    page.wait_for_selector('[data-testid="game-browser"][data-ready="true"]')
    second = [g for g, v, _ in games if v != first_variant]
    assert sorted(_rows(page)) == second
    # faults only: the games where the cheat faulted
    with sqlite3.connect(out / "ledger.sqlite") as db:
        faulted = {r[0] for r in db.execute("SELECT game_id FROM games WHERE faults != '[]'")}
    assert faulted
    page.check('[data-testid="gb-faults"]')
    assert set(_rows(page)) == faulted & set(second)
    page.uncheck('[data-testid="gb-faults"]')
    # by table: table numbers from the ledger
    with sqlite3.connect(out / "ledger.sqlite") as db:
        tables = dict(db.execute("SELECT game_id, tbl FROM games"))
    t = tables[second[0]]
    page.fill('[data-testid="gb-table"]', str(t))
    assert set(_rows(page)) == {g for g in second if tables[g] == t}
    page.fill('[data-testid="gb-table"]', "999")
    assert _rows(page) == [] and page.is_visible("#gb-empty")
    page.fill('[data-testid="gb-table"]', "")
    # by bot: every game here has all three bots
    page.select_option('[data-testid="gb-bot"]', "rand")
    assert sorted(_rows(page)) == second
    shot(page, artifacts, "report-game-browser")
    probe.assert_clean(out.as_uri() + "/")


def test_click_a_game_and_watch_it(probe: PageProbe, night: tuple[Path, str], artifacts: Path) -> None:
    out = night[0]
    page = _open_report(probe, out)
    shot(page, artifacts, "report")
    row = page.locator('[data-testid="game-row"]').first
    game = row.get_attribute("data-game")
    row.locator('[data-testid="watch"]').click()
    page.wait_for_selector(READY)
    assert page.title().startswith(game)
    log = next(out / lg for g, _v, lg in _games(out) if g == game)
    data = frames_from_log(log)  # the replay core's frames of the same log
    states = materialize(data)
    assert data["verified"]
    last = len(states) - 1
    for k in sorted({0, 1, 2, last // 2, last - 1, last}):
        page.evaluate("(k) => window.refereeViewer.go(k)", k)
        assert_shows(page, data, states, k)
    page.keyboard.press("Home")
    for k in range(1, min(6, last) + 1):
        page.click('[data-testid="btn-next"]')
        assert_shows(page, data, states, k)
    shot(page, artifacts, "report-viewer-step")
    # one seat's view hides the other hands
    page.select_option('[data-testid="view-select"]', "1")
    for k in (1, last // 2, last):
        page.evaluate("(k) => window.refereeViewer.go(k)", k)
        assert_shows(page, data, states, k, view=1)
    shot(page, artifacts, "report-viewer-as-seat-1")
    page.click('[data-testid="back"]')
    page.wait_for_selector('[data-testid="game-browser"][data-ready="true"]')
    probe.assert_clean(out.as_uri() + "/")


# ----------------------------------------------------------------------------- serve beside a running night

SLOW = f"""
name = "live night"
seed = 5
out = "out"
reuse = "session"
concurrency = 1

[clock]
move_ms = 60000

[[bots]]
name = "paused"
command = ["{PY}", "{TEST_BOTS / "paused_bot.py"}"]
cwd = "gate"
env = {{ BOT_PAUSE_FILE = "pause" }}

[[bots]]
name = "rand"
command = ["{PY}", "{SAMPLES / "random_bot.py"}"]

[[bots]]
name = "tracker"
command = ["{PY}", "{SAMPLES / "tracker_bot.py"}", "2"]

[[variants]]
name = "kwartet"
sizes = 3
deals = 2
"""


@pytest.fixture
def running_night(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    (tmp_path / "live.toml").write_text(SLOW, encoding="utf-8")
    (tmp_path / "gate").mkdir()
    (tmp_path / "gate" / "pause").write_text("")  # the paused bot holds its replies while this exists
    import os

    proc = subprocess.Popen(
        [*REFEREE, "run", str(tmp_path / "live.toml"), "--quiet"],
        cwd=REPO,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        yield tmp_path / "out", proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def test_serve_shows_a_running_night(
    probe: PageProbe, running_night: tuple[Path, subprocess.Popen[str]], artifacts: Path
) -> None:
    from referee.view.serve import make_server

    out, proc = running_night
    deadline = time.monotonic() + 60
    while not (out / "ledger.sqlite").is_file():  # the run creates its ledger first
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    server = make_server(out, port=0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    missing: list[str] = []
    try:
        page = probe.page
        page.on("response", lambda r: missing.append(r.url) if r.status >= 400 else None)
        page.goto(origin + "/")  # no report yet: the live page
        assert page.url == origin + "/live"
        page.goto(origin + "/live?every=150")  # refreshing faster than its default 2 s
        done = "Number(document.querySelector('[data-testid=done]').textContent)"
        page.wait_for_function("() => document.querySelector('[data-testid=planned]').textContent === '6'")
        page.wait_for_function("() => document.querySelector('[data-testid=state]').textContent === 'running'")
        assert page.evaluate(f"() => {done}") == 0  # the night is held by the paused bot
        shot(page, artifacts, "serve-live-running")
        (out.parent / "gate" / "pause").unlink()  # let it go on: the page follows by itself
        page.wait_for_function(
            "() => document.querySelector('[data-testid=state]').textContent === 'complete'", timeout=60_000
        )
        assert page.evaluate(f"() => {done}") == 6 and page.url == origin + "/live?every=150"
        assert page.locator('[data-testid="standings"] tr').count() == 3
        assert proc.wait(timeout=60) == 0
        # the report the night wrote at its end, its game browser and a game's viewer, over HTTP
        page.goto(origin + "/")
        page.wait_for_selector('[data-testid="game-browser"][data-ready="true"]')
        assert page.url == origin + "/report.html" and len(_rows(page)) == 6
        page.locator('[data-testid="watch"]').first.click()
        page.wait_for_selector(READY)
        assert "/games/viewer.html?game=" in page.url
        game = parse_qs(urlsplit(page.url).query)["game"][0]
        page.goto(f"{origin}/view/{game}")  # the live page's links: the same viewer
        page.wait_for_selector(READY)
        assert page.url == f"{origin}/games/viewer.html?game={game}"
        assert not missing, missing
        probe.assert_clean(origin + "/")
    finally:
        server.shutdown()
        server.server_close()


def test_serve_waits_for_a_ledger_the_run_is_still_creating(tmp_path: Path) -> None:
    """``referee run`` creates ledger.sqlite before its tables: the live server
    started in between serves a night that has not begun, and then follows it."""
    import json
    import urllib.request

    from referee.league.ledger import Ledger
    from referee.view.serve import make_server

    out = tmp_path / "out"
    out.mkdir()
    sqlite3.connect(out / "ledger.sqlite").close()  # the file, no tables yet
    server = make_server(out, port=0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/api/status"
    try:
        with urllib.request.urlopen(url) as r:
            status = json.loads(r.read())
        assert (status["done"], status["planned"], status["complete"], status["top"]) == (0, None, False, [])
        Ledger(out / "ledger.sqlite").db.close()  # the run goes on: the tables exist now
        with urllib.request.urlopen(url) as r:
            assert json.loads(r.read())["done"] == 0
    finally:
        server.shutdown()
        server.server_close()


def test_report_has_no_axe_violation(probe: PageProbe, night: tuple[Path, str]) -> None:
    from tests.view.axe import violations

    out = night[0]
    page = probe.page
    for size in ({"width": 1366, "height": 800}, {"width": 390, "height": 844}):
        page.set_viewport_size(size)
        _open_report(probe, out)
        found = violations(page)
        assert not found, f"report at {size['width']} px:\n" + "\n".join(found)
    probe.assert_clean(out.as_uri() + "/")


def test_report_says_who_won(night: tuple[Path, str]) -> None:
    import json

    from referee.league.standings import RATING_NOTE

    out = night[0]
    text = (out / "report.html").read_text()
    st = json.loads((out / "standings.json").read_text())
    assert "<h2>Winners</h2>" in text  # the night is complete
    winners = text.index('data-testid="winners"')
    assert winners < text.index('id="bots"'), "the winners come before the rest of the report"
    for scope, data in st["scopes"].items():
        bots = [r["bot"] for r in data["bots"]]  # in the standings' order: by the sort key
        won = re.search(rf'data-testid="winner-{re.escape(scope)}">([^<]*)<', text)
        assert won and html.unescape(won.group(1)) == bots[0], scope
        for i, bot in enumerate(bots[:3]):
            item = re.search(rf'data-testid="podium-{re.escape(scope)}-{i + 1}">(.*?)</li>', text)
            assert item and f'<b class="name">{html.escape(bot)}</b>' in item.group(1), (scope, i)
    note = re.search(r'data-testid="winners-note">([^<]*)<', text)
    assert note and html.escape(RATING_NOTE, quote=True) in note.group(1) and "ordinal" in note.group(1)


# the report at phone size: every standings table's place, bot and sort key in view without scrolling
# sideways, bot names on one line, and nothing wider than the screen but the boxes that scroll
PHONE_JS = """
() => {
  const vw = document.documentElement.clientWidth;
  const lines = (e) => { const r = document.createRange(); r.selectNodeContents(e);
    return new Set(Array.from(r.getClientRects()).map((x) => Math.round(x.top))).size; };
  return {
    vw, pageWidth: document.documentElement.scrollWidth,
    keys: Array.from(document.querySelectorAll('table[data-testid^="standings-"] [data-col="ordinal"]'))
      .map((e) => e.getBoundingClientRect().right),
    names: Array.from(document.querySelectorAll('td.botname, .podium .name'))
      .map((e) => [e.textContent, lines(e)]),
  };
}
"""


def test_report_on_a_phone(browser: Any, night: tuple[Path, str], artifacts: Path) -> None:
    out = night[0]
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((out / "report.html").as_uri())
        page.wait_for_selector('[data-testid="game-browser"][data-ready="true"]')
        got = page.evaluate(PHONE_JS)
        assert got["pageWidth"] <= got["vw"], "the page itself scrolls sideways"
        assert got["keys"] and all(right <= got["vw"] for right in got["keys"]), got
        assert got["names"] and all(n == 1 for _, n in got["names"]), got["names"]
        # a tap on a plot mark shows what hovering it shows (its title)
        for plot in ("rating", "win-share"):
            mark = page.locator(f'[data-testid="plot-{plot}"] g.mark').first
            want = mark.locator(":scope > title").text_content()
            mark.scroll_into_view_if_needed()
            mark.tap()
            tip = page.locator('[data-testid="plot-tip"]')
            assert tip.is_visible() and tip.text_content() == want
        page.locator("h1").tap()
        assert not page.locator('[data-testid="plot-tip"]').is_visible()
        page.screenshot(path=str(artifacts / "report-phone.png"), full_page=True)
        assert not errors, errors
    finally:
        context.close()


def test_report_view_is_in_its_url(probe: PageProbe, night: tuple[Path, str]) -> None:
    out = night[0]
    games = _games(out)
    page = _open_report(probe, out)
    # every variant at once
    page.select_option('[data-testid="gb-variant"]', "all")
    page.wait_for_selector('[data-testid="game-browser"][data-ready="true"]')
    assert sorted(_rows(page)) == [g for g, _v, _l in games]
    # a view: the second variant, one bot, faults only, a chosen game
    second = page.locator('[data-testid="gb-variant"] option').nth(2).get_attribute("value")
    page.select_option('[data-testid="gb-variant"]', second)
    page.wait_for_selector('[data-testid="game-browser"][data-ready="true"]')
    page.select_option('[data-testid="gb-bot"]', "cheat")
    page.check('[data-testid="gb-faults"]')
    rows = _rows(page)
    assert rows
    page.locator(f'[data-testid="game-row"][data-game="{rows[-1]}"] td').nth(2).click()
    url = page.url
    query = parse_qs(urlsplit(url).query)
    assert query["bot"] == ["cheat"] and query["faults"] == ["1"] and query["game"] == [rows[-1]], url
    # the same URL in a fresh page shows the same view
    page.goto("about:blank")
    page.goto(url)
    page.wait_for_selector('[data-testid="game-browser"][data-ready="true"]')
    assert page.input_value('[data-testid="gb-variant"]') == second
    assert page.input_value('[data-testid="gb-bot"]') == "cheat" and page.is_checked('[data-testid="gb-faults"]')
    assert _rows(page) == rows
    assert page.get_attribute(f'[data-testid="game-row"][data-game="{rows[-1]}"]', "class").endswith("chosen")
    # the all-variants choice is in the URL too
    page.select_option('[data-testid="gb-variant"]', "all")
    page.wait_for_selector('[data-testid="game-browser"][data-ready="true"]')
    assert parse_qs(urlsplit(page.url).query)["variant"] == ["all"]
    everywhere = _rows(page)  # the cheat's faulted games of every variant
    assert set(rows) < set(everywhere)
    page.reload()
    page.wait_for_selector('[data-testid="game-browser"][data-ready="true"]')
    assert page.input_value('[data-testid="gb-variant"]') == "all"
    assert _rows(page) == everywhere
    # hostile or stale parameters change nothing but the view: unknown values are ignored, the game
    # id is only ever compared as text
    base = url.split("?")[0]
    page.goto(base + "?variant=nope&bot=%3Cimg%20src%3Dx%3E&result=x&page=-3&game=%22%5D%3Cimg%20src%3Dx%3E")
    page.wait_for_selector('[data-testid="game-browser"][data-ready="true"]')
    assert page.input_value('[data-testid="gb-variant"]') == "0" and page.input_value('[data-testid="gb-bot"]') == ""
    assert page.input_value('[data-testid="gb-result"]') == "" and page.locator("img").count() == 0
    assert sorted(_rows(page)) == sorted(g for g, v, _l in games if v == _first_variant(page))
    page.goto(url)
    page.wait_for_selector('[data-testid="game-browser"][data-ready="true"]')
    page.locator('[data-testid="game-row"] [data-testid="watch"]').first.wait_for()
    # the viewer: its step and seat view survive a reload of its URL
    page.locator('[data-testid="watch"]').first.click()
    page.wait_for_selector(READY)
    page.evaluate("() => window.refereeViewer.go(4)")
    page.select_option('[data-testid="view-select"]', "1")
    shared = page.url
    q = parse_qs(urlsplit(shared).query)
    assert q["step"] == ["4"] and q["view"] == ["1"] and "game" in q, shared
    page.goto("about:blank")
    page.goto(shared)
    page.wait_for_selector(READY)
    assert page.get_attribute('[data-testid="viewer"]', "data-frame") == "4"
    assert page.input_value('[data-testid="view-select"]') == "1"
    probe.assert_clean(out.as_uri() + "/")


def test_log_links_show_text(probe: PageProbe, night: tuple[Path, str]) -> None:
    """The static report's "log" link opens the game as text (the viewer page's text form), and
    ``referee serve`` serves a log decompressed as text/plain at /log/GAME."""
    import urllib.request

    from referee.runtime.gamelog import read_log_bytes
    from referee.view.serve import make_server
    from tests.view.axe import violations

    out = night[0]
    page = _open_report(probe, out)
    row = page.locator('[data-testid="game-row"]').first
    game = row.get_attribute("data-game")
    row.locator('[data-testid="log"]').click()
    page.wait_for_selector(READY)
    text = page.inner_text('[data-testid="game-text"]')
    log = next(out / lg for g, _v, lg in _games(out) if g == game)
    data = frames_from_log(log)
    assert text.startswith(f"game {game} ") and "verified by replay" in text
    for f in data["frames"]:
        assert f"step {f['i']} [{f['kind']}] {f['text']}" in text
    assert not violations(page)
    page.click('[data-testid="to-table"]')
    page.wait_for_selector('[data-testid="btn-next"]')
    probe.assert_clean(out.as_uri() + "/")

    server = make_server(out, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/log/{game}", timeout=10) as resp:
            assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
            assert resp.read() == read_log_bytes(log.read_bytes())
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/log/..%2fledger.sqlite", timeout=10)
        assert err.value.code == 404
    finally:
        server.shutdown()
        server.server_close()


def test_bench_viewers_on_a_night(night: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    """``referee bench viewers --out OUT`` writes every game's page into a folder of its own and gives
    its figures (read, never asserted: a benchmark); the night's own pages are left as they were."""
    import json

    from referee.cli import main

    out = night[0]
    before = {p.name: p.stat().st_mtime_ns for p in (out / "games").glob("*.frames.js")}
    assert main(["bench", "viewers", "--out", str(out), "--sample", "2", "--jobs", "1", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["pages"] == len(_games(out)) and r["failed"] == 0 and r["night"] is None
    assert r["wall_ms_per_page"] > 0 and r["cpu_ms_per_page"] > 0 and r["sample"] == 2
    assert isinstance(r["live_cpu_ms_per_page"], float) and r["replay_cpu_ms_per_game"] > 0  # made as played
    assert {p.name: p.stat().st_mtime_ns for p in (out / "games").glob("*.frames.js")} == before
    assert main(["bench", "viewers", "--out", str(out / "nothing-here")]) == 2  # a user error
    assert capsys.readouterr().err.startswith("error: bench viewers:")
