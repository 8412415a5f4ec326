"""The report's plots: well-formed SVG with accessible labels, built from the standings dict and ledger
rows; in chromium, no two texts overlap and none is cut off, for 2 to 30 bots with long names."""

from __future__ import annotations

import dataclasses
import random
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from referee.league.ledger import GameRow
from referee.league.standings import compute
from referee.view.plots import (
    _ticks,
    head_to_head_heatmap,
    rating_plot,
    standings_rows,
    think_samples,
    think_time_plot,
    win_share_plot,
)
from tests.view.conftest import PageProbe

NS = "{http://www.w3.org/2000/svg}"


def bot_names(n: int) -> list[str]:
    base = ["alice", "bob", 'Zoë <the> "quick" & brown', "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWW-wide-name", "c", "ddd-ddd"]
    return [base[i] if i < len(base) else f"bot-{i:02d}-{'x' * (i % 17)}" for i in range(n)]


def league_rows(bots: list[str], games: int = 60, seed: int = 1) -> list[GameRow]:
    rnd = random.Random(seed)
    rows = []
    for g in range(games):
        variant = ("kwartet", "chickens", "authors")[g % 3]
        table = rnd.sample(bots, min(4, len(bots)))
        scores = [float(rnd.randint(0, 8)) for _ in table]
        ranks = [1 + sum(1 for o in scores if o > s) for s in scores]
        best = [i for i, s in enumerate(scores) if s == max(scores)]
        shares = [1 / len(best) if i in best else 0.0 for i in range(len(table))]
        think = [{"count": rnd.randint(1, 40), "mean_ms": rnd.lognormvariate(0, 2), "max_ms": 50.0} for _ in table]
        rows.append(
            GameRow(
                game_id=f"g-{g:06d}",
                variant=variant,
                size=len(table),
                table=g,
                deal=0,
                rotation=0,
                seed=g,
                bots=table,
                scores=scores,
                ranks=ranks,
                win_shares=shares,
                forfeits=[],
                faults=[],
                think=think,
                log_path=None,
                reason="complete",
                wall_ms=1.0,
            )
        )
    return rows


def all_plots(bots: list[str]) -> list[str]:
    rows = league_rows(bots)
    st = compute(rows, "test")
    overall = st["scopes"]["overall"]
    return [
        rating_plot(standings_rows(st)),
        win_share_plot(standings_rows(st), fair={"kwartet": 0.25, "chickens": 0.25}),
        head_to_head_heatmap([r["bot"] for r in overall["bots"]], overall["head_to_head"]),
        think_time_plot(think_samples(rows), order=[r["bot"] for r in overall["bots"]]),
    ]


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    assert root.get("role") == "img" and root.get("aria-label")
    assert root[0].tag == f"{NS}title" and root[0].text == root.get("aria-label")
    assert root[1].tag == f"{NS}desc" and root[1].text
    assert "script" not in svg.lower()
    return root


@pytest.mark.parametrize("n", [2, 7, 30])
def test_plots_are_accessible_svg_naming_every_bot(n: int) -> None:
    bots = bot_names(n)
    for svg in all_plots(bots):
        root = parse(svg)
        titles = {t.text for t in root.iter(f"{NS}title")}
        for bot in bots:
            assert any(t and bot in t for t in titles), f"{bot!r} has no label in {root.get('aria-label')}"
        labels = [t for t in root.iter(f"{NS}text") if t.get("class") == "label"]
        assert labels, "no axis labels"
        assert all(len("".join(t.itertext())) > 0 for t in labels)
        assert float(root.get("width", "0")) > 0 and float(root.get("height", "0")) > 0


