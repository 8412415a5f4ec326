"""Stalled and aborted games in a real league: two copies of a bot that asks in circles and the tracker.

Stalled games (the stalemate rule) are results and count everywhere; aborted games (past
``[faults] max_decisions``) are not, and every output says how many of each there were."""

from __future__ import annotations

import json
import re
from pathlib import Path

from referee.runtime.gamelog import read_log_bytes

from .conftest import REPO, cli

LOOPING = REPO / "tests" / "bots" / "looping_bot.py"
TRACKER = REPO / "sample_bots" / "tracker_bot.py"

CONFIG = f"""
seed = 1
out = "out"
concurrency = 2

[faults]
max_decisions = 300

[[bots]]
name = "loop1"
command = ["{{python}}", "{LOOPING}"]

[[bots]]
name = "loop2"
command = ["{{python}}", "{LOOPING}"]

[[bots]]
name = "tracker"
command = ["{{python}}", "{TRACKER}"]

[[variants]]
name = "kwartet"          # the stalemate rule ends the loopers' hands after 100 asks that move nothing
sizes = 3
deals = 2

[[variants]]
name = "patient"          # stall 1000: the loopers' hands run into max_decisions (300) and are aborted
rules = {{ base = "kwartet", stall = 1000 }}
sizes = 3
deals = 1
"""


def test_stalled_games_count_and_aborted_ones_are_shown_everywhere(make_config) -> None:
    cfg = make_config(CONFIG)
    out = cfg.parent / "out"
    res = cli("run", str(cfg))
    assert res.returncode == 0, res.stderr
    st = json.loads((out / "standings.json").read_text())
    kw, patient, overall = st["scopes"]["kwartet"], st["scopes"]["patient"], st["scopes"]["overall"]
    # (the tracker breaks ties at random, so how many hands stall or run into the cap varies a little)
    assert kw["stalled"] >= 1 and kw["games"] + kw["aborted"] == 6  # stalled games are in the count
    assert patient["aborted"] >= 1 and patient["stalled"] == 0 and patient["games"] + patient["aborted"] == 3
    assert overall["games"] == kw["games"] + patient["games"]
    assert overall["stalled"] == st["stalled"] == kw["stalled"]
    assert overall["aborted"] == len(st["aborted"]) == patient["aborted"] + kw["aborted"]
    assert all("max_decisions" in a["detail"] for a in st["aborted"])
    # a stalled game is a result: it moved the ratings and the head-to-head of everyone at the table
    assert sum(r["games"] for r in kw["bots"]) == 3 * kw["games"]
    assert all(r["mu"] != 25.0 for r in kw["bots"])
    text = f"{overall['games']} games, {st['stalled']} stalled, {len(st['aborted'])} aborted"
    # the console summary of `referee run`
    assert f"overall ({text})" in res.stdout
    assert re.search(
        rf"in the ledger: {st['stalled']} stalled, {len(st['aborted'])} aborted \(no result; listed "
        r"in standings\.md\)",
        res.stdout,
    ), res.stdout
    assert f"kwartet ({kw['games']} games, {kw['stalled']} stalled, {kw['aborted']} aborted)" in res.stdout
    # standings.md and report.html
    md = (out / "standings.md").read_text()
    assert f"{text}." in md and f"## patient ({patient['games']} game" in md and "## Aborted games" in md
    html = (out / "report.html").read_text()
    assert f"({text})" in html and f"({kw['games']} games, {kw['stalled']} stalled, {kw['aborted']} aborted)" in html
    # `referee standings` (terminal) recomputes the same from the ledger
    again = cli("standings", str(out))
    assert again.returncode == 0 and f"overall ({text})" in again.stdout
    assert (
        f"patient ({patient['games']} game{'s' if patient['games'] != 1 else ''}, 0 stalled, "
        f"{patient['aborted']} aborted)" in again.stdout
    )
    # every stalled game's log replays to the same result
    logs = sorted(Path(out, "games").glob("kwartet-*.jsonl.zst"))
    stalled = [p for p in logs if b'"reason":"stalled"' in read_log_bytes(p.read_bytes()).splitlines()[-1]]
    assert len(stalled) == kw["stalled"]
    rep = cli("replay", "--quiet", str(stalled[0]))
    assert rep.returncode == 0 and "verified" in rep.stdout, rep.stdout + rep.stderr
