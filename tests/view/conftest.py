"""Browser fixtures: one headless Debian chromium per test session, driven by Playwright.

* ``browser`` (session): the Playwright browser, the test process's one chromium (``chromium`` in
  tests/conftest.py, which tests/site/test_browser.py uses too). Skips, with the reason, only when
  chromium is not installed; Playwright itself is in the ``test`` extra, so a missing package is an
  error.
* ``probe`` (function): a fresh browser context and page that records console errors, page
  errors and every request; :meth:`PageProbe.assert_clean` checks none of them went wrong.
* ``artifacts`` (session): the folder for screenshots, ``test-artifacts/view/`` at the repo root.

Other test folders (report, serve) can use these by importing them into their own conftest:
``from tests.view.conftest import artifacts, browser, probe  # noqa: F401``.
No browser is ever downloaded: chromium is Debian's (``apt-get install -y chromium``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def browser(chromium: Any) -> Any:
    """The test process's chromium (tests/conftest.py); skips, with the reason, when it is not installed."""
    if chromium is None:
        pytest.skip("browser tests need Debian's chromium (apt-get install -y chromium); it is not installed")
    return chromium


@pytest.fixture(scope="session")
def artifacts() -> Path:
    d = REPO / "test-artifacts" / "view"
    d.mkdir(parents=True, exist_ok=True)
    return d


@dataclass
class PageProbe:
    """A page with everything it logged and requested."""

    page: Any
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def assert_clean(self, origin: str) -> None:
        """No console error, no uncaught exception, and every request's URL starts with ``origin``
        (for a file:// page: the folder's URL)."""
        assert not self.page_errors, f"uncaught errors in the page: {self.page_errors}"
        assert not self.console_errors, f"console errors: {self.console_errors}"
        foreign = [u for u in self.requests if not u.startswith(origin)]
        assert not foreign, f"requests left the page's origin {origin}: {foreign}"


@pytest.fixture
def probe(browser: Any) -> Iterator[PageProbe]:
    context = browser.new_context(viewport={"width": 1366, "height": 800}, service_workers="block")
    page = context.new_page()
    p = PageProbe(page)
    page.on("console", lambda m: p.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: p.page_errors.append(str(e)))
    page.on("request", lambda r: p.requests.append(r.url))
    page.set_default_timeout(10_000)
    try:
        yield p
    finally:
        context.close()
