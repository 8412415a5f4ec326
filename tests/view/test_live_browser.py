"""A game watched live in the browser: ``referee serve``'s live page lists a game being played by
``referee run`` in another process, its "watch" link opens the viewer following the game through
server-sent events (``/live/<game>``: the game's event records, version 2 of docs/VIEWER-FORMAT.md,
expanded in the page), step by step, until the final state: every step shown is the version 1
builder's frame of the game's log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from tests.league.conftest import REFEREE, REPO
from tests.view.conftest import PageProbe
from tests.view.test_serve import _Served

SLOW_BOT = REPO / "tests" / "bots" / "slow_bot.py"


def _slow_night(tmp_path: Path) -> Path:
    bots = "".join(
        f'[[bots]]\nname = "slow-{n}"\ncommand = ["{{python}}", "{SLOW_BOT}"]\n'
        'env = { BOT_DELAY_MS = "120", BOT_SLOW_TURNS = "100000" }\n'
        for n in "abc"
    )
    cfg = tmp_path / "league.toml"
    cfg.write_text(
        f'name = "slow"\nseed = 3\nout = "out"\nconcurrency = 1\n[clock]\nmove_ms = 5000\n{bots}'
        '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'
    )
    return cfg


def test_a_game_is_watched_live_step_by_step_to_its_final_state(tmp_path: Path, probe: PageProbe) -> None:
    cfg = _slow_night(tmp_path)
    out = tmp_path / "out"
    served = _Served(out)
    proc = subprocess.Popen(
        [*REFEREE, "run", str(cfg), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        page = probe.page
        page.goto(served.origin + "/live?every=100")
        link = page.wait_for_selector('[data-testid="running"] a[data-testid^="watch-"]', timeout=60_000)
        assert link is not None
        game = (link.get_attribute("data-testid") or "").removeprefix("watch-")
        href = link.get_attribute("href")
        page.goto(served.origin + (href or ""))
        # (a loaded machine may take seconds to open the page: the bots think 120 ms a move)
        page.wait_for_selector('[data-testid="viewer"][data-ready="true"][data-live="following"]', timeout=30_000)
        assert "live" in (page.text_content('[data-testid="verified"]') or "")
        step = "() => window.refereeViewer.step"
        steps = "() => window.refereeViewer.steps"
        first = page.evaluate(steps)
        # it follows the newest step as records arrive
        page.wait_for_function(f"() => window.refereeViewer.steps > {first} + 2")
        at_newest = "() => window.refereeViewer.step === window.refereeViewer.steps - 1"
        assert page.evaluate(at_newest)
        # stepped back, it stays where the user is while the game goes on
        page.keyboard.press("Home")
        now = page.evaluate(steps)
        page.wait_for_function(f"() => window.refereeViewer.steps > {now} + 2")
        assert page.evaluate(step) == 0
        page.keyboard.press("End")  # back on the newest step: following again
        page.wait_for_selector('[data-testid="viewer"][data-live="done"]', timeout=60_000)
        # the game's page (version 2: its events) is there, and what the viewer showed step by step,
        # expanded from the live records as they came, is the version 1 builder's frames of its log
        final = (out / "games" / f"{game}.frames.js").read_text(encoding="utf-8")
        data = json.loads(final[final.index("=") + 1 :].rstrip().rstrip(";"))
        assert data["version"] == 2 and data["events"]
        from referee.view.frames import frames_from_log, materialize

        (log,) = [p for p in (out / "games").glob(f"{game}.jsonl*") if p.name != f"{game}.frames.js"]
        want = materialize(frames_from_log(log))
        assert page.evaluate(steps) == len(want)
        assert page.evaluate(step) == len(want) - 1
        assert page.get_attribute('[data-testid="verified"]', "data-verified") == "true"
        assert page.text_content('[data-testid="result-reason"]') == data["result"]["reason"]
        shown = page.evaluate("(n) => Array.from({length: n}, (_, i) => window.refereeViewer.state(i))", len(want))
        assert shown == json.loads(json.dumps(want))
        proc.send_signal(signal.SIGINT)  # the rest of the night is not needed: Ctrl-C
        _, err = proc.communicate(timeout=60)
        assert proc.returncode in (0, 130), err
        assert not list((out / "live").glob("*.frames.jsonl")), "an interrupted game leaves no live file"
        probe.assert_clean(served.origin + "/")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        served.close()
