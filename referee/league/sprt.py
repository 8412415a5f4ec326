"""Duel statistics: the Elo difference of two bots and a sequential test (SPRT) on it.

Pure code: no I/O, no clocks, no randomness. ``referee duel`` feeds it the
results of A and B and prints what it says.

The unit: the deal pair
=======================

A duel plays every deal twice with A and B in mirrored seats: in the first
game A sits in seat ``i`` and B in seat ``j``, in the second A sits in ``j``
and B in ``i``. At a table of K > 2 seats the other K - 2 seats are played
by field bots, which keep their seats (and so their hands) in both games.
One game gives A a *game score against B*, :func:`game_score`:

* 1 if A finished strictly above B (a better competition rank),
* 1/2 if they finished level (equal rank),
* 0 if A finished below B.

(Ranks are the game's competition ranks with forfeited seats moved to the
bottom, as in the standings. The field's places do not matter, only the order
of A and B.) The *pair score* is the mean of the two games:
0, 1/4, 1/2, 3/4 or 1. These five outcomes are the pentanomial model of
fastchess and fishtest (LL, LD, DD or WL, WD, WW). More generally a unit may
hold ``m`` games of one deal (every seat pair of A and B, both ways); its
score is then the mean of ``m`` game scores, a multiple of ``1/(2m)``; the
statistics below work on that finer grid the same way (``games_per_unit``).

Why the pair, and not the game, is the sound unit for multi-seat games:

* **Card luck cancels.** Both games of a pair are dealt from the same seed:
  whatever hand or seat gives one of them an edge (a strong hand, the first
  turn, a seat left of a weak field bot) goes to A once and to B once. A deal
  that simply hands the game to seat ``i`` yields 1 + 0, a level pair, not a
  lucky win. The two games of a pair are therefore strongly dependent, and
  counting them as independent games (the trinomial model) would misstate the
  variance, in either direction: a test would then be too slow, or accept
  too often.
* **Pairs are independent given the seeds.** Each pair's deal comes from its
  own seed (``derive(master, label)``, SHA-256), so the deals of different
  pairs are independent draws, and a pair's outcome depends on its deal and on
  the bots' play only. The field is part of each pair's conditions, the same
  for A and B: a field bot that plays A differently from B is part of what the
  duel measures (how A and B fare at tables like these), not a bias. This
  assumes bots do not learn across games; a bot that does breaks independence
  here as it does in every duel and league.
* **The pair score is bounded** (in [0, 1], on a finite grid), so its
  distribution is a multinomial on known points: the generalised SPRT below
  needs no normal approximation, and the mean's interval rests on the central
  limit theorem for a bounded variable.

A pair whose game has no result (aborted) must be dropped whole: keeping one
game of a pair would bring back the card luck the pair cancels.

Elo
===

The Elo difference is the **logistic** Elo of the mean pair score ``s``:
``elo = -400 * log10(1/s - 1)`` (``s`` = 0.5 is 0, 0.64 about +100). Its 95%
interval maps ``s +- 1.96 * sqrt(var / n)`` the same way, where ``var`` is the
variance of the ``n`` pair scores (fastchess's pentanomial estimate). The
normalized Elo (``nelo``, Van den Bergh) divides the excess score by its
per-game standard deviation, ``(s - 0.5) / sqrt(m * var) * 800 / ln 10``, and
is reported alongside. ``los`` is the likelihood of superiority (the normal
probability that A's true score is above 1/2).

SPRT
====

H0: the Elo difference is ELO0; H1: it is ELO1 (ELO0 < ELO1). The
log-likelihood ratio is the generalised (GSPRT) one of fastchess, for a
multinomial on the pair-score grid: for each hypothesis, the maximum
likelihood distribution over the grid whose expected score is that
hypothesis's score (Van den Bergh, *Comparing the approximations for the
generalized log likelihood ratio of a multinomial distribution*), and
``LLR = n * sum(p_hat * log(p1 / p0))``. Empty grid points count as 0.001
(fastchess's regularisation, so that every score in (0, 1) is reachable).
The model, by default ``"logistic"``, says what ELO0 and ELO1 mean:
``"logistic"``: the Elo above (the expected pair score is
``1 / (1 + 10 ** (-elo / 400))``); ``"normalized"``: normalized Elo, as
fastchess's default (``t = sqrt(m) * elo / (800 / ln 10)``, the expected score
``0.5 + t * sigma``). Logistic is the default here because it reads directly as
an expected score, whatever the game's variance; normalized Elo is
draw-ratio free but its scale depends on the game and the field.

The test accepts H1 once ``LLR >= log((1 - BETA) / ALPHA)`` and H0 once
``LLR <= log(BETA / (1 - ALPHA))`` (Wald's bounds); in between it continues.
The first crossing decides: pairs added after it still update the counts,
the estimates and the LLR, but not the verdict (games already under way when
the test decides may finish).

The estimate after a stop
=========================

The mean score of a test that stopped at its first crossing is biased: a run
that happened to go well early crosses the upper bound early, one that went
badly crosses the lower bound early, and those short runs weigh as much as
the long ones. (With ``--sprt 0,40`` on simulated pairs, the plain Elo
averages about -9 at a true 0, and +52 at a true 40.) Once the test has decided,
the reported Elo and its interval are therefore fishtest's: the LLR is
modelled as a Brownian motion with drift ``mu(s) = (s - (s0 + s1) / 2)
(s1 - s0) / v`` and variance ``(s1 - s0)^2 / v`` per unit, for a true score
``s`` (``v``: the units' variance, plus ``(s - s_hat)^2``); the observed
outcome is where and when the LLR left the interval (the LLR clamped to the
bound it crossed, the time scaled to match). The probability of a *worse*
outcome (crossing the lower bound sooner, the upper later, or the lower
instead of the upper) falls as ``s`` rises; the Elo at which it is 1/2 is the
median-unbiased estimate, and those at which it is 0.975 and 0.025 bound the
95% interval (Van den Bergh, fishtest's ``sprt.analytics``; Whitehead,
*The design and analysis of sequential clinical trials*). Far beyond both
hypotheses the model may have no such Elo in [-1000, 1000] (the chance turns
back up before reaching the level); that value is then the plain one. The
plain mean is kept in the summary as ``elo_mean``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

Model = Literal["logistic", "normalized"]
Verdict = Literal["continue", "H0", "H1"]

MODELS: tuple[str, ...] = ("logistic", "normalized")

#: the z score of a two-sided 95% interval
Z95 = 1.959963984540054
#: the normalized Elo scale: 800 / ln 10
NELO_SCALE = 800.0 / math.log(10.0)
#: the mass given to an empty grid point in the LLR (fastchess's regularisation)
REGULARIZE = 1e-3


def game_score(ranks: Sequence[int], seat_a: int, seat_b: int) -> float:
    """A's score against B in one game: 1 if A's rank is better (lower) than
    B's, 0.5 if equal, 0 if worse. ``ranks`` are competition ranks per seat
    (forfeited seats already moved to the bottom). Raises ``ValueError`` if
    the seats are the same or not seats of ``ranks``."""
    n = len(ranks)
    if seat_a == seat_b:
        raise ValueError(f"A and B must sit in different seats, both are in seat {seat_a}")
    for name, seat in (("A", seat_a), ("B", seat_b)):
        if not 0 <= seat < n:
            raise ValueError(f"{name}'s seat {seat} is not a seat of this {n}-seat game (0..{n - 1})")
    ra, rb = ranks[seat_a], ranks[seat_b]
    return 1.0 if ra < rb else 0.5 if ra == rb else 0.0


def elo_to_score(elo: float) -> float:
    """The expected score of a logistic Elo difference: ``1 / (1 + 10 ** (-elo / 400))``."""
    odds: float = 10.0 ** (-elo / 400.0)
    return 1.0 / (1.0 + odds)


def score_to_elo(score: float) -> float:
    """The logistic Elo difference of an expected score; ``-inf`` at 0 and ``inf`` at 1."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


