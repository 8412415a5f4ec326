"""The referee's seeded random generator: SplitMix64, specified bit for bit.

Python's own :mod:`random` is not promised to give the same shuffle on every
Python version, so every random choice the referee makes (deals, dealers,
fallback moves, schedules) goes through this small generator instead. It is
documented in ``docs/RULES.md`` so that anyone can reproduce a deal in another
language.

The algorithm (all arithmetic modulo 2**64)::

    state = seed mod 2**64
    next():  state += 0x9E3779B97F4A7C15
             z = state
             z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
             z = (z ^ (z >> 27)) * 0x94D049BB133111EB
             return z ^ (z >> 31)

    below(n): for n == 1 returns 0 without drawing; otherwise draws
              r = next() until r < (2**64 // n) * n, returns r % n
              (rejection sampling, so every value is exactly equally likely)

    shuffle(xs): Fisher-Yates from the end: for i = len-1 down to 1:
                 j = below(i + 1); swap xs[i], xs[j]

Derived streams (for example the fallback player's, separate from the deal's)
come from :func:`derive`, which hashes a parent seed with a label.
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableSequence, Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB


_ANY = 1 << 64


def draw(state: int, limit: int) -> tuple[int, int]:
    """The SplitMix64 step (the only copy): from ``state``, step until the output
    is below ``limit`` (the rejection rule of ``below``: ``limit`` is ``n`` times
    ``2**64 // n``; ``2**64`` accepts every output). Returns ``(new state,
    output)``. :class:`Rng` draws through it. The ask engine's deal and random
    move inline this loop (a call per draw there costs about 5% of the engine's
    instructions: docs/PERFORMANCE.md, "Issue 11"); ``tests/rules`` checks them
    against ``Rng``."""
    while True:
        state = (state + _GOLDEN) & _MASK
        z = ((state ^ (state >> 30)) * _M1) & _MASK
        z = ((z ^ (z >> 27)) * _M2) & _MASK
        z ^= z >> 31
        if z < limit:
            return state, z


class Rng:
    """SplitMix64. Deterministic on every machine and Python version."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next(self) -> int:
        """Return the next 64-bit unsigned value."""
        self.state, z = draw(self.state, _ANY)
        return z

    def below(self, n: int) -> int:
        """Return a uniformly random integer in ``range(n)`` (``n >= 1``)."""
        if n <= 0:
            raise ValueError("below() needs n >= 1")
        if n == 1:
            return 0
        self.state, z = draw(self.state, ((1 << 64) // n) * n)
        return z % n

    def choice(self, xs: Sequence[T]) -> T:
        """Return one element of a non-empty sequence, uniformly."""
        return xs[self.below(len(xs))]

    def shuffle(self, xs: MutableSequence[T]) -> None:
        """Shuffle in place (Fisher-Yates from the end, as documented above)."""
        for i in range(len(xs) - 1, 0, -1):
            j = self.below(i + 1)
            xs[i], xs[j] = xs[j], xs[i]


def derive(seed: int, label: str) -> int:
    """Derive an independent 64-bit seed from ``seed`` and a text label.

    ``derive(s, label)`` is the first 8 bytes (big-endian) of
    SHA-256 of ``f"{s}:{label}"``. Used for sub-streams: ``derive(seed,
    "fallback")`` for the fallback player, ``derive(seed, "hand:3")`` for the
    fourth hand of a match, and so on.
    """
    digest = hashlib.sha256(f"{seed}:{label}".encode()).digest()
    return int.from_bytes(digest[:8], "big")
