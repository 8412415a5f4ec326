"""Duel statistics: reference values, the running state, and the SPRT's error rates by simulation.

Two kinds of simulation, both seeded with the referee's own generator, so every
figure below is reproducible bit for bit:

* cheap synthetic pair outcomes drawn from a known pentanomial distribution,
  for the repetition-heavy checks (false-positive and false-negative rates
  over hundreds of complete sequential tests);
* duels played in process on the real rules engine (:mod:`tests.league.duel_sim`),
  fewer runs: a tracker against random play, and two copies of one policy.
"""

from __future__ import annotations

import functools
import math
import statistics

import msgspec
import pytest

from referee.league.sprt import (
    DuelStats,
    Model,
    Sprt,
    SprtState,
    elo_to_score,
    estimate,
    game_score,
    llr,
    parse_sprt,
    score_to_elo,
    stopped_estimate,
)
from referee.rules import Rng, derive
from tests.league.duel_sim import RandomPolicy, TrackerPolicy, play_pair


def penta(ll: int, ld: int, wl: int, dd: int, wd: int, ww: int) -> list[int]:
    """fastchess's six pentanomial counts as our five score points (WL and DD both score 1/2)."""
    return [ll, ld, wl + dd, wd, ww]


# --------------------------------------------------------------------------
# reference values: fastchess's own tests (app/tests/sprt_test.cpp, elo_test.cpp)


@pytest.mark.parametrize(
    ("counts", "test", "expected"),
    [
        (penta(365, 16618, 36029, 200, 16974, 390), Sprt(0, 2, model="normalized"), 2.25),
        (penta(127, 4883, 10311, 401, 5150, 104), Sprt(-1.75, 0.25, model="normalized"), 3.01),
        (penta(0, 0, 0, 0, 0, 5550), Sprt(0, 5, model="normalized"), 111.82),
        (penta(223, 9863, 20279, 1000, 10037, 246), Sprt(0.5, 2.5), -3.07),
        (penta(871, 26175, 55003, 980, 26678, 821), Sprt(0, 2), -4.98),
        # one game per unit: the trinomial (losses, draws, wins)
        ([36027, 68692, 36433], Sprt(0, 2, model="normalized"), 0.92),
        ([10650, 20431, 10871], Sprt(-1.75, 0.25, model="normalized"), 2.30),
        ([0, 0, 4250], Sprt(0, 10, model="normalized"), 120.56),
        ([21184, 40708, 21404], Sprt(0.5, 2.5), -1.57),
        ([57030, 106593, 57433], Sprt(0, 2), -2.59),
    ],
)
def test_llr_matches_fastchess(counts: list[int], test: Sprt, expected: float) -> None:
    # fastchess checks these to a relative 1% (its root finder stops at a coarser tolerance than ours)
    assert llr(counts, test) == pytest.approx(expected, rel=0.01, abs=0.01)


@pytest.mark.parametrize(
    ("stats", "nelo", "nelo_err", "elo", "elo_err", "los"),
    [
        ((34, 54, 31, 32, 64, 75), 57.94, 28.28, 55.58, 27.65, 1.0),
        ((332, 433, 457, 41, 333, 334), -9.17, 10.96, -8.64, 10.33, 0.0505),
        ((7895, 8757, 5485, 200, 568, 9999), -19.01, 2.65, -21.04, 2.95, 0.0),
    ],
)
def test_estimate_matches_fastchess(
    stats: tuple[int, ...], nelo: float, nelo_err: float, elo: float, elo_err: float, los: float
) -> None:
    e = estimate(penta(*stats))
    assert e.nelo == pytest.approx(nelo, abs=0.01)
    assert (e.nelo_hi - e.nelo_lo) / 2 == pytest.approx(nelo_err, abs=0.01)
    assert e.elo == pytest.approx(elo, abs=0.01)
    assert (e.elo_hi - e.elo_lo) / 2 == pytest.approx(elo_err, abs=0.01)
    assert e.los == pytest.approx(los, abs=0.0001)
    assert e.elo_lo < e.elo < e.elo_hi


