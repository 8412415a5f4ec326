"""Speed benchmarks behind ``referee bench engine|transport|league``.

Each module has ``add_arguments(parser)``, ``run(args) -> dict`` (JSON-able
figures) and ``print_result(result)`` (a rich table). Benchmarks are never
tests: the machine is shared and noisy, so figures are read, not asserted.
"""
