"""The site's test setup: a SITE.toml in a temporary folder, a runtime on it, an HTTP client on its app."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from referee.site.app import make_app
from referee.site.config import load_site
from referee.site.runtime import SiteRuntime

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots"

SITE_TOML = f"""
name = "test-site"
seed = 7
concurrency = 2

[clock]
move_ms = 1000

[[bots]]
name = "house-random"
command = ["{{python}}", "random_bot.py"]
cwd = "{SAMPLES}"

[[bots]]
name = "house-tracker"
command = ["{{python}}", "tracker_bot.py"]
cwd = "{SAMPLES}"

[[variants]]
name = "kwartet"
sizes = [3]
deals = 1

[site]
title = "Test league"
cookie_secure = false
logins_per_minute = 3
uploads_per_hour = 5
upload_mb = 1
"""


def write_site(folder: Path, extra: str = "", text: str = SITE_TOML) -> Path:
    path = folder / "SITE.toml"
    path.write_text(text + extra)
    return path


@pytest.fixture
def site_path(tmp_path: Path) -> Path:
    return write_site(tmp_path)


@pytest.fixture
def runtime(site_path: Path) -> Iterator[SiteRuntime]:
    rt = SiteRuntime.open(load_site(site_path))
    yield rt
    rt.store.close()


@pytest.fixture
async def client(runtime: SiteRuntime) -> AsyncIterator[httpx.AsyncClient]:
    app = make_app(runtime, access_log=runtime.log.append)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


PYTHON = sys.executable


def referee_env() -> dict[str, str]:
    """The environment of a ``referee`` process a test starts (the host, ``submit``, ``host ...
    add-entrant``): this one's, but with bytecode caching on, so that each of them does not compile
    the whole package from source again when PYTHONDONTWRITEBYTECODE is set (seconds of CPU each on a
    loaded machine; the bots' own interpreters are set up by the runtime, not by this)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
