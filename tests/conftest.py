"""Shared test setup."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
# a longer search for a quiet moment: pytest --hypothesis-profile=deep
settings.register_profile("deep", deadline=None, max_examples=1000, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_configure(config: object) -> None:
    """Compile the package's bytecode once, before any test (the xdist controller, or a plain run).

    The suite starts hundreds of ``python -m referee`` processes. Where PYTHONDONTWRITEBYTECODE is
    set (as on this workplace's machines) none of them writes its ``__pycache__``, so each would
    compile referee/ from source again: about 0.2 s of CPU a process on two loaded cores (0.55 s
    against 0.34 s to import the CLI, the league and the runtime). Compiled files that exist are read
    whatever that variable says, so compiling them here once is enough; nothing else changes.
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a worker: the controller has done it
    import compileall
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for package in ("referee", "protocol"):
        compileall.compile_dir(root / package, quiet=1, workers=1)
