"""Order-free ratings: one Plackett-Luce fit over every game of a scope at once.

openskill (used game by game, as a live view or the ladder's matchmaking must)
is an online filter: the same games fed in another order give other ratings.
A night's final table must not depend on the order in which its games were
played or stored, so the standings' ``mu``, ``sigma`` and ``ordinal`` come
from this batch fit instead:

* each game is a ranking of its seats (competition ranks; forfeited seats
  last, ties allowed). The model is Plackett-Luce: bot ``b`` has a strength
  ``theta_b``, and the seats ranked at a position are chosen, in turn, from
  the seats not placed above them with probability ``exp(theta)/sum exp(theta)``.
  Tied seats use Breslow's rule (each tied seat is chosen from the same set);
  a bot with several seats at one table has the same strength in each;
* a normal prior ``theta ~ N(0, PRIOR_SD^2)`` (openskill's own starting
  uncertainty, 25/3 on the mu scale) keeps every estimate finite, also for a
  bot that won or lost every game;
* the fit is the maximum of the posterior (Newton's method on a concave
  function: one answer, whatever the order of the games), and ``sigma`` is the
  posterior's standard deviation from the inverse Hessian (the Laplace
  approximation);
* the scale is openskill's: ``mu = 25 + BETA * theta`` with ``BETA = 25/6``, so
  a bot with no games has mu 25 and sigma 25/3, and ``ordinal = mu - 3 sigma``.

Pure; no I/O. Identical game outcomes are counted once with a weight, so a
duplicate night of a few bots costs little however many games it has.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

MU0 = 25.0
BETA = 25.0 / 6
#: openskill's starting sigma (25/3) on the theta scale
PRIOR_SD = (25.0 / 3) / BETA

#: a game's outcome: (bot index, rank) per seat, sorted
Outcome = tuple[tuple[int, int], ...]


class BatchRatings:
    """Collect game outcomes with :meth:`add`; :meth:`fit` returns ``{bot: (mu, sigma)}``."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._index: dict[str, int] = {}
        self.outcomes: Counter[Outcome] = Counter()
        self._theta: list[float] = []  # the last fit (a warm start for the next: the ladder refits often)
        self._fitted: dict[str, tuple[float, float]] | None = None

    def add(self, bots: Sequence[str], ranks: Sequence[int]) -> None:
        """One game: ``bots[s]`` finished at competition rank ``ranks[s]`` (1 is best)."""
        ids = []
        for b in bots:
            i = self._index.get(b)
            if i is None:
                i = self._index[b] = len(self.names)
                self.names.append(b)
            ids.append(i)
        self.outcomes[tuple(sorted(zip(ids, ranks, strict=True)))] += 1
        self._fitted = None

    def fit(self, iterations: int = 50, tol: float = 1e-9) -> dict[str, tuple[float, float]]:
        """``{bot: (mu, sigma)}``: the maximum of the posterior (the same for any order of the games;
        a warm start from the previous fit changes the path, not the maximum)."""
        if self._fitted is not None:
            return self._fitted
        n = len(self.names)
        if n == 0:
            return {}
        games = [(_risk_sets(o), w) for o, w in self.outcomes.items()]
        prec = 1.0 / (PRIOR_SD * PRIOR_SD)
        theta = self._theta + [0.0] * (n - len(self._theta))
        here, grad, hess = _derivatives(games, theta, n, prec)
        for _ in range(iterations):
            step = _solve(hess, grad)
            size = max(abs(x) for x in step)
            # Newton's step, halved while it lowers the (concave) log posterior: one pass per try, and
            # the pass at the accepted point gives the next step's derivatives
            t = 1.0
            while True:
                trial = [theta[i] + t * step[i] for i in range(n)]
                value, g2, h2 = _derivatives(games, trial, n, prec)
                if value >= here - 1e-12 or t < 1e-6:
                    break
                t /= 2
            theta, here, grad, hess = trial, value, g2, h2
            if t * size < tol:
                break
        cov_diag = _inverse_diagonal(hess)
        self._theta = theta
        self._fitted = {
            name: (MU0 + BETA * theta[i], BETA * math.sqrt(max(cov_diag[i], 0.0))) for i, name in enumerate(self.names)
        }
        return self._fitted


