"""Standings arithmetic: Wilson intervals, forfeits, order independence."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.league.ledger import GameRow
from referee.league.standings import compute, effective_ranks, wilson
from referee.rules import ranks_from_scores, win_shares


@given(st.integers(min_value=1, max_value=500), st.data())
def test_wilson_interval_contains_the_rate(n: int, data) -> None:
    k = data.draw(st.integers(min_value=0, max_value=n))
    lo, hi = wilson(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_wilson_known_value() -> None:
    lo, hi = wilson(5, 10)
    assert abs(lo - 0.2366) < 1e-3 and abs(hi - 0.7634) < 1e-3


def test_forfeited_seats_rank_last() -> None:
    assert effective_ranks([3, 2, 2, 1], [1, 2, 2, 4], []) == [1, 2, 2, 4]
    assert effective_ranks([3, 2, 2, 1], [1, 2, 2, 4], [0]) == [4, 1, 1, 3]


def _rows(seed: int, n: int) -> list[GameRow]:
    rng = random.Random(seed)
    bots = ["a", "b", "c", "d"]
    rows = []
    for i in range(n):
        seats = rng.sample(bots, 3)
        scores = [float(rng.randint(0, 4)) for _ in seats]
        forfeits = [s for s in range(3) if rng.random() < 0.1]
        shares = win_shares(scores)
        shares = [0.0 if s in forfeits else w for s, w in enumerate(shares)]
        faults = [{"seat": s, "bot": seats[s], "fault": "timeout", "detail": "slow"} for s in forfeits]
        rows.append(
            GameRow(
                game_id=f"kwartet-3p-t0000-d{i:03d}-r0",
                variant="kwartet" if i % 2 else "authors",
                size=3,
                table=0,
                deal=i,
                rotation=0,
                seed=i,
                bots=seats,
                scores=scores,
                ranks=ranks_from_scores(scores),
                win_shares=shares,
                forfeits=forfeits,
                faults=faults,
                think=[{"count": 3, "mean_ms": 1.0 + s, "max_ms": 2.0 + s} for s in range(3)],
                log_path=None,
                reason="complete",
                wall_ms=1.0,
            )
        )
    return rows


@settings(max_examples=10)
@given(st.integers(min_value=0, max_value=10_000))
def test_standings_do_not_depend_on_completion_order(seed: int) -> None:
    rows = _rows(seed, 30)
    shuffled = rows[:]
    random.Random(seed + 1).shuffle(shuffled)
    a, b = compute(rows), compute(shuffled)
    assert a == b
    overall = {r["bot"]: r for r in a["scopes"]["overall"]["bots"]}
    assert sum(r["games"] for r in overall.values()) == 90
    assert abs(sum(r["wins"] for r in overall.values()) - sum(sum(x.win_shares) for x in rows)) < 1e-4
    assert sum(r["forfeits"] for r in overall.values()) == sum(len(x.forfeits) for x in rows)
    assert set(a["scopes"]) == {"overall", "authors", "kwartet"}


def test_a_forfeiting_bot_gets_no_credit_for_what_the_fallback_scored() -> None:
    # "flaky" forfeits every game in seat 0, yet the fallback scored best there
    rows = [
        GameRow(
            game_id=f"kwartet-3p-t0000-d{i:03d}-r0",
            variant="kwartet",
            size=3,
            table=0,
            deal=i,
            rotation=0,
            seed=i,
            bots=["flaky", "b", "c"],
            scores=[5.0, 2.0, 1.0],
            ranks=[1, 2, 3],
            win_shares=[0.0, 1.0, 0.0],
            forfeits=[0],
            faults=[{"seat": 0, "bot": "flaky", "fault": "crash", "detail": "x"}],
            think=[],
            log_path=None,
            reason="complete",
            wall_ms=1.0,
        )
        for i in range(4)
    ]
    result = compute(rows, "t")
    overall = {r["bot"]: r for r in result["scopes"]["overall"]["bots"]}
    assert overall["flaky"]["mean_rank"] == 3.0 and overall["flaky"]["mean_score"] == 0.0
    assert overall["flaky"]["forfeits"] == 4 and overall["flaky"]["wins"] == 0.0
    assert overall["b"]["mean_rank"] == 1.0 and overall["c"]["mean_rank"] == 2.0


def test_a_damaged_ledger_row_is_a_clear_error(tmp_path, capsys) -> None:
    import sqlite3

    from referee.cli import main
    from referee.league.ledger import Ledger

    with Ledger.in_dir(tmp_path) as ledger:
        for row in _rows(3, 4):
            ledger.record(row)
    db = sqlite3.connect(str(tmp_path / "ledger.sqlite"))
    db.execute("UPDATE games SET scores = '[1,' WHERE game_id = 'kwartet-3p-t0000-d002-r0'")
    db.commit()
    db.close()
    assert main(["standings", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "kwartet-3p-t0000-d002-r0" in err and "is damaged" in err and "DELETE FROM games" in err
    assert "Traceback" not in err


def _row(gid: str, variant: str, bots: list[str], scores: list[float], reason: str) -> GameRow:
    counted = reason != "aborted"
    scores = scores if counted else [0.0] * len(bots)
    return GameRow(
        game_id=gid,
        variant=variant,
        size=len(bots),
        table=0,
        deal=0,
        rotation=0,
        seed=1,
        bots=bots,
        scores=scores,
        ranks=ranks_from_scores(scores) if counted else [1] * len(bots),
        win_shares=win_shares(scores) if counted else [0.0] * len(bots),
        forfeits=[],
        faults=[],
        think=[{"count": 1, "mean_ms": 1.0, "max_ms": 1.0}] * len(bots),
        log_path=f"games/{gid}.jsonl",
        reason=reason,
        wall_ms=1.0,
        detail="no end after 5000 decisions" if not counted else None,
    )


def test_stalled_games_count_and_aborted_games_are_counted_apart() -> None:
    from referee.league.standings import games_text, rich_tables, to_markdown

    rows = [
        _row("k1", "kwartet", ["a", "b", "c"], [3, 1, 0], "complete"),
        _row("k2", "kwartet", ["a", "b", "c"], [0, 2, 0], "stalled"),  # a result like any other
        _row("k3", "kwartet", ["a", "b", "c"], [0, 0, 0], "aborted"),  # no result
        _row("h1", "authors", ["a", "b", "c"], [5, 4, 4], "complete"),
        _row("h2", "authors", ["a", "b", "c"], [0, 0, 0], "aborted"),
        _row("h3", "authors", ["a", "b", "c"], [0, 0, 0], "aborted"),
    ]
    st = compute(rows)
    assert (st["games"], st["stalled"], len(st["aborted"])) == (3, 1, 3)
    sc = st["scopes"]
    assert {k: (v["games"], v["stalled"], v["aborted"]) for k, v in sc.items()} == {
        "overall": (3, 1, 3),
        "authors": (1, 0, 2),
        "kwartet": (2, 1, 1),
    }
    kw = {r["bot"]: r for r in sc["kwartet"]["bots"]}
    assert kw["b"]["games"] == 2 and kw["b"]["wins"] == 1.0  # b won the stalled game
    assert sc["kwartet"]["head_to_head"]["b"]["a"] == {"above": 1, "met": 2}
    assert kw["b"]["mu"] != 25.0  # ratings moved
    assert [a["game"] for a in st["aborted"]] == ["h2", "h3", "k3"]
    assert games_text(st) == "3 games, 1 stalled, 3 aborted"
    assert games_text(sc["authors"]) == "1 game, 0 stalled, 2 aborted"
    md = to_markdown(st)
    assert "3 games, 1 stalled, 3 aborted." in md
    assert "## overall (3 games, 1 stalled, 3 aborted)" in md
    assert "## kwartet (2 games, 1 stalled, 1 aborted)" in md and "## authors (1 game, 0 stalled, 2 aborted)" in md
    from referee.view.report import _standings

    html = _standings(st)
    assert "(3 games, 1 stalled, 3 aborted)" in html and "(2 games, 1 stalled, 1 aborted)" in html
    titles = [t.title for t in rich_tables(st)]
    assert titles == [
        "overall (3 games, 1 stalled, 3 aborted)",
        "authors (1 game, 0 stalled, 2 aborted)",
        "kwartet (2 games, 1 stalled, 1 aborted)",
    ]


def test_a_variant_whose_games_were_all_aborted_still_shows_its_count() -> None:
    st = compute(
        [
            _row("k1", "kwartet", ["a", "b", "c"], [1, 0, 0], "complete"),
            _row("x1", "patient", ["a", "b", "c"], [0, 0, 0], "aborted"),
        ]
    )
    assert (st["scopes"]["patient"]["games"], st["scopes"]["patient"]["aborted"]) == (0, 1)
    assert st["scopes"]["patient"]["bots"] == []
