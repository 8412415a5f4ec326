"""The app as served by ``referee host``: a real process, its pages, its access log, its shutdown."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from referee.site.runtime import SiteRuntime
from tests.site.conftest import referee_env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_host(site: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "referee", "host", str(site), "--bind", f"127.0.0.1:{port}", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=referee_env(),
    )


def wait_up(port: int, proc: subprocess.Popen[bytes], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"referee host exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/leaderboard", timeout=5)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("referee host did not start")


async def test_home_page_in_process(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    r = await client.get("/")
    assert r.status_code == 200
    assert "No games played yet" in r.text
    entry = json.loads(runtime.log[-1])
    assert entry["path"] == "/" and entry["status"] == 200


def test_bind_defaults_to_localhost(site_path: Path) -> None:
    from referee.site.config import load_site

    assert load_site(site_path).bind() == ("127.0.0.1", 8000)
    assert os.path.exists(site_path)


def test_a_taken_port_is_one_error(site_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from referee.cli import main

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["host", str(site_path), "--bind", f"127.0.0.1:{port}"]) == 2
    assert f"error: --bind 127.0.0.1:{port}: cannot listen there" in capsys.readouterr().err


async def test_behind_a_trusted_proxy_the_forwarded_address_counts(tmp_path: Path) -> None:
    from referee.site.app import served_app
    from referee.site.config import load_site
    from tests.site.conftest import write_site

    rt = SiteRuntime.open(load_site(write_site(tmp_path, "trusted_proxies = 1\n")))
    try:
        app = served_app(rt, access_log=rt.log.append)
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            await c.get("/api/leaderboard", headers={"X-Forwarded-For": "203.0.113.9"})
        assert json.loads(rt.log[-1])["client"] == "203.0.113.9"
    finally:
        rt.store.close()
