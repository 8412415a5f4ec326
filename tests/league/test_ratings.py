"""Order-free ratings: the standings' Plackett-Luce fit over all games at once."""

from __future__ import annotations

import math
import random

import pytest

from referee.league.ledger import GameRow
from referee.league.ratings import BETA, MU0, PRIOR_SD, BatchRatings, _groups, _log_posterior
from referee.league.standings import Tally


def _simulated(n_games: int, seed: int, strengths: dict[str, float], seats: int = 4):
    rng = random.Random(seed)
    bots = list(strengths)
    games = []
    for _ in range(n_games):
        table = rng.sample(bots, seats)
        order, rest = [], list(table)
        while rest:
            weights = [math.exp(strengths[b]) for b in rest]
            x = rng.random() * sum(weights)
            for b, w in zip(rest, weights, strict=True):  # noqa: B007  b: the bot chosen, read after the break
                x -= w
                if x <= 0:
                    break
            order.append(b)
            rest.remove(b)
        games.append((table, [order.index(b) + 1 for b in table]))
    return games


def _fit(games):
    r = BatchRatings()
    for bots, ranks in games:
        r.add(bots, ranks)
    return r.fit()


def test_the_ratings_do_not_depend_on_the_order_of_the_games():
    games = _simulated(600, 1, {f"b{i}": i * 0.3 for i in range(8)})
    first = _fit(games)
    for seed in range(3):
        shuffled = list(games)
        random.Random(seed).shuffle(shuffled)
        again = _fit(shuffled)
        for bot, (mu, sigma) in first.items():
            assert again[bot] == pytest.approx((mu, sigma), abs=1e-9)


def test_the_fit_finds_the_strength_order_and_is_the_posteriors_maximum():
    strengths = {f"b{i}": i * 0.4 for i in range(6)}
    games = _simulated(3000, 2, strengths)
    fit = _fit(games)
    assert sorted(fit, key=lambda b: fit[b][0]) == list(strengths)
    # the maximum: a small move of any one strength lowers the log posterior
    r = BatchRatings()
    for bots, ranks in games:
        r.add(bots, ranks)
    groups = [(_groups(o), w) for o, w in r.outcomes.items()]
    theta = [(fit[b][0] - MU0) / BETA for b in r.names]
    prec = 1 / PRIOR_SD**2
    best = _log_posterior(groups, theta, prec)
    for i in range(len(theta)):
        for d in (-1e-3, 1e-3):
            moved = list(theta)
            moved[i] += d
            assert _log_posterior(groups, moved, prec) < best
    # strengths are recovered on the theta scale (differences, the scale has no origin)
    est = [(fit[b][0] - fit["b0"][0]) / BETA for b in strengths]
    assert est == pytest.approx([s - strengths["b0"] for s in strengths.values()], abs=0.25)


def test_a_bot_that_wins_everything_has_a_finite_rating_and_sigma_shrinks_with_games():
    few = _fit([(["a", "b"], [1, 2])] * 3)
    many = _fit([(["a", "b"], [1, 2])] * 300)
    assert math.isfinite(many["a"][0]) and many["a"][0] > few["a"][0] > MU0 > few["b"][0]
    assert few["a"][0] - MU0 == pytest.approx(MU0 - few["b"][0])  # symmetric
    assert _fit([(["a", "b"], [1, 2]), (["a", "b"], [2, 1])] * 100)["a"][1] < few["a"][1]


def test_ties_and_a_bot_with_two_seats():
    tied = _fit([(["a", "b", "c"], [1, 1, 1])] * 10)
    assert {round(mu, 9) for mu, _ in tied.values()} == {MU0}
    two = _fit([(["a", "a", "b"], [1, 2, 3])] * 20 + [(["a", "b", "b"], [3, 1, 2])] * 20)
    assert two["a"][0] == pytest.approx(two["b"][0], abs=1e-9)


def _row(gid: str, bots: list[str], ranks: list[int]) -> GameRow:
    n = len(bots)
    scores = [float(n - r) for r in ranks]
    shares = [1.0 if r == 1 else 0.0 for r in ranks]
    return GameRow(
        game_id=gid,
        variant="kwartet",
        size=n,
        table=0,
        deal=0,
        rotation=0,
        seed=None,
        bots=bots,
        scores=scores,
        ranks=ranks,
        win_shares=shares,
        forfeits=[],
        faults=[],
        reason="complete",
        think=[],
        log_path="",
        wall_ms=0.0,
    )


def test_standings_are_the_same_for_any_order_of_rows():
    games = _simulated(400, 5, {f"b{i}": i * 0.2 for i in range(6)})
    rows = [_row(f"g{i:04d}", bots, ranks) for i, (bots, ranks) in enumerate(games)]
    results = []
    for seed in range(3):
        random.Random(seed).shuffle(rows)
        tally = Tally("x")
        for row in rows:
            tally.add(row)
        results.append(tally.result()["scopes"])
    assert results[0] == results[1] == results[2]
    table = results[0]["overall"]["bots"]
    assert table[0]["bot"] == "b5"
    assert all(r["ordinal"] == pytest.approx(r["mu"] - 3 * r["sigma"], abs=1e-5) for r in table)


def test_the_posterior_variances_are_the_inverse_hessians_diagonal():
    from referee.league.ratings import _inverse_diagonal, _solve

    rng = random.Random(0)
    n = 7
    m = [[rng.random() for _ in range(n)] for _ in range(n)]
    a = [[sum(m[i][k] * m[j][k] for k in range(n)) + (n if i == j else 0) for j in range(n)] for i in range(n)]
    diag = _inverse_diagonal(a)
    for i in range(n):
        unit = [0.0] * n
        unit[i] = 1.0
        assert diag[i] == pytest.approx(_solve(a, unit)[i], rel=1e-12)
