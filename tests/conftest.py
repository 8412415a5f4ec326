"""Shared test setup: hypothesis profiles, bytecode compiled once, and the one
headless chromium of a test process (``chromium``: the browser tests of tests/view and tests/site)."""

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
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


#: chromium's flags for the browser tests (headless, in a container)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def chromium_path() -> str | None:
    """Debian's chromium: /usr/bin/chromium, else ``chromium`` on the PATH, else None."""
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    return shutil.which("chromium")


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """One headless Debian chromium per test process (session), driven by Playwright's sync API,
    or None when chromium is not installed (each folder's ``browser`` fixture then skips or fails).
    One for every browser test of the process: a second ``sync_playwright()`` opened while this one
    runs would fail ("Sync API inside the asyncio loop"), as the site's own module browser did on a
    worker that had run a view test first. No browser is ever downloaded."""
    exe = chromium_path()
    if exe is None:
        yield None
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # launch() runs chromium with a fresh temporary profile (user data dir), removed on close
        b = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