# --------------------------------------------------------------------------
# the test's parameters


@dataclass(frozen=True, slots=True)
class Sprt:
    """The parameters of a sequential test: H0 elo = ``elo0``, H1 elo = ``elo1``,
    false-positive rate ``alpha``, false-negative rate ``beta``, and the Elo
    ``model`` (``"logistic"`` or ``"normalized"``).

    Raises ``ValueError`` with a sentence saying what to change when
    ``elo0 >= elo1``, ``alpha`` or ``beta`` is not strictly between 0 and 1,
    ``alpha + beta >= 1``, a value is not finite, or the model is unknown.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: Model = "logistic"

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"SPRT {name.upper()} must be a finite number, got {value!r}")
        if self.elo0 >= self.elo1:
            raise ValueError(
                f"SPRT ELO0 ({self.elo0:g}) must be below ELO1 ({self.elo1:g}): H0 is 'A is ELO0 stronger', "
                "H1 'A is ELO1 stronger', e.g. --sprt 0,10"
            )
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise ValueError(f"SPRT {name.upper()} must be strictly between 0 and 1 (e.g. 0.05), got {value:g}")
        if self.alpha + self.beta >= 1.0:
            raise ValueError(f"SPRT ALPHA + BETA must be below 1 (got {self.alpha:g} + {self.beta:g})")
        if self.model not in MODELS:
            raise ValueError(f"SPRT model must be one of {', '.join(MODELS)}, got {self.model!r}")

    @property
    def lower(self) -> float:
        """The LLR at or below which H0 is accepted: ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """The LLR at or above which H1 is accepted: ``log((1 - beta) / alpha)``."""
        return math.log((1.0 - self.beta) / self.alpha)

    def verdict(self, llr: float) -> Verdict:
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return "continue"


