"""axe-core finds no accessibility violation in the viewer (tests/view/axe.py runs it in Debian's
chromium): at every step of a hand-made ask game (a fault, a retry, fallback moves, a stalled end)
and a chickens game, from the whole table's view and a seat's, on a desktop and on a phone. The
report's run is in tests/view/test_report.py (it needs a real night)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from referee.view import render_viewer
from tests.view.axe import violations
from tests.view.conftest import PageProbe
from tests.view.gamedata import ask_game, chickens_game
from tests.view.test_viewer_browser import READY

PHONE = {"width": 390, "height": 844}


def _kinds_once(data: dict[str, Any]) -> list[int]:
    """The first step of every kind of frame (each kind draws different badges and colours)."""
    seen: dict[str, int] = {}
    for f in data["frames"]:
        key = f["kind"] + ("/fault" if f["fault"] else "") + ("/retry" if f["retry"] else "")
        key += "/fallback" if f["fallback"] else ""
        seen.setdefault(key, f["i"])
    return sorted(seen.values())


@pytest.mark.parametrize("game", ["ask", "chickens"])
def test_viewer_has_no_axe_violation(probe: PageProbe, tmp_path: Path, game: str) -> None:
    data = ask_game() if game == "ask" else chickens_game()
    path = tmp_path / f"{data['game']}.html"
    path.write_text(render_viewer(data), encoding="utf-8")
    page = probe.page
    steps = _kinds_once(data)
    for size, query, ks in (({"width": 1366, "height": 800}, "", steps), (PHONE, "?view=1", steps[-1:])):
        page.set_viewport_size(size)
        page.goto(path.as_uri() + query)
        page.wait_for_selector(READY)
        for k in ks:
            page.evaluate("(k) => window.refereeViewer.go(k)", k)
            found = violations(page)
            assert not found, f"{game} game, step {k}, {size['width']} px wide{query}:\n" + "\n".join(found)
    # the event log scrolls, so the keyboard must be able to reach it
    assert page.get_attribute('[data-testid="log"]', "tabindex") == "0"
    probe.assert_clean(tmp_path.as_uri() + "/")
