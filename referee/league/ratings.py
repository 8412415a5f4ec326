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

    def add(self, bots: Sequence[str], ranks: Sequence[int]) -> None:
        """One game: ``bots[s]`` finished at competition rank ``ranks[s]`` (1 is best)."""
        ids = []
        for b in bots:
            i = self._index.get(b)
            if i is None:
                i = self._index[b] = len(self.names)
                self.names.append(b)
            ids.append(i)
        self.outcomes[tuple(sorted(zip(ids, ranks)))] += 1

    def fit(self, iterations: int = 50, tol: float = 1e-10) -> dict[str, tuple[float, float]]:
        n = len(self.names)
        if n == 0:
            return {}
        games = [(_groups(o), w) for o, w in self.outcomes.items()]
        theta = [0.0] * n
        prec = 1.0 / (PRIOR_SD * PRIOR_SD)
        hess: list[list[float]] = []
        for _ in range(iterations):
            grad, hess = _derivatives(games, theta, n, prec)
            step = _solve(hess, grad)
            # a damped step keeps the (concave) posterior rising even far from its maximum
            t = 1.0
            here = _log_posterior(games, theta, prec)
            while t > 1e-6:
                trial = [theta[i] + t * step[i] for i in range(n)]
                if _log_posterior(games, trial, prec) >= here - 1e-12:
                    break
                t /= 2
            theta = trial
            if max(abs(t * s) for s in step) < tol:
                break
        _, hess = _derivatives(games, theta, n, prec)
        cov_diag = _inverse_diagonal(hess)
        return {
            name: (MU0 + BETA * theta[i], BETA * math.sqrt(max(cov_diag[i], 0.0))) for i, name in enumerate(self.names)
        }


def _groups(outcome: Outcome) -> list[list[int]]:
    """The seats' bots grouped by rank, best first."""
    by_rank: dict[int, list[int]] = {}
    for bot, rank in outcome:
        by_rank.setdefault(rank, []).append(bot)
    return [by_rank[r] for r in sorted(by_rank)]


def _log_posterior(games: list[tuple[list[list[int]], int]], theta: list[float], prec: float) -> float:
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
    games: list[tuple[list[list[int]], int]], theta: list[float], n: int, prec: float
) -> tuple[list[float], list[list[float]]]:
    """The gradient of the log posterior and the negated Hessian (positive definite)."""
    grad = [-prec * t for t in theta]
    neg_hess = [[0.0] * n for _ in range(n)]
    for i in range(n):
        neg_hess[i][i] = prec
    ex = [math.exp(t) for t in theta]
    for groups, w in games:
        for g in groups:
            for b in g:
                grad[b] += w
        # the risk set of a group: the seats of that group and every group below it
        risk: list[int] = []
        for g in reversed(groups):
            risk += g
            total = sum(ex[b] for b in risk)
            c = w * len(g)
            probs = [ex[b] / total for b in risk]
            for b, p in zip(risk, probs):
                grad[b] -= c * p
                row = neg_hess[b]
                row[b] += c * p
                cp = c * p
                for b2, p2 in zip(risk, probs):
                    row[b2] -= cp * p2
    return grad, neg_hess


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """``a x = b`` for a symmetric positive definite ``a`` (Cholesky)."""
    low = _cholesky(a)
    n = len(b)
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - sum(low[i][k] * y[k] for k in range(i))) / low[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


def _cholesky(a: list[list[float]]) -> list[list[float]]:
    n = len(a)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = a[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            low[i][j] = math.sqrt(max(s, 1e-300)) if i == j else s / low[j][j]
    return low


def _inverse_diagonal(a: list[list[float]]) -> list[float]:
    """The diagonal of ``a``'s inverse (the posterior variances)."""
    n = len(a)
    out = []
    for i in range(n):
        e = [0.0] * n
        e[i] = 1.0
        out.append(_solve(a, e)[i])
    return out
