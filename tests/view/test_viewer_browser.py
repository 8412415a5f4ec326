"""The viewer in a real browser (Debian's chromium via Playwright): what the page shows at step k is
frame k's materialized state; controls, keyboard, scrubber, seat views, the many-games shell; no
console error and no request outside the page's folder. Screenshots go to test-artifacts/view/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from referee.view import frames_js, materialize, render_viewer, render_viewer_shell
from tests.view.conftest import PageProbe
from tests.view.gamedata import ask_game, chickens_game, match_game

READY = '[data-testid="viewer"][data-ready="true"]'

# everything the table shows, read from the DOM hooks in one call
VISIBLE_JS = """
(n) => {
  const q = (sel) => document.querySelector(sel);
  const all = (sel) => Array.from(document.querySelectorAll(sel));
  const text = (sel) => { const e = q(sel); return e ? e.textContent.trim() : null; };
  const seats = [];
  for (let s = 0; s < n; s++) {
    seats.push({
      hand: all(`[data-testid="hand-${s}"] [data-card]`).map((e) => e.dataset.card),
      backs: all(`[data-testid="hand-${s}"] [data-back]`).length,
      count: text(`[data-testid="count-${s}"]`),
      laid: all(`[data-testid="laid-${s}"] [data-family], [data-testid="laid-${s}"] [data-card]`)
        .map((e) => e.dataset.family || e.dataset.card),
      score: text(`[data-testid="score-${s}"]`),
      markers: all(`[data-testid="markers-${s}"] [data-testid]`).map((e) => e.dataset.testid.replace(/-\\d+$/, "")),
    });
  }
  return {
    step: Number(q('[data-testid="viewer"]').dataset.frame),
    counter: Number(q('[data-testid="frame-counter"]').dataset.frame),
    scrubber: Number(q('[data-testid="scrubber"]').value),
    seats,
    centre: q('[data-testid="centre"]') ? all('[data-testid="centre"] [data-card]').map((e) => e.dataset.card) : null,
    stock: text('[data-testid="stock"]'),
    round: text('[data-testid="round"]'),
    kind: q('[data-testid="event"]').dataset.kind,
  };
}
"""


def visible(page: Any, n: int) -> dict[str, Any]:
    return page.evaluate(VISIBLE_JS, n)


def expected_markers(data: dict[str, Any], st: dict[str, Any], s: int) -> list[str]:
    turn = st.get("turn")
    turns = [] if turn is None else turn if isinstance(turn, list) else [turn]
    out = []
    if data["kind"] == "ask" and st.get("dealer") == s:
        out.append("marker-dealer")
    if data["kind"] == "chickens" and st.get("leader") == s:
        out.append("marker-leader")
    if data["kind"] == "chickens" and st.get("commissioner") == s:
        out.append("marker-commissioner")
    if s in turns:
        out.append("marker-turn")
    elif s in (st.get("waiting") or []):
        out.append("marker-waiting")
    if data["kind"] == "chickens" and (st.get("played") or [False] * 9)[s]:
        out.append("marker-played")
    if s in (st.get("faulted") or []):
        out.append("marker-fallback")
    if (st.get("in_hand") or [True] * 9)[s] is False:
        out.append("marker-out")
    return out


def assert_shows(
    page: Any, data: dict[str, Any], states: list[dict[str, Any]], k: int, view: int | None = None
) -> None:
    """The page shows step k exactly as frame k's materialized state says (``view``: the seat whose
    view is shown, None for all hands open)."""
    n = len(data["seats"])
    st = states[k]
    got = visible(page, n)
    assert (got["step"], got["counter"], got["scrubber"]) == (k, k, k)
    assert got["kind"] == data["frames"][k]["kind"]
    for s in range(n):
        seat = got["seats"][s]
        hand = st["hands"][str(s)]
        if hand is None:  # not in this hand
            assert seat["hand"] == [] and seat["backs"] == 0 and seat["count"] == "–"
        elif view is None or view == s or (data["kind"] == "chickens" and not (st.get("played") or [False] * n)[s]):
            # chickens: every hand is public (same cards each round, every play revealed) but while it
            # holds back a hidden play of this turn
            assert seat["hand"] == hand, f"step {k} seat {s} hand"
            assert seat["backs"] == 0
        else:
            assert seat["hand"] == [], f"step {k}: seat {s}'s cards are visible from seat {view}"
            assert seat["backs"] == st["counts"][s]
        if hand is not None:
            assert seat["count"] == str(st["counts"][s]), f"step {k} seat {s} count"
        assert seat["laid"] == st["laid"][s], f"step {k} seat {s} laid"
        assert seat["score"] == str(st["scores"][s]), f"step {k} seat {s} score"
        assert seat["markers"] == expected_markers(data, st, s), f"step {k} seat {s} markers"
    if data["kind"] == "chickens":
        assert got["centre"] == st["centre"], f"step {k} centre"
        rounds = data["rules"]["rounds"] or data["players"]  # a log header's rules record has rounds null
        assert got["round"] == f"{st['round']} / {rounds}"
    else:
        assert got["centre"] is None
        has_stock = data["rules"]["stock"] > 0 or st["stock"] > 0
        assert got["stock"] == (str(st["stock"]) if has_stock else None)


def open_page(probe: PageProbe, path: Path, query: str = "") -> Any:
    page = probe.page
    page.goto(path.as_uri() + query)
    page.wait_for_selector(READY)
    return page


def step_of(page: Any) -> int:
    return int(page.get_attribute('[data-testid="viewer"]', "data-frame"))


def shot(page: Any, artifacts: Path, name: str) -> None:
    page.screenshot(path=str(artifacts / f"{name}.png"), full_page=True)
    assert (artifacts / f"{name}.png").stat().st_size > 5000


@pytest.fixture
def ask_page(tmp_path: Path) -> tuple[Path, dict[str, Any], list[dict[str, Any]]]:
    data = ask_game()
    path = tmp_path / "g-000042.html"
    path.write_text(render_viewer(data), encoding="utf-8")
    return path, data, materialize(data)


@pytest.fixture
def chickens_page(tmp_path: Path) -> tuple[Path, dict[str, Any], list[dict[str, Any]]]:
    data = chickens_game()
    path = tmp_path / "g-000043.html"
    path.write_text(render_viewer(data), encoding="utf-8")
    return path, data, materialize(data)


def test_ask_game_step_by_step(probe: PageProbe, ask_page: Any, artifacts: Path) -> None:
    path, data, states = ask_page
    page = open_page(probe, path)
    last = len(states) - 1
    assert page.is_disabled('[data-testid="btn-prev"]') and page.is_disabled('[data-testid="btn-start"]')
    for k in range(last + 1):
        assert_shows(page, data, states, k)
        if k in (1, 4, 5, 11, last):
            shot(page, artifacts, f"ask-step-{k:02d}")
        if k < last:
            page.click('[data-testid="btn-next"]')
    assert page.is_disabled('[data-testid="btn-next"]') and page.is_disabled('[data-testid="btn-end"]')
    page.click('[data-testid="btn-prev"]')
    assert_shows(page, data, states, last - 1)
    page.click('[data-testid="btn-start"]')
    assert_shows(page, data, states, 0)
    page.click('[data-testid="btn-end"]')
    assert_shows(page, data, states, last)
    # stepping back over cached states gives the same pictures
    for k in range(last - 1, -1, -3):
        page.evaluate("(k) => window.refereeViewer.go(k)", k)
        assert_shows(page, data, states, k)
    probe.assert_clean(path.parent.as_uri() + "/")


def test_ask_game_marks_every_event(probe: PageProbe, ask_page: Any) -> None:
    path, data, states = ask_page
    page = open_page(probe, path)
    header = page.inner_text('[data-testid="header"]')
    assert "g-000042" in header and "suited-stock" in header and "SmartBot 0.3" in header
    assert page.get_attribute('[data-testid="verified"]', "data-verified") == "true"
    assert page.inner_text('[data-testid="result-reason"]').lower() == "stalled"
    assert "forfeit" in page.inner_text('[data-testid="result-2"]')
    assert page.inner_text('[data-testid="hello-0"]') == "SmartBot 0.3"

    def event_at(k: int) -> tuple[str, list[str]]:
        page.evaluate("(k) => window.refereeViewer.go(k)", k)
        ev = page.locator('[data-testid="event"]')
        badges = ev.locator('[data-testid^="badge-"]').evaluate_all("(es) => es.map((e) => e.dataset.testid)")
        return ev.inner_text(), badges

    text, badges = event_at(1)
    assert "alice" in text and "bob" in text and "asks" in text
    assert page.locator('[data-testid="event"] [data-card="7C"]').count() == 2  # asked for, and received
    assert badges == ["badge-please", "badge-hit", "badge-think"] and "12.5 ms" in text
    assert page.locator('[data-testid="hand-0"] [data-card="7C"].moved').count() == 1
    assert page.get_attribute('[data-testid="seat-0"]', "data-actor") == "true"
    assert page.get_attribute('[data-testid="seat-1"]', "data-target") == "true"
    text, badges = event_at(2)
    assert "lays family" in text and page.locator('[data-testid="laid-0"] [data-family="7"].moved').count() == 1
    text, badges = event_at(3)
    assert badges == ["badge-please", "badge-miss", "badge-think"]
    text, badges = event_at(4)
    assert "draws from the stock" in text and page.locator('[data-testid="event"] [data-card="8C"]').count() == 1
    text, badges = event_at(5)
    assert badges == ["badge-fault"] and "timeout" in text
    assert "no reply within 1000 ms" in page.inner_text('[data-testid="fault-detail"]')
    assert page.locator('[data-testid="marker-fallback-2"]').count() == 1
    text, badges = event_at(6)
    assert "badge-fallback" in badges and "badge-hit" in badges
    text, badges = event_at(11)
    assert "badge-retry" in badges and "illegal" in text and "(1 left)" in text
    assert "family 7 is laid" in page.inner_text('[data-testid="retry-detail"]')
    text, badges = event_at(12)
    assert badges == ["badge-rude", "badge-miss", "badge-think"]
    assert "rude ask" in text and "nothing moves" in text
    text, badges = event_at(len(states) - 1)
    assert "badge-stalled" in badges
    assert "2 asks in a row moved no card" in page.inner_text('[data-testid="end-detail"]')
    # the log: one line per frame, faults, retries and fallback moves tagged; the filter keeps only those
    items = page.locator('[data-testid="log"] li')
    assert items.count() == len(states)
    assert "timeout" in page.inner_text('[data-testid="log-item-5"]')
    assert "retry" in page.inner_text('[data-testid="log-item-11"]')
    assert "fallback" in page.inner_text('[data-testid="log-item-6"]')
    page.check('[data-testid="log-filter"]')
    shown = items.evaluate_all("(es) => es.filter((e) => e.offsetParent !== null).map((e) => Number(e.dataset.i))")
    assert shown == [5, 6, 7, 9, 10, 11, 13]
    page.click('[data-testid="log-item-9"]')
    assert_shows(page, data, states, 9)
    probe.assert_clean(path.parent.as_uri() + "/")


def test_seat_view_hides_the_other_hands(probe: PageProbe, ask_page: Any, artifacts: Path) -> None:
    path, data, states = ask_page
    page = open_page(probe, path)
    options = page.locator('[data-testid="view-select"] option').all_inner_texts()
    assert options == [
        "all hands (god view)",
        "as seat 0 (alice) saw it",
        "as seat 1 (bob) saw it",
        "as seat 2 (carol) saw it",
    ]
    page.select_option('[data-testid="view-select"]', "1")
    for k in range(len(states)):
        page.evaluate("(k) => window.refereeViewer.go(k)", k)
        assert_shows(page, data, states, k, view=1)
    # alice's draw (step 4): bob sees that she drew, not what; alice sees the card
    page.evaluate("() => window.refereeViewer.go(4)")
    assert page.locator('[data-testid="event"] [data-card]').count() == 0
    assert page.locator('[data-testid="event"] [data-back]').count() == 1
    assert page.locator('[data-testid="event-text"]').count() == 0
    shot(page, artifacts, "ask-step-04-as-seat-1")
    page.select_option('[data-testid="view-select"]', "0")
    assert_shows(page, data, states, 4, view=0)
    assert page.locator('[data-testid="event"] [data-card="8C"]').count() == 1
    # the viewing seat sits at the bottom of the table
    bottom = page.locator("#row-bottom [data-testid^=seat-]").evaluate_all("(es) => es.map((e) => e.dataset.seat)")
    assert bottom == ["0"]
    page.select_option('[data-testid="view-select"]', "all")
    assert_shows(page, data, states, 4)
    probe.assert_clean(path.parent.as_uri() + "/")


def test_keyboard_scrubber_and_play(probe: PageProbe, ask_page: Any) -> None:
    path, data, states = ask_page
    last = len(states) - 1
    page = open_page(probe, path)
    kb = page.keyboard
    for _ in range(3):
        kb.press("ArrowRight")
    assert_shows(page, data, states, 3)
    kb.press("ArrowLeft")
    assert_shows(page, data, states, 2)
    kb.press("End")
    assert_shows(page, data, states, last)
    kb.press("Home")
    assert_shows(page, data, states, 0)
    kb.press("PageDown")
    assert_shows(page, data, states, 10)
    kb.press("PageUp")
    assert_shows(page, data, states, 0)
    # the scrubber: drag to a value, then its own arrow keys
    page.locator('[data-testid="scrubber"]').fill("7")
    assert_shows(page, data, states, 7)
    page.focus('[data-testid="scrubber"]')
    kb.press("ArrowRight")
    assert_shows(page, data, states, 8)
    kb.press("Home")
    assert_shows(page, data, states, 0)
    # play and pause with the space bar, at the fastest speed
    page.select_option('[data-testid="speed"]', "16")
    page.focus("body")
    kb.press(" ")
    assert page.get_attribute('[data-testid="btn-play"]', "data-state") == "playing"
    page.wait_for_function("() => window.refereeViewer.step >= 3")
    kb.press(" ")
    assert page.get_attribute('[data-testid="btn-play"]', "data-state") == "paused"
    k = step_of(page)
    page.wait_for_timeout(250)  # paused: nothing moves any more
    assert step_of(page) == k
    assert_shows(page, data, states, k)
    # space on the focused play button toggles once (not once by the key and once by the click)
    page.click('[data-testid="btn-play"]')
    assert page.get_attribute('[data-testid="btn-play"]', "data-state") == "playing"
    kb.press(" ")
    assert page.get_attribute('[data-testid="btn-play"]', "data-state") == "paused"
    # space on the log's filter box ticks it; the arrows still step
    page.focus('[data-testid="log-filter"]')
    kb.press(" ")
    assert page.is_checked('[data-testid="log-filter"]')
    assert page.get_attribute('[data-testid="btn-play"]', "data-state") == "paused"
    k = step_of(page)
    kb.press("ArrowLeft")
    assert step_of(page) == k - 1
    # played to the end, it stops there
    page.click('[data-testid="btn-play"]')
    page.wait_for_function("() => document.querySelector('[data-testid=btn-play]').dataset.state === 'paused'")
    assert_shows(page, data, states, last)
    # a manual step pauses playback
    kb.press("Home")
    page.click('[data-testid="btn-play"]')
    page.click('[data-testid="btn-next"]')
    assert page.get_attribute('[data-testid="btn-play"]', "data-state") == "paused"
    probe.assert_clean(path.parent.as_uri() + "/")


def test_chickens_game_step_by_step(probe: PageProbe, chickens_page: Any, artifacts: Path) -> None:
    path, data, states = chickens_page
    page = open_page(probe, path)
    last = len(states) - 1
    for k in range(last + 1):
        assert_shows(page, data, states, k)
        if k in (3, 4, 5, 12):
            shot(page, artifacts, f"chickens-step-{k:02d}")
        if k < last:
            page.keyboard.press("ArrowRight")
    assert page.get_attribute('[data-testid="verified"]', "data-verified") == "false"
    assert page.inner_text('[data-testid="result-reason"]').lower() == "aborted"
    # the reveal shows every seat's card; the takes keep showing it
    page.evaluate("() => window.refereeViewer.go(4)")
    for s, card in enumerate(["robber", "queen", "ace"]):
        assert page.locator(f'[data-testid="revealed-{s}"] [data-card="{card}"]').count() == 1
    assert "+4" in page.inner_text('[data-testid="centre"]')
    page.evaluate("() => window.refereeViewer.go(5)")
    text = page.inner_text('[data-testid="event"]')
    assert "ann" in text and "takes" in text and page.locator('[data-testid="event"] [data-card="ace"]').count() == 1
    # a hidden play: its card is seen by the player only
    page.select_option('[data-testid="view-select"]', "0")
    page.evaluate("() => window.refereeViewer.go(2)")
    assert_shows(page, data, states, 2, view=0)
    assert page.locator('[data-testid="event"] [data-card]').count() == 0
    page.select_option('[data-testid="view-select"]', "1")
    assert_shows(page, data, states, 2, view=1)
    assert page.locator('[data-testid="event"] [data-card="queen"]').count() == 1
    page.evaluate("() => window.refereeViewer.go(12)")
    assert_shows(page, data, states, 12, view=1)
    # the round event starts round 2 (it carries the new round's number): round 1 is what is over
    text = page.inner_text('[data-testid="event"]')
    assert "Round 1 is over; round 2 begins" in text, text
    shot(page, artifacts, "chickens-step-12-as-seat-1")
    probe.assert_clean(path.parent.as_uri() + "/")


def test_match_tie_break_hand(probe: PageProbe, tmp_path: Path, artifacts: Path) -> None:
    data = match_game()
    states = materialize(data)
    path = tmp_path / "g-000044.html"
    path.write_text(render_viewer(data), encoding="utf-8")
    page = open_page(probe, path)
    for k in range(len(states)):
        page.evaluate("(k) => window.refereeViewer.go(k)", k)
        assert_shows(page, data, states, k)
        assert page.inner_text('[data-testid="hand-number"]') == "hand 3 · g-000044.h3"
        assert page.get_attribute('[data-testid="seat-2"]', "class").split().count("out") == 1
        assert "not in this hand" in page.inner_text('[data-testid="hand-2"]')
    assert "race match to 3" in page.inner_text('[data-testid="meta"]')
    page.select_option('[data-testid="view-select"]', "3")
    page.keyboard.press("Home")
    assert_shows(page, data, states, 0, view=3)
    shot(page, artifacts, "match-tie-break-as-seat-3")
    probe.assert_clean(tmp_path.as_uri() + "/")


@pytest.mark.parametrize("variant", ["kwartet", "chickens"])
def test_a_version_2_page_shows_the_replays_frames(probe: PageProbe, tmp_path: Path, variant: str) -> None:
    """``referee view`` writes version 2 (the game's events); the page expands them (expand.js) and shows
    at every step what the version 1 builder's frame of the same log says."""
    import sys

    from referee.cli import main
    from referee.view.frames import frames_from_log

    random_bot = f"{sys.executable} {Path(__file__).resolve().parents[2] / 'sample_bots' / 'random_bot.py'}"
    bots = [a for n in "abc" for a in ("--bot", f"{n}={random_bot}")]
    assert main(["play", variant, "--seed", "7", *bots, "--game-id", "g-2", "--log", str(tmp_path)]) == 0
    (log,) = tmp_path.glob("g-2.jsonl*")
    path = tmp_path / "g-2.html"
    assert main(["view", str(log), "-o", str(path)]) == 0
    assert '"version":2' in path.read_text(encoding="utf-8") and '"frames":' not in path.read_text(encoding="utf-8")
    data = frames_from_log(log)
    states = materialize(data)
    page = open_page(probe, path)
    assert page.evaluate("() => window.refereeViewer.steps") == len(states) > 20
    shown = page.evaluate("(n) => Array.from({length: n}, (_, i) => window.refereeViewer.state(i))", len(states))
    assert shown == materialize(json.loads(json.dumps(data)))
    for k in range(0, len(states), max(1, len(states) // 15)):
        page.evaluate("(k) => window.refereeViewer.go(k)", k)
        assert_shows(page, data, states, k)
    assert page.get_attribute('[data-testid="verified"]', "data-verified") == "true"
    probe.assert_clean(path.parent.as_uri() + "/")


def test_shell_loads_a_game_from_its_frames_js(probe: PageProbe, tmp_path: Path, artifacts: Path) -> None:
    data = chickens_game()
    states = materialize(data)
    (tmp_path / "viewer.html").write_text(render_viewer_shell(back_href="../report.html"), encoding="utf-8")
    (tmp_path / "g-000043.frames.js").write_text(frames_js(data), encoding="utf-8")
    page = open_page(probe, tmp_path / "viewer.html", "?game=g-000043&step=5&view=2")
    assert_shows(page, data, states, 5, view=2)
    assert page.title().startswith("g-000043")
    assert page.get_attribute('[data-testid="back"]', "href") == "../report.html"
    page.keyboard.press("End")
    assert_shows(page, data, states, len(states) - 1, view=2)
    # places in words (the chickens game's ranks are 1, 2, 2): "#2" beside a copy named "b#2" read as one
    places = [page.inner_text(f'[data-testid="result-{s}"] .rk') for s in range(3)]
    assert places == ["1st", "2nd", "2nd"], places
    shot(page, artifacts, "shell-chickens-end")
    probe.assert_clean(tmp_path.as_uri() + "/")
    assert probe.requests == [
        (tmp_path / "viewer.html").as_uri() + "?game=g-000043&step=5&view=2",
        (tmp_path / "g-000043.frames.js").as_uri(),
    ]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("", "no game given"),
        ("?game=../secret", "not a game id"),
        ("?game=%2F%2Fexample.org%2Fx", "not a game id"),
        ("?game=g-404", "could not load g-404.frames.js"),
    ],
)
def test_shell_says_what_is_wrong(probe: PageProbe, tmp_path: Path, query: str, message: str) -> None:
    (tmp_path / "viewer.html").write_text(render_viewer_shell(), encoding="utf-8")
    page = probe.page
    page.goto((tmp_path / "viewer.html").as_uri() + query)
    page.wait_for_selector('[data-testid="viewer"][data-ready="error"]')
    err = page.inner_text('[data-testid="load-error"]')
    assert err.startswith("error: ") and message in err
    assert not page.is_visible("#main")
    assert not probe.page_errors
    assert all(u.startswith(tmp_path.as_uri() + "/") for u in probe.requests), probe.requests


def test_hostile_names_are_text(probe: PageProbe, tmp_path: Path) -> None:
    data = ask_game()
    evil = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"><!--'
    data["seats"][0]["bot"] = evil
    data["seats"][1]["hello"] = {"name": evil, "version": "<b>1</b>"}
    data["frames"][1]["text"] = evil
    data["rules"]["families"] = ["7", "8", "9"]
    path = tmp_path / "evil.html"
    path.write_text(render_viewer(data), encoding="utf-8")
    page = open_page(probe, path, "?step=1")
    assert page.evaluate("() => window.__pwned") is None
    assert page.inner_text('[data-testid="bot-0"]') == evil
    assert page.locator("img").count() == 0
    assert_shows(page, data, materialize(data), 1)
    probe.assert_clean(tmp_path.as_uri() + "/")


def test_wrong_data_shows_an_error(probe: PageProbe, tmp_path: Path) -> None:
    data = ask_game()
    (tmp_path / "viewer.html").write_text(render_viewer_shell(), encoding="utf-8")
    js = frames_js(data).replace('"version":1', '"version":7')
    (tmp_path / "g-000042.frames.js").write_text(js, encoding="utf-8")
    page = probe.page
    page.goto((tmp_path / "viewer.html").as_uri() + "?game=g-000042")
    page.wait_for_selector('[data-testid="viewer"][data-ready="error"]')
    assert "frames version 7 is not supported" in page.inner_text('[data-testid="load-error"]')
    probe.assert_clean(tmp_path.as_uri() + "/")