_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_SPRT_RE = re.compile(rf"^\s*({_NUM})\s*,\s*({_NUM})\s*(?:,\s*({_NUM})\s*,\s*({_NUM})\s*)?$")


def parse_sprt(text: str, *, model: Model = "logistic") -> Sprt:
    """Parse ``"ELO0,ELO1"`` or ``"ELO0,ELO1,ALPHA,BETA"`` (``referee duel --sprt``).

    Raises ``ValueError`` saying what is expected (the numbers' checks are :class:`Sprt`'s).
    """
    m = _SPRT_RE.match(text or "")
    if not m:
        raise ValueError(
            f"--sprt {text!r}: expected ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA, e.g. --sprt 0,10, "
            "--sprt -10,0 (a non-regression test) or --sprt 0,10,0.05,0.05"
        )
    elo0, elo1 = float(m[1]), float(m[2])
    if m[3] is None:
        return Sprt(elo0, elo1, model=model)
    return Sprt(elo0, elo1, float(m[3]), float(m[4]), model=model)


# --------------------------------------------------------------------------
# the generalised log-likelihood ratio


def _solve_decreasing(f_and_df: _Fn, lo: float, hi: float, start: float = 0.0) -> float:
    """The root of a strictly decreasing function on the open interval (lo, hi),
    which tends to +inf at lo and -inf at hi: Newton steps inside the
    shrinking bracket, bisection near the poles (where a Newton step is about
    the distance to the pole: tiny, and no sign of convergence). ``start``:
    the first guess (a previous root, when the function changed little)."""
    x = start if lo < start < hi else 0.0 if lo < 0.0 < hi else (lo + hi) / 2.0
    for _ in range(400):
        fx, dfx = f_and_df(x)
        if fx == 0.0:
            return x
        if fx > 0.0:
            lo = x
        else:
            hi = x
        scale = 1e-15 * max(1.0, abs(x))
        nx = x - fx / dfx if dfx < 0.0 and abs(fx) <= 1.0 else math.nan
        if abs(nx - x) <= scale and abs(fx) <= 1e-12:  # converged (the step is lost in rounding)
            return x
        if not lo < nx < hi:
            nx = (lo + hi) / 2.0
        if hi - lo <= scale:
            return nx
        x = nx
    return x