def test_plots_from_the_standings_dict() -> None:
    bots = bot_names(4)
    rows = league_rows(bots, games=30)
    st = compute(rows, "night")
    rs = standings_rows(st)
    assert list(rs) == ["overall", "authors", "chickens", "kwartet"]
    assert standings_rows(st, ["kwartet", "nope"]) == {"kwartet": st["scopes"]["kwartet"]["bots"]}
    root = parse(rating_plot(rs))
    assert [p.get("data-scope") for p in root.iter(f"{NS}g") if p.get("class") == "panel"] == list(rs)
    # one mark per bot and scope, its tooltip with the exact figures
    first = st["scopes"]["overall"]["bots"][0]
    tips = [t.text or "" for t in root.iter(f"{NS}title")]
    assert any(
        f"mu {first['mu']:.2f}, sigma {first['sigma']:.2f}, ordinal (mu - 3 sigma) {first['ordinal']:.2f}" in t
        for t in tips
    )
    root = parse(win_share_plot(rs))
    tips = [t.text or "" for t in root.iter(f"{NS}title")]
    assert any(
        f"win share {first['win_share']:.3f} (95% interval {first['win_lo']:.3f} to {first['win_hi']:.3f})"
        f" over {first['games']} games" in t
        for t in tips
    )
    h2h = st["scopes"]["overall"]["head_to_head"]
    a, b = first["bot"], next(x for x in h2h[first["bot"]])
    root = parse(head_to_head_heatmap([r["bot"] for r in st["scopes"]["overall"]["bots"]], h2h))
    tips = [t.text or "" for t in root.iter(f"{NS}title")]
    c = h2h[a][b]
    assert f"{a} finished above {b} in {c['above']} of {c['met']} meetings" in " ".join(tips)


def test_think_samples_come_from_ledger_rows() -> None:
    rows = league_rows(["a", "b", "c", "d"], games=9)
    rows[0] = dataclasses.replace(rows[0], reason="aborted")
    samples = think_samples(rows)
    assert set(samples) == {"a", "b", "c", "d"}
    expected = sum(1 for r in rows if r.reason != "aborted" for _ in r.bots)
    assert sum(len(v) for v in samples.values()) == expected
    only = think_samples(rows, variant="chickens")
    assert sum(len(v) for v in only.values()) == sum(
        len(r.bots) for r in rows if r.variant == "chickens" and r.reason != "aborted"
    )


def test_no_data_and_odd_values() -> None:
    for svg in (
        rating_plot({}),
        win_share_plot({"kwartet": []}),
        head_to_head_heatmap(["a"], {}),
        think_time_plot({"a": []}),
        think_time_plot({}),
    ):
        root = parse(svg)
        assert "no data yet" in "".join(root.itertext())
    # non-finite values are skipped, a bot with no samples keeps its row
    root = parse(think_time_plot({"a": [float("nan"), 1.0, 0.0], "b": []}))
    assert [t.text for t in root.iter(f"{NS}text") if t.get("class") == "label"] == ["a", "b"]
    parse(win_share_plot({"x": [{"bot": "a", "win_share": float("inf"), "win_lo": 0.0, "win_hi": 1.0}]}))


def test_ticks_are_round_numbers() -> None:
    assert _ticks(0, 0.37, 4)[:2] == (0.0, 0.4)
    lo, hi, ticks = _ticks(-3.2, 47.9, 4)
    assert (lo, hi) == (-20, 60) and ticks == [-20, 0, 20, 40, 60]


OVERLAP_JS = (Path(__file__).parent / "overlap.js").read_text(encoding="utf-8")


@pytest.mark.parametrize("n", [2, 12, 30])
def test_plot_labels_never_overlap_in_a_browser(probe: PageProbe, tmp_path: Path, artifacts: Path, n: int) -> None:
    page_html = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>plots</title></head>"
        "<body style='margin:8px;font-family:sans-serif'>"
        + "".join(f"<div style='margin:10px 0'>{svg}</div>" for svg in all_plots(bot_names(n)))
        + "</body></html>"
    )
    path = tmp_path / "plots.html"
    path.write_text(page_html, encoding="utf-8")
    page: Any = probe.page
    page.set_viewport_size({"width": 2400, "height": 1000})  # natural size: no scaling down
    page.goto(path.as_uri())
    assert page.evaluate(OVERLAP_JS) == []
    page.screenshot(path=str(artifacts / f"plots-{n}-bots.png"), full_page=True)
    probe.assert_clean(tmp_path.as_uri() + "/")
