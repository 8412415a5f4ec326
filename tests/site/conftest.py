"""The site's test setup: a SITE.toml in a temporary folder, a runtime on it, an HTTP client on its app."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from referee.site.app import make_app
from referee.site.config import load_site
from referee.site.runtime import SiteRuntime

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots"

SITE_TOML = """
name = "test-site"
seed = 7
concurrency = 2

[clock]
move_ms = 1000

[[bots]]
name = "house-random"
command = ["./c_bot"]
cwd = "{house_c}"

[[bots]]
name = "house-random-2"
command = ["./c_bot"]
cwd = "{house_c}"

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


def house_c() -> Path:
    """The folder of the house bots: ``sample_bots/c_bot.c`` (random legal play) compiled once for every
    test process (a C bot starts in a millisecond; a Python one takes a second on a loaded machine, and
    every gauntlet, ladder table, duel and start check starts the house bots again)."""
    src = SAMPLES / "c_bot.c"
    digest = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"referee-site-tests-{os.getuid()}" / f"c_bot-{digest}"
    exe = folder / "c_bot"
    if not exe.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"c_bot.{os.getpid()}.tmp"
        subprocess.run(["cc", "-O2", "-o", str(tmp), str(src)], check=True, capture_output=True)
        os.replace(tmp, exe)  # (another test process may compile it at the same time: either one is the same)
    return folder


def write_site(folder: Path, extra: str = "", text: str = SITE_TOML) -> Path:
    """``SITE.toml`` in ``folder`` from ``text`` (its ``{house_c}``: :func:`house_c`) and ``extra``."""
    path = folder / "SITE.toml"
    if "{house_c}" in text:
        text = text.replace("{house_c}", str(house_c()))
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