class _Fn:
    """``sum(p_i * c_i / (1 + x c_i))`` and its derivative, for the root finder."""

    __slots__ = ("c", "p")

    def __init__(self, p: Sequence[float], c: Sequence[float]) -> None:
        self.p = p
        self.c = c

    def __call__(self, x: float) -> tuple[float, float]:
        f = 0.0
        df = 0.0
        for pi, ci in zip(self.p, self.c, strict=True):
            d = 1.0 + x * ci
            q = pi * ci / d
            f += q
            df -= q * ci / d
        return f, df


def _mle_logistic(
    points: Sequence[float], phat: Sequence[float], s: float, start: float = 0.0
) -> tuple[list[float], float]:
    """The distribution on ``points`` nearest to ``phat`` (maximum likelihood)
    whose mean is ``s`` (Van den Bergh, Proposition 1.1), and its Lagrange
    multiplier (a good ``start`` for the next, similar problem)."""
    c = [a - s for a in points]
    theta = _solve_decreasing(_Fn(phat, c), -1.0 / max(c), -1.0 / min(c), start)
    return [p / (1.0 + theta * ci) for p, ci in zip(phat, c, strict=True)], theta


def _mle_normalized(
    points: Sequence[float], phat: Sequence[float], t: float, start: list[float] | None = None
) -> list[float]:
    """The maximum likelihood distribution on ``points`` with
    ``(mean - 1/2) / sigma = t`` (Van den Bergh, *normalized Elo*, section 4.1):
    a fixed point iteration from ``start`` (a previous solution) or the uniform
    distribution."""
    n = len(points)
    p = list(start) if start is not None and len(start) == n else [1.0 / n] * n
    theta = 0.0
    for _ in range(50):
        mu = sum(a * q for a, q in zip(points, p, strict=True))
        var = sum(q * (a - mu) ** 2 for a, q in zip(points, p, strict=True))
        sigma = math.sqrt(var)
        phi = [a - 0.5 - 0.5 * t * sigma * (1.0 + ((a - mu) / sigma) ** 2) for a in points]
        theta = _solve_decreasing(_Fn(phat, phi), -1.0 / max(phi), -1.0 / min(phi), theta)
        new = [q / (1.0 + theta * f) for q, f in zip(phat, phi, strict=True)]
        diff = max(abs(a - b) for a, b in zip(new, p, strict=True))
        p = new
        if diff < 1e-10:
            break
    return p


def llr(counts: Sequence[int], test: Sprt) -> float:
    """The generalised log-likelihood ratio of H1 against H0 for unit-score
    ``counts``: ``counts[i]`` units scored ``i / (len(counts) - 1)``
    (the pentanomial: 5 counts, LL LD DD+WL WD WW). 0 when there are none."""
    if len(counts) < 2:
        raise ValueError("llr() needs the counts of at least two score points")
    return _llr(counts, test, None)[0]


def _llr(counts: Sequence[int], test: Sprt, warm: tuple[Any, Any] | None) -> tuple[float, tuple[Any, Any] | None]:
    """:func:`llr`, starting the two maximum likelihood searches from ``warm``
    (what the previous call returned): one more unit changes them little."""
    if not any(counts):
        return 0.0, None
    k = len(counts) - 1
    points = [i / k for i in range(k + 1)]
    reg = [float(c) if c > 0 else REGULARIZE for c in counts]
    total = sum(reg)
    phat = [c / total for c in reg]
    w0, w1 = warm if warm is not None else (None, None)
    if test.model == "logistic":
        p0, t0 = _mle_logistic(points, phat, elo_to_score(test.elo0), w0 or 0.0)
        p1, t1 = _mle_logistic(points, phat, elo_to_score(test.elo1), w1 or 0.0)
        new: tuple[Any, Any] = (t0, t1)
    else:
        m = k / 2.0  # games per unit (the grid has 2m + 1 points)
        p0 = _mle_normalized(points, phat, math.sqrt(m) * test.elo0 / NELO_SCALE, w0)
        p1 = _mle_normalized(points, phat, math.sqrt(m) * test.elo1 / NELO_SCALE, w1)
        new = (p0, p1)
    return total * sum(q * (math.log(a) - math.log(b)) for q, a, b in zip(phat, p1, p0, strict=True)), new


