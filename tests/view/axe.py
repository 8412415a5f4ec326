"""axe-core in the page under test: the accessibility check of the report and the viewer.

axe-core's JavaScript comes from an installed package (``axe-playwright-python`` in the ``test``
extra bundles ``axe.min.js``); nothing is downloaded. :func:`violations` injects it into the page
(as an inline script, so no request leaves the page's folder) and runs every WCAG 2.x A/AA rule
and axe's best practices.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any


@cache
def axe_source() -> str:
    return resources.files("axe_playwright_python").joinpath("axe.min.js").read_text(encoding="utf-8")


def violations(page: Any) -> list[str]:
    """axe-core's violations on ``page`` as it is now, one line each (rule, impact, the first
    offending elements and axe's summary of what to fix); empty when there are none."""
    if not page.evaluate("() => typeof window.axe === 'object'"):  # once per page load
        page.add_script_tag(content=axe_source())
    result = page.evaluate("() => axe.run(document, { resultTypes: ['violations'] })")
    out = []
    for v in result["violations"]:
        nodes = v.get("nodes") or []
        where = "; ".join(
            " ".join(n.get("target", [])) + ": " + (n.get("failureSummary") or "").replace("\n", " ") for n in nodes[:3]
        )
        out.append(f"{v['id']} ({v.get('impact')}, {len(nodes)} elements): {v['help']} -- {where}")
    return out