#: a game's risk sets, best group first: (the group's size, the seats at or below it)
RiskSets = list[tuple[int, tuple[int, ...]]]


def _risk_sets(outcome: Outcome) -> tuple[list[int], RiskSets]:
    """The seats' bots of a game, and for each rank group (best first) its size and the bots of the
    seats ranked with it or below it (a one-seat set tells nothing and is left out)."""
    by_rank: dict[int, list[int]] = {}
    for bot, rank in outcome:
        by_rank.setdefault(rank, []).append(bot)
    groups = [by_rank[r] for r in sorted(by_rank)]
    below: list[int] = []
    if len(groups[-1]) == 1:  # a last place of its own: theta - log(exp(theta)) = 0, no set of its own
        below = groups.pop()
    sets: RiskSets = []
    for g in reversed(groups):
        below = g + below
        sets.append((len(g), tuple(below)))
    sets.reverse()
    return [b for g in groups for b in g], sets


def _groups(outcome: Outcome) -> list[list[int]]:
    """The seats' bots grouped by rank, best first."""
    by_rank: dict[int, list[int]] = {}
    for bot, rank in outcome:
        by_rank.setdefault(rank, []).append(bot)
    return [by_rank[r] for r in sorted(by_rank)]


def _log_posterior(games: list[tuple[list[list[int]], int]], theta: list[float], prec: float) -> float:
    """The log posterior, written out plainly from rank groups (the tests check the fit against it)."""
    total = -0.5 * prec * sum(t * t for t in theta)
    for groups, w in games:
        rest = 0.0  # sum of exp(theta) over the seats at or below the current group
        ll = 0.0
        for g in reversed(groups):
            rest += sum(math.exp(theta[b]) for b in g)
            ll += sum(theta[b] for b in g) - len(g) * math.log(rest)
        total += w * ll
    return total


def _derivatives(
    games: list[tuple[tuple[list[int], RiskSets], int]], theta: list[float], n: int, prec: float
) -> tuple[float, list[float], list[list[float]]]:
    """The log posterior at ``theta``, its gradient and its negated Hessian (positive definite)."""
    value = -0.5 * prec * sum(t * t for t in theta)
    grad = [-prec * t for t in theta]
    neg_hess = [[0.0] * n for _ in range(n)]
    for i in range(n):
        neg_hess[i][i] = prec
    ex = [math.exp(t) for t in theta]
    log = math.log
    for (seats, sets), w in games:
        for b in seats:
            grad[b] += w
            value += w * theta[b]
        for size, risk in sets:
            total = 0.0
            for b in risk:
                total += ex[b]
            c = w * size
            value -= c * log(total)
            scale = c / total
            for b in risk:
                cp = scale * ex[b]
                grad[b] -= cp
                row = neg_hess[b]
                row[b] += cp
                f = cp / total
                for b2 in risk:
                    row[b2] -= f * ex[b2]
    return value, grad, neg_hess


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """``a x = b`` for a symmetric positive definite ``a`` (Cholesky)."""
    return _substitute(_cholesky(a), b)


def _substitute(low: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    y = [0.0] * n
    for i in range(n):
        row = low[i]
        y[i] = (b[i] - sum(row[k] * y[k] for k in range(i))) / row[i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


def _cholesky(a: list[list[float]]) -> list[list[float]]:
    n = len(a)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        li = low[i]
        for j in range(i + 1):
            lj = low[j]
            s = a[i][j] - sum(li[k] * lj[k] for k in range(j))
            li[j] = math.sqrt(max(s, 1e-300)) if i == j else s / lj[j]
    return low


def _inverse_diagonal(a: list[list[float]]) -> list[float]:
    """The diagonal of ``a``'s inverse (the posterior variances): with ``a = L L^T``,
    ``a^-1 = L^-T L^-1``, so entry i is the squared norm of column i of ``L^-1``."""
    low = _cholesky(a)
    n = len(a)
    out = [0.0] * n
    for i in range(n):
        # column i of L^-1 by forward substitution (entries above i are 0)
        col = [0.0] * n
        col[i] = 1.0 / low[i][i]
        for r in range(i + 1, n):
            lr = low[r]
            col[r] = -sum(lr[k] * col[k] for k in range(i, r)) / lr[r]
        out[i] = sum(c * c for c in col)
    return out