# --------------------------------------------------------------------------
# the estimate


@dataclass(frozen=True, slots=True)
class EloEstimate:
    """What the units say about A against B (see the module docstring).

    ``score`` is A's mean unit score; ``elo``, ``elo_lo`` and ``elo_hi`` the
    logistic Elo difference and its 95% interval (``+-inf`` when the score or a
    bound reaches 0 or 1); ``nelo`` and its interval the normalized Elo (0 and
    an infinite interval while the variance is 0); ``los`` the likelihood of
    superiority. With no units, the score is 0.5 and everything is undecided
    (``elo`` 0, infinite interval, ``los`` 0.5).
    """

    units: int
    score: float
    variance: float  # of one unit's score
    elo: float
    elo_lo: float
    elo_hi: float
    nelo: float
    nelo_lo: float
    nelo_hi: float
    los: float


def estimate(counts: Sequence[int]) -> EloEstimate:
    """The Elo estimate of unit-score ``counts`` (as for :func:`llr`)."""
    if len(counts) < 2:
        raise ValueError("estimate() needs the counts of at least two score points")
    n = sum(counts)
    if n == 0:
        return EloEstimate(0, 0.5, 0.0, 0.0, -math.inf, math.inf, 0.0, -math.inf, math.inf, 0.5)
    k = len(counts) - 1
    m = k / 2.0
    points = [i / k for i in range(k + 1)]
    score = sum(c * a for c, a in zip(counts, points, strict=True)) / n
    var = sum(c * (a - score) ** 2 for c, a in zip(counts, points, strict=True)) / n
    half = Z95 * math.sqrt(var / n)
    lo, hi = score - half, score + half
    if var > 0.0:
        sd = math.sqrt(m * var)
        nelo = (score - 0.5) / sd * NELO_SCALE
        nelo_lo = (lo - 0.5) / sd * NELO_SCALE
        nelo_hi = (hi - 0.5) / sd * NELO_SCALE
        los = 0.5 * (1.0 + math.erf((score - 0.5) / math.sqrt(2.0 * var / n)))
    else:
        nelo, nelo_lo, nelo_hi = 0.0, -math.inf, math.inf
        los = 1.0 if score > 0.5 else 0.0 if score < 0.5 else 0.5
    return EloEstimate(
        units=n,
        score=score,
        variance=var,
        elo=score_to_elo(score),
        elo_lo=score_to_elo(lo),
        elo_hi=score_to_elo(hi),
        nelo=nelo,
        nelo_lo=nelo_lo,
        nelo_hi=nelo_hi,
        los=los,
    )


# --------------------------------------------------------------------------
# the estimate after a stop (fishtest's median-unbiased one)


