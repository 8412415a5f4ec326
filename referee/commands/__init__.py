"""Command-line commands, one module each (see :mod:`referee.cli`)."""

from __future__ import annotations

import argparse

#: seeds are 64-bit unsigned: the generator (``referee.rules.rng``) works modulo
#: 2**64, so a larger or negative seed would alias another one
SEED_LIMIT = 2**64


def seed_value(text: str) -> int:
    """argparse type for ``--seed``: a whole number from 0 to 2**64 - 1 (else a usage error, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 2**64 - 1, got {text!r}") from None
    if not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError(
            f"a seed is a whole number from 0 to 2**64 - 1 ({SEED_LIMIT - 1}), got {value}"
        )
    return value