def test_elo_score_conversions() -> None:
    assert elo_to_score(0) == 0.5
    assert score_to_elo(elo_to_score(123.0)) == pytest.approx(123.0)
    assert score_to_elo(0.0) == -math.inf and score_to_elo(1.0) == math.inf
    assert score_to_elo(0.75) == pytest.approx(190.85, abs=0.01)


def test_estimate_edge_cases() -> None:
    none = estimate([0, 0, 0, 0, 0])
    assert (none.units, none.score, none.elo, none.los) == (0, 0.5, 0.0, 0.5)
    assert none.elo_lo == -math.inf and none.elo_hi == math.inf
    all_won = estimate([0, 0, 0, 0, 7])
    assert all_won.score == 1.0 and all_won.elo == math.inf and all_won.los == 1.0
    level = estimate([0, 0, 9, 0, 0])  # every pair level: no evidence either way
    assert level.elo == 0.0 and level.variance == 0.0 and level.los == 0.5


# --------------------------------------------------------------------------
# game scores, parameters, parsing


def test_game_score_compares_ranks_of_a_and_b_only() -> None:
    assert game_score([2, 1, 3, 4], 0, 2) == 1.0  # the field's place does not matter
    assert game_score([1, 3, 3, 4], 1, 2) == 0.5
    assert game_score([1, 4, 2, 3], 1, 3) == 0.0
    with pytest.raises(ValueError, match="different seats"):
        game_score([1, 2, 3], 1, 1)
    with pytest.raises(ValueError, match="seat 3 is not a seat of this 3-seat game"):
        game_score([1, 2, 3], 0, 3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"elo0": 10, "elo1": 10}, r"ELO0 \(10\) must be below ELO1 \(10\)"),
        ({"elo0": 5, "elo1": 0}, r"ELO0 \(5\) must be below ELO1 \(0\)"),
        ({"elo0": 0, "elo1": 5, "alpha": 0}, "ALPHA must be strictly between 0 and 1"),
        ({"elo0": 0, "elo1": 5, "beta": 1.5}, "BETA must be strictly between 0 and 1"),
        ({"elo0": 0, "elo1": 5, "alpha": 0.6, "beta": 0.5}, "ALPHA \\+ BETA must be below 1"),
        ({"elo0": math.nan, "elo1": 5}, "ELO0 must be a finite number"),
        ({"elo0": 0, "elo1": 5, "model": "bayesian"}, "model must be one of logistic, normalized"),
    ],
)
def test_bad_sprt_parameters(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Sprt(**kwargs)


def test_parse_sprt() -> None:
    t = parse_sprt("0,10")
    assert (t.elo0, t.elo1, t.alpha, t.beta, t.model) == (0, 10, 0.05, 0.05, "logistic")
    t = parse_sprt(" -2.5 , 2.5 , 0.1 , .02 ", model="normalized")
    assert (t.elo0, t.elo1, t.alpha, t.beta, t.model) == (-2.5, 2.5, 0.1, 0.02, "normalized")
    assert t.lower == pytest.approx(math.log(0.02 / 0.9)) and t.upper == pytest.approx(math.log(0.98 / 0.1))
    for bad in ("", "10", "0,10,0.05", "a,b", "0;10"):
        with pytest.raises(ValueError, match="expected ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA"):
            parse_sprt(bad)
    with pytest.raises(ValueError, match="must be below ELO1"):
        parse_sprt("10,0")


# --------------------------------------------------------------------------
# the running state


def test_state_counts_pairs_and_decides_once() -> None:
    st = SprtState(Sprt(0, 100))
    assert st.verdict == "continue" and st.llr == 0.0
    st.add_pair(1, 0.5)
    st.add_pair(0, 1)
    assert st.counts == [0, 0, 1, 1, 0] and st.units == 2 and st.games == 4
    while st.add_pair(1, 1) == "continue":
        pass
    assert st.verdict == "H1" and st.decided_at == st.units and st.llr >= st.test.upper
    decided = st.decided_at
    for _ in range(30):  # later results move the figures, never the verdict
        st.add_pair(0, 0)
    assert st.verdict == "H1" and st.decided_at == decided and st.llr < st.test.upper


@pytest.mark.parametrize("model", ["logistic", "normalized"])
def test_state_llr_equals_a_fresh_computation(model: Model) -> None:
    # the state starts each LLR's searches from the previous solution; the result must not depend on it
    rng = Rng(3)
    st = SprtState(Sprt(-10, 30, model=model))
    for _ in range(300):
        st.add_pair(rng.below(3) / 2, rng.below(3) / 2)
        assert st.test is not None and st.llr == pytest.approx(llr(st.counts, st.test), rel=1e-9, abs=1e-9)


def test_state_without_a_test_only_estimates() -> None:
    st = SprtState()
    for _ in range(50):
        st.add_pair(1, 1)
    assert st.verdict == "continue" and st.llr == 0.0
    stats = st.stats()
    assert stats.elo is None and stats.llr is None and stats.score == 1.0  # an infinite Elo is null in JSON


def test_submit_out_of_order_counts_in_index_order() -> None:
    rng = Rng(5)
    outcomes = [(rng.below(3) / 2, rng.below(3) / 2) for _ in range(200)]
    in_order = SprtState(Sprt(0, 60))
    for o in outcomes:
        in_order.add_pair(*o)
    shuffled = list(enumerate(outcomes))
    rng.shuffle(shuffled)
    late = SprtState(Sprt(0, 60))
    for i, o in shuffled:
        late.submit(i, o)
    assert late.waiting == 0
    assert (late.counts, late.llr, late.verdict, late.decided_at) == (
        in_order.counts,
        in_order.llr,
        in_order.verdict,
        in_order.decided_at,
    )


def test_dropped_units_are_skipped_in_index_order() -> None:
    st = SprtState(Sprt(0, 60))
    st.submit(2, (1, 1))
    st.drop(1)
    assert st.units == 0 and st.waiting == 2  # unit 0 is still missing: nothing counted yet
    st.submit(0, (0, 1))
    assert st.units == 2 and st.dropped == 1 and st.waiting == 0 and st.counts == [0, 0, 1, 0, 1]
    for index in (0, 1, 2):
        with pytest.raises(ValueError, match="already submitted"):
            st.drop(index)
    st.drop(4)
    with pytest.raises(ValueError, match="already submitted"):
        st.submit(4, (1, 1))


def test_state_errors() -> None:
    st = SprtState(Sprt(0, 10))
    with pytest.raises(ValueError, match="a game score is 1 \\(A above B\\), 0.5 \\(level\\) or 0"):
        st.add_pair(1, 0.25)
    with pytest.raises(ValueError, match="a unit has 2 game\\(s\\), got 3"):
        st.add_unit([1, 1, 1])
    st.submit(1, (1, 1))
    assert st.units == 0 and st.waiting == 1
    with pytest.raises(ValueError, match="unit 1 was already submitted"):
        st.submit(1, (1, 1))
    with pytest.raises(ValueError, match="keep using submit"):
        st.add_pair(1, 1)
    st.submit(0, (0, 0))
    assert st.counts == [1, 0, 0, 0, 1]
    with pytest.raises(ValueError, match="unit 0 was already submitted"):
        st.submit(0, (1, 1))
    with pytest.raises(ValueError, match="games_per_unit must be a whole number"):
        SprtState(games_per_unit=0)


def test_finer_units_for_more_games_per_deal() -> None:
    # a unit of 6 games (every seat pair of A and B at a 4-seat table, both ways): scores in steps of 1/12
    st = SprtState(Sprt(0, 50), games_per_unit=6)
    st.add_unit([1, 1, 0.5, 0, 1, 0.5])
    assert len(st.counts) == 13 and st.counts[8] == 1 and st.games == 6
    assert st.estimate().score == pytest.approx(8 / 12)


def test_duel_stats_is_json() -> None:
    st = SprtState(Sprt(-5, 5, 0.1, 0.1, "normalized"))
    for o in [(1, 0.5), (0, 1), (0.5, 0.5), (1, 1)]:
        st.add_pair(*o)
    data = msgspec.json.decode(msgspec.json.encode(st.stats()), type=DuelStats)
    assert data.counts == [0, 0, 2, 1, 1] and data.model == "normalized" and data.verdict == "continue"
    assert data.elo is not None and data.elo_lo is not None and data.elo_hi is not None
    assert data.elo_lo < data.elo < data.elo_hi


# --------------------------------------------------------------------------
# error rates by simulation: synthetic pair outcomes

PAIRS = [(0.0, 0.0), (0.0, 0.5), (0.5, 0.5), (0.5, 1.0), (1.0, 1.0)]  # one pair per score point
BASE = [0.12, 0.18, 0.40, 0.18, 0.12]  # a symmetric pentanomial: true Elo 0


def tilted(p: list[float], score: float) -> list[float]:
    """The exponential tilt of ``p`` (on the points 0, 1/4, .., 1) whose mean is ``score``."""
    pts = [i / 4 for i in range(5)]
    lo, hi = -60.0, 60.0
    for _ in range(200):
        lam = (lo + hi) / 2
        q = [x * math.exp(lam * a) for x, a in zip(p, pts, strict=True)]
        if sum(x * a for x, a in zip(q, pts, strict=True)) / sum(q) < score:
            lo = lam
        else:
            hi = lam
    return [x / sum(q) for x in q]


#: one complete sequential test: its verdict, the plain Elo (clamped to +-1000) and the reported
#: (stopped) Elo with its interval
Run = tuple[str, float, float, float, float]


def simulate(
    test: Sprt, p: tuple[float, ...], reps: int, label: str, base: int = 2024, estimates: bool = True
) -> tuple[Run, ...]:
    """:func:`_simulate`, every argument passed the same way (functools.cache keys on how they are given)."""
    return _simulate(test, p, reps, label, base, estimates)


@functools.cache
def _simulate(test: Sprt, p: tuple[float, ...], reps: int, label: str, base: int, estimates: bool) -> tuple[Run, ...]:
    """``reps`` complete sequential tests (at most 20,000 pairs each) on pairs drawn from ``p``, seeded
    by ``base`` and ``label``, with the estimates after the stop (or NaNs, without ``estimates``).
    Kept per process: the error rates and the estimates of 0,40 are read off the same runs (the tests
    that share them are in one xdist group, :data:`SHARED`)."""
    weights = [round(x * 2**32) for x in p]
    total = sum(weights)
    out = []
    for r in range(reps):
        rng = Rng(derive(base, f"{label}:{r}"))
        st = SprtState(test)
        while st.verdict == "continue" and st.units < 20000:
            x = rng.below(total)
            i = 0
            while x >= weights[i]:
                x -= weights[i]
                i += 1
            st.add_pair(*PAIRS[i])
        if not estimates:
            out.append((st.verdict, math.nan, math.nan, math.nan, math.nan))
            continue
        elo, lo, hi, _ = st.elo()
        out.append((st.verdict, max(-1000.0, min(1000.0, st.estimate().elo)), elo, lo, hi))
    return tuple(out)


#: the tests reading the runs of 0,40 at a true 0 and 40 (:func:`simulate`): on one worker, run once
SHARED = pytest.mark.xdist_group("sprt-0-40")


def run_tests(test: Sprt, p: list[float], reps: int, label: str) -> dict[str, int]:
    """Run ``reps`` complete sequential tests on pairs drawn from ``p``; count the verdicts."""
    out = {"H0": 0, "H1": 0, "continue": 0}
    for run in simulate(test, tuple(p), reps, label, estimates=test == Sprt(0, 40)):  # (the shared runs)
        out[run[0]] += 1
    return out


def binomial_tail(n: int, p: float, k: int) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


# Wald: a sequential test with bounds log(beta/(1-alpha)) and log((1-beta)/alpha) accepts H1 when H0 is
# true with probability at most alpha / (1 - beta) (0.0526 for 0.05/0.05), usually a little less (the LLR
# overshoots the bound). Over REPS independent tests the number of false H1s is then at most Binomial(REPS,
# 0.0526); the assertion allows the count up to the point where that binomial's upper tail is below 0.1%, so
# a correct implementation fails it with probability under 1 in 1000 for a given seed (and the seeds are
# fixed: it either always passes or always fails). A lower bound (at least 1% of the tests) guards against a
# test that is merely timid: one that never accepts H1 would pass the upper bound.
REPS = 400
RATE = 0.05 / (1 - 0.05)
LIMIT = next(k for k in range(REPS) if binomial_tail(REPS, RATE, k + 1) < 1e-3)


@pytest.mark.parametrize(
    ("test", "true_elo"),
    [pytest.param(Sprt(0, 40), 0.0, id="0,40", marks=SHARED), pytest.param(Sprt(-35, 5), -35.0, id="-35,5")],
)
def test_false_positive_rate_is_about_alpha(test: Sprt, true_elo: float) -> None:
    p = tilted(BASE, elo_to_score(true_elo))  # H0 exactly true
    out = run_tests(test, p, REPS, f"fpr:{test.elo0}")
    assert out["continue"] == 0
    assert REPS // 100 <= out["H1"] <= LIMIT, (out, LIMIT)


@SHARED
def test_false_negative_rate_is_about_beta() -> None:
    test = Sprt(0, 40)
    out = run_tests(test, tilted(BASE, elo_to_score(40)), REPS, "fnr")  # H1 exactly true
    assert out["continue"] == 0
    assert REPS // 100 <= out["H0"] <= LIMIT, (out, LIMIT)


def test_false_positive_rate_normalized_model() -> None:
    # normalized Elo costs about three times more per LLR: fewer repetitions, the same reasoning
    reps = 100
    limit = next(k for k in range(reps) if binomial_tail(reps, RATE, k + 1) < 1e-3)
    out = run_tests(Sprt(0, 40, model="normalized"), BASE, reps, "fpr-normalized")
    assert out["continue"] == 0
    assert out["H1"] <= limit, (out, limit)


def test_a_true_difference_far_from_both_hypotheses_is_decided_fast() -> None:
    out = run_tests(Sprt(0, 40), tilted(BASE, elo_to_score(150)), 50, "far")
    assert out == {"H0": 0, "H1": 50, "continue": 0}


# --------------------------------------------------------------------------
# duels on the real rules engine


def duel(variant: str, seats: int, a: type, b: type, test: Sprt, max_pairs: int, seed: int) -> SprtState:
    st = SprtState(test)
    dropped = 0
    for d in range(max_pairs):
        if st.verdict != "continue":
            break
        pair = play_pair(variant, seats, derive(seed, f"deal:{d}"), a, b, RandomPolicy, d)
        if pair is None:  # a game asked in circles until aborted: the pair is dropped whole
            dropped += 1
            continue
        st.add_pair(*pair)
    assert dropped <= max(2, st.units // 20), dropped
    return st


@pytest.mark.parametrize(("variant", "seats"), [("kwartet", 3), ("kwartet", 4), ("happy-families", 3)])
def test_tracker_beats_random_and_the_duel_says_so(variant: str, seats: int) -> None:
    # the tracker is hundreds of Elo stronger: H1 (+50 Elo) is accepted within a few dozen deal pairs
    st = duel(variant, seats, TrackerPolicy, RandomPolicy, Sprt(0, 50), max_pairs=120, seed=11)
    assert st.verdict == "H1", st.stats()
    assert st.decided_at is not None and st.decided_at <= 80
    e = st.estimate()
    assert e.elo_lo > 50
    # and the other way round: random play as A is not 50 Elo stronger than the tracker
    st = duel(variant, seats, RandomPolicy, TrackerPolicy, Sprt(0, 50), max_pairs=120, seed=12)
    assert st.verdict == "H0"


def test_two_copies_of_one_policy_rarely_accept_h1() -> None:
    # 12 seeded duels of random play against itself at a 3-seat kwartet table (with a random field):
    # the true difference is 0 = ELO0, so each accepts H1 with probability at most about 0.053 (see
    # LIMIT above); P(4 or more of 12) < 0.5%, so at most 3 is allowed. Undecided runs (the cap) do not
    # count as H1.
    verdicts = [
        duel("kwartet", 3, RandomPolicy, RandomPolicy, Sprt(0, 80), max_pairs=400, seed=100 + r).verdict
        for r in range(12)
    ]
    assert binomial_tail(12, RATE, 4) < 0.005
    assert verdicts.count("H1") <= 3, verdicts
    assert verdicts.count("H0") >= 8, verdicts


def test_two_tracker_copies_rarely_accept_h1() -> None:
    verdicts = [
        duel("happy-families", 3, TrackerPolicy, TrackerPolicy, Sprt(0, 80), max_pairs=400, seed=300 + r).verdict
        for r in range(6)
    ]
    assert binomial_tail(6, RATE, 3) < 0.005
    assert verdicts.count("H1") <= 2, verdicts


# --------------------------------------------------------------------------
# the estimate after a stop: median-unbiased (fishtest's), where the plain mean is not


def stopped_runs(true_elo: float) -> tuple[Run, ...]:
    """Complete sequential tests of 0,40 at ``true_elo``: at 0 and 40 the 400 runs the false-positive
    and false-negative rates count (the same runs, not new ones), elsewhere 200 of their own."""
    test = Sprt(0, 40)
    p = tuple(tilted(BASE, elo_to_score(true_elo)))
    runs = {0.0: lambda: simulate(test, p, REPS, "fpr:0"), 40.0: lambda: simulate(test, p, REPS, "fnr")}
    got = runs.get(true_elo, lambda: simulate(test, p, 200, f"bias:{true_elo}", base=2025))()
    assert all(verdict != "continue" and lo <= elo <= hi for verdict, _, elo, lo, hi in got)
    return got


@pytest.mark.parametrize("true_elo", [pytest.param(0.0, marks=SHARED), 20.0, pytest.param(40.0, marks=SHARED)])
def test_the_elo_after_a_stop_is_median_unbiased(true_elo: float) -> None:
    # 200 or 400 seeded tests of 0,40: the plain Elo of a stopped test is pulled towards the bound it
    # crossed (about -6 median, -9 mean at a true 0); fishtest's estimate puts the true value at its
    # median. The median of 200 draws has a standard error of about 1.25 sd / sqrt(200), under 2 Elo here
    # (less for 400): a 5-Elo margin fails a correct estimate far less than once in a thousand seeds (and
    # the seeds are fixed)
    runs = stopped_runs(true_elo)
    reported = statistics.median(r[2] for r in runs)
    assert abs(reported - true_elo) < 5.0, reported
    # the interval covers the true value in about 95% of the tests
    covered = sum(lo <= true_elo <= hi for _, _, _, lo, hi in runs)
    assert 0.88 * len(runs) <= covered <= 0.995 * len(runs), covered


@SHARED
def test_the_plain_elo_after_a_stop_is_biased() -> None:
    # what the correction is for: at a true 0, the plain estimate of a stopped 0,40 test is low
    runs = stopped_runs(0.0)
    plain = statistics.median(r[1] for r in runs)
    mean = statistics.fmean(r[1] for r in runs)
    assert plain < -3.0 and mean < -5.0, (plain, mean)


def test_stats_report_the_stopped_estimate_and_keep_the_mean() -> None:
    st = SprtState(Sprt(0, 40))
    while st.verdict == "continue":
        st.add_pair(1.0, 0.5)
        st.add_pair(0.5, 0.5)
    data = st.stats()
    assert data.elo_method == "sprt" and data.elo_mean == pytest.approx(st.estimate().elo)
    assert data.elo == pytest.approx(stopped_estimate(st.counts, st.test)[0])  # type: ignore[arg-type]
    assert data.elo_lo is not None and data.elo_hi is not None and data.elo_lo < data.elo < data.elo_hi
    # before a decision: the mean
    fresh = SprtState(Sprt(0, 40))
    fresh.add_pair(1.0, 0.0)
    assert fresh.stats().elo_method == "mean" and fresh.stats().elo == fresh.stats().elo_mean