def _phi(x: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _phi_tail_ratio(z: float, e: float) -> float:
    """``exp(e) * Phi(z)`` for a large ``e`` and a very negative ``z``, by the
    asymptotic series of Phi (no overflow of ``exp(e)``)."""
    return -math.exp(-(z * z) / 2.0 + e) / math.sqrt(2.0 * math.pi) * (1.0 / z - 1.0 / z**3)


class _Walk:
    """A Brownian motion from 0 with drift ``mu`` and variance ``var`` per unit,
    absorbed at ``a < 0 < b`` (the SPRT's LLR bounds)."""

    def __init__(self, a: float, b: float, mu: float, var: float) -> None:
        self.a, self.b, self.mu, self.var = a, b, mu, var

    def worse(self, t: float, y: float) -> float:
        """The probability that the walk ends "left of" the point ``(t, y)``:
        at ``a`` before time ``t``, or still inside at ``t`` below ``y``, or at
        ``a`` later, or at ``b`` after ``t``: every outcome worse than reaching
        ``y`` at time ``t`` (``y`` a bound: the test stopped there)."""
        width = self.b - self.a
        gamma = self.mu / self.var
        if self.var * t / width**2 < 1e-2 or abs(gamma * width) > 15.0:
            return self._siegmund(t, y)
        return self._series(t, y)

    def _series(self, t: float, y: float) -> float:
        # the exact law: the eigenfunction expansion of the absorbed walk's density
        width, var, mu = self.b - self.a, self.var, self.mu
        x0, y0 = -self.a, y - self.a  # start and point, measured from the lower bound
        gamma = mu / var
        base = (math.pi / width) ** 2 * var / 2.0 + mu * mu / var / 2.0
        scale = math.exp(-base * t - x0 * gamma + y0 * gamma)
        total = 0.0
        n = 1
        while True:
            level = (n * math.pi / width) ** 2 * var / 2.0 + mu * mu / var / 2.0
            decay = math.exp(-(level - base) * t)
            k = math.pi * n / width
            primitive = (2.0 * width * gamma * math.sin(k * y0) - 2.0 * math.pi * n * math.cos(k * y0)) / (
                width**2 * gamma**2 + math.pi**2 * n**2
            )
            total += decay * primitive * math.sin(k * x0)
            if abs(scale * decay * primitive) <= 1e-9 or n > 10000:
                break
            n += 1
        if gamma * width > 30.0:
            lower_first = math.exp(-2.0 * gamma * x0)
        elif abs(gamma * width) < 1e-8:
            lower_first = (width - x0) / width
        else:
            lower_first = (1.0 - math.exp(2.0 * gamma * (width - x0))) / (1.0 - math.exp(2.0 * gamma * width))
        return min(1.0, max(0.0, lower_first + scale * total))

    def _siegmund(self, t: float, y: float) -> float:
        # Siegmund's approximation, for short times or a strong drift (where the series converges slowly)
        sd = math.sqrt(t * self.var)
        shift = self.mu * t
        gamma = self.mu / self.var
        a, b = self.a, self.b
        z = (y - shift) / sd
        za = (-y + shift + 2.0 * a) / sd
        zb = (y - shift - 2.0 * b) / sd
        ta = _phi_tail_ratio(za, 2.0 * gamma * a) if gamma * a >= 5.0 else math.exp(2.0 * gamma * a) * _phi(za)
        tb = _phi_tail_ratio(zb, 2.0 * gamma * b) if gamma * b >= 5.0 else math.exp(2.0 * gamma * b) * _phi(zb)
        return min(1.0, max(0.0, _phi(z) + ta - tb))


def stopped_estimate(counts: Sequence[int], test: Sprt) -> tuple[float, float, float]:
    """The median-unbiased logistic Elo of a sequential test that has stopped,
    with its 95% interval: ``(elo, lo, hi)`` (see the module docstring,
    "The estimate after a stop"). ``counts`` as for :func:`llr`; each value is
    the root nearest to the plain estimate, within [-1000, 1000] Elo, or (no
    root there: a difference far beyond both hypotheses) the plain value."""
    n = sum(counts)
    if n == 0:
        return 0.0, -math.inf, math.inf
    k = len(counts) - 1
    points = [i / k for i in range(k + 1)]
    reg = [float(c) if c > 0 else REGULARIZE for c in counts]
    total = sum(reg)
    phat = [c / total for c in reg]
    s_hat = sum(q * a for q, a in zip(phat, points, strict=True))
    v_hat = sum(q * (a - s_hat) ** 2 for q, a in zip(phat, points, strict=True))
    if test.model == "logistic":
        s0, s1 = elo_to_score(test.elo0), elo_to_score(test.elo1)
    else:
        sigma = math.sqrt(k / 2.0 * v_hat)  # one game's standard deviation
        s0, s1 = (0.5 + e / NELO_SCALE * sigma for e in (test.elo0, test.elo1))
    a, b = test.lower, test.upper

    def drift(s: float) -> tuple[float, float]:
        v = v_hat + (s - s_hat) ** 2
        return (s - (s0 + s1) / 2.0) * (s1 - s0) / v, (s1 - s0) ** 2 / v

    slope = drift(s_hat)[0]
    y, t = total * slope, total
    if y < a:
        y, t = a, a / slope
    elif y > b:
        y, t = b, b / slope

    def worse(elo: float) -> float:
        mu, var = drift(elo_to_score(elo))
        return _Walk(a, b, mu, var).worse(t, y)

    plain = estimate(counts)
    center = max(-1000.0, min(1000.0, plain.elo))

    def solve(level: float, fallback: float) -> float:
        # the walk's chance of a worse outcome falls as the Elo rises near the data; far from it (the
        # variance grows with (s - s_hat)^2) it turns back up, and may never reach ``level``: bracket the
        # root nearest to the plain estimate, stepping away from it, then bisect; without a root in
        # [-1000, 1000] (a difference far beyond both hypotheses), the plain estimate's value
        step = 10.0
        lo, hi = center, center
        if worse(center) >= level:
            while worse(hi) > level:
                if hi >= 1000.0:
                    return fallback
                lo, hi, step = hi, min(1000.0, hi + step), 2.0 * step
        else:
            while worse(lo) < level:
                if lo <= -1000.0:
                    return fallback
                lo, hi, step = max(-1000.0, lo - step), lo, 2.0 * step
        for _ in range(60):
            if hi - lo < 1e-6:
                break
            mid = (lo + hi) / 2.0
            if worse(mid) > level:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2.0

    return solve(0.5, plain.elo), solve(1.0 - 0.025, plain.elo_lo), solve(0.025, plain.elo_hi)


# --------------------------------------------------------------------------
# the running state


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


class DuelStats(msgspec.Struct, kw_only=True):
    """A duel's statistics as JSON-able data (the duel's summary and live line
    read it). Infinite Elo values (a score of 0 or 1) are ``None``;
    ``sprt`` fields are ``None`` when no test is run."""

    units: int  # deal pairs (or units) counted
    games: int
    games_per_unit: int
    counts: list[int]  # units per score point i / (2 * games_per_unit); pairs: LL LD DD+WL WD WW
    score: float
    elo: float | None
    elo_lo: float | None
    elo_hi: float | None
    nelo: float | None
    nelo_lo: float | None
    nelo_hi: float | None
    los: float
    llr: float | None = None
    lower: float | None = None  # the LLR bounds of H0 and H1
    upper: float | None = None
    elo0: float | None = None
    elo1: float | None = None
    alpha: float | None = None
    beta: float | None = None
    model: str | None = None
    verdict: str = "continue"  # "continue", "H0" or "H1"
    decided_at: int | None = None  # the number of units at the first crossing
    #: how ``elo`` and its interval were estimated: "mean" (from the mean score), or "sprt" once the
    #: test has decided (fishtest's median-unbiased estimate after a stop; see the module docstring)
    elo_method: str = "mean"
    elo_mean: float | None = None  # the plain estimate from the mean score (biased after a stop)


class SprtState:
    """The running statistics of a duel: feed it deal pairs, it says whether
    to go on.

    ``test`` is the sequential test (``None``: estimate only, the verdict stays
    ``"continue"``). ``games_per_unit`` is the number of games that make one
    unit (2: the mirrored deal pair). Feed units with :meth:`add_pair` /
    :meth:`add_unit` in a fixed order, or with :meth:`submit` by unit index when
    they finish out of order (a duel running several tables at once), and
    :meth:`drop` by index the units that have no result: the units are then
    counted in index order, so the verdict and the number of units it took do
    not depend on which table finished first.

    Errors: ``ValueError`` for a game score other than 0, 0.5 or 1, a unit
    with the wrong number of games, or an index submitted twice or already
    counted. Every method is synchronous and either completes or changes nothing.
    """

    def __init__(self, test: Sprt | None = None, *, games_per_unit: int = 2) -> None:
        if isinstance(games_per_unit, bool) or not isinstance(games_per_unit, int) or games_per_unit < 1:
            raise ValueError(f"games_per_unit must be a whole number of at least 1, got {games_per_unit!r}")
        self.test = test
        self.games_per_unit = games_per_unit
        self.counts = [0] * (2 * games_per_unit + 1)
        self.llr = 0.0
        self.verdict: Verdict = "continue"
        self.decided_at: int | None = None
        self._next = 0
        self._waiting: dict[int, int | None] = {}  # None: a dropped unit
        self.dropped = 0
        self._warm: tuple[Any, Any] | None = None

    @property
    def units(self) -> int:
        return sum(self.counts)

    @property
    def games(self) -> int:
        return self.units * self.games_per_unit

    @property
    def waiting(self) -> int:
        """Units submitted out of order, waiting for an earlier index."""
        return len(self._waiting)

    def _point(self, scores: Sequence[float]) -> int:
        if len(scores) != self.games_per_unit:
            raise ValueError(f"a unit has {self.games_per_unit} game(s), got {len(scores)} score(s)")
        total = 0
        for s in scores:
            if s not in (0, 0.5, 1):
                raise ValueError(f"a game score is 1 (A above B), 0.5 (level) or 0 (A below B), got {s!r}")
            total += int(2 * s)
        return total

    def _count(self, point: int) -> Verdict:
        self.counts[point] += 1
        if self.test is not None:
            self.llr, self._warm = _llr(self.counts, self.test, self._warm)
            if self.verdict == "continue":
                self.verdict = self.test.verdict(self.llr)
                if self.verdict != "continue":
                    self.decided_at = self.units
        return self.verdict

    def add_unit(self, scores: Sequence[float]) -> Verdict:
        """Count one unit (its ``games_per_unit`` game scores); return the verdict."""
        if self._waiting:
            raise ValueError("units were submitted by index: keep using submit()")
        point = self._point(scores)
        self._next += 1
        return self._count(point)

    def add_pair(self, first: float, second: float) -> Verdict:
        """Count one deal pair: A's game scores in its two games."""
        return self.add_unit((first, second))

    def submit(self, index: int, scores: Sequence[float]) -> Verdict:
        """Count unit ``index`` (0-based) once every earlier unit has come in."""
        if index < self._next or index in self._waiting:
            raise ValueError(f"unit {index} was already submitted")
        self._waiting[index] = self._point(scores)
        return self._release()

    def drop(self, index: int) -> Verdict:
        """Give up unit ``index`` (0-based; a game of it has no result): it is
        not counted, and the units after it no longer wait for it."""
        if index < self._next or index in self._waiting:
            raise ValueError(f"unit {index} was already submitted")
        self._waiting[index] = None
        return self._release()

    def _release(self) -> Verdict:
        while self._next in self._waiting:
            point = self._waiting.pop(self._next)
            if point is None:
                self.dropped += 1
            else:
                self._count(point)
            self._next += 1
        return self.verdict

    def estimate(self) -> EloEstimate:
        """The plain estimate from the mean score (see :meth:`elo`)."""
        return estimate(self.counts)

    def elo(self) -> tuple[float, float, float, str]:
        """The Elo to report, with its 95% interval, and how it was estimated:
        ``(elo, lo, hi, method)``; method ``"sprt"`` once the test has decided
        (:func:`stopped_estimate`), else ``"mean"`` (:func:`estimate`)."""
        if self.test is not None and self.verdict != "continue":
            return (*stopped_estimate(self.counts, self.test), "sprt")
        e = self.estimate()
        return e.elo, e.elo_lo, e.elo_hi, "mean"

    def stats(self) -> DuelStats:
        """The current figures as a :class:`DuelStats`."""
        e = self.estimate()
        elo, elo_lo, elo_hi, method = self.elo()
        t = self.test
        return DuelStats(
            units=e.units,
            games=self.games,
            games_per_unit=self.games_per_unit,
            counts=list(self.counts),
            score=e.score,
            elo=_finite(elo),
            elo_lo=_finite(elo_lo),
            elo_hi=_finite(elo_hi),
            nelo=_finite(e.nelo),
            nelo_lo=_finite(e.nelo_lo),
            nelo_hi=_finite(e.nelo_hi),
            los=e.los,
            llr=self.llr if t else None,
            lower=t.lower if t else None,
            upper=t.upper if t else None,
            elo0=t.elo0 if t else None,
            elo1=t.elo1 if t else None,
            alpha=t.alpha if t else None,
            beta=t.beta if t else None,
            model=t.model if t else None,
            verdict=self.verdict,
            decided_at=self.decided_at,
            elo_method=method,
            elo_mean=_finite(e.elo),
        )
