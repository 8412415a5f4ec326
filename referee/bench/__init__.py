"""Speed benchmarks behind ``referee bench engine|transport|league``.

Each module has ``add_arguments(parser)``, ``run(args) -> dict`` (JSON-able
figures) and ``print_result(result)`` (a rich table). Benchmarks are never
tests: the machine is shared and noisy, so figures are read, not asserted.
"""

import argparse


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1 (else a clear usage error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
