"""``referee serve``: its allow-list (issue 19: never the ledger, its WAL, dotfiles, configs or seed
files, to anyone, a bot of the night included) and a server started before the night (issue 20:
the live page waits, then follows the night)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.view.serve import make_server, servable
from tests.league.conftest import LOGS_FOLDER, REFEREE, REPO, bot_processes, referee
from tests.view.conftest import PageProbe

SNOOP_BOT = REPO / "tests" / "bots" / "http_snoop_bot.py"
SEEDED_BOT = REPO / "tests" / "bots" / "seeded_bot.py"
SEED = "4242424242424242"


class _Served:
    def __init__(self, out: Path) -> None:
        self.server = make_server(out, port=0)
        self.port = self.server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def get(self, path: str) -> tuple[int, bytes]:
        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: Any, **kwargs: Any) -> None:
                return None

        try:
            with urllib.request.build_opener(NoRedirect).open(self.origin + path, timeout=10) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[_Served]:
    s = _Served(tmp_path / "out")  # no such folder yet: the server waits for the night
    try:
        yield s
    finally:
        s.close()


def test_the_allow_list() -> None:
    ok = [
        "report.html",
        "standings.json",
        "standings.csv",
        "standings.md",
        "head_to_head.csv",
        "report-data/games-0.js",
        "report-data/games-12.js",
        "games/viewer.html",
        "games/kwartet-3p-t0000-d000-r0.jsonl.zst",
        "games/kwartet-3p-t0000-d000-r0.jsonl",
        "games/kwartet-3p-t0000-d000-r0.jsonl.gz",
        "games/kwartet-3p-t0000-d000-r0.frames.js",
        "games/kwartet-3p-t0000-d000-r0.html",
    ]
    refused = [
        "ledger.sqlite",
        "ledger.sqlite-wal",
        "ledger.sqlite-shm",
        "ledger.sqlite-journal",
        ".lock",
        ".env",
        "league.toml",
        "seed.txt",
        "secret-seed",
        "",
        "games",
        "games/",
        "games/.hidden.jsonl",
        "games/../ledger.sqlite",
        "../league.toml",
        "./report.html",
        "/report.html",
        "report-data/games-0.js.map",
        "report-data/other.js",
        "report-data/../ledger.sqlite",
        "games/x/y.jsonl",
        "games/ledger.sqlite",
        "games/a.toml",
        "games/a.jsonl\0.html",
        ".incoming/run/unit/a.jsonl.zst",
        "REPORT.HTML",
    ]
    assert [p for p in ok if not servable(p)] == []
    assert [p for p in refused if servable(p)] == []


def test_links_and_folders_are_never_served(tmp_path: Path, served: _Served) -> None:
    """A served name that is a link (to the ledger) or a folder, or under a
    linked folder, is a 404, like every name off the list."""
    out = tmp_path / "out"
    (out / "games").mkdir(parents=True)
    (out / "ledger.sqlite").write_bytes(b"SQLite format 3\0" + SEED.encode())
    (out / "standings.md").symlink_to(out / "ledger.sqlite")
    (out / "games" / "a.jsonl").symlink_to(out / "ledger.sqlite")
    (out / "games" / "b.html").symlink_to(out / "ledger.sqlite")
    (out / "report.html").mkdir()
    (out / "report-data").symlink_to(out / "games")
    (out / "games" / "games-0.js").write_text("x")
    for path in ("/standings.md", "/games/a.jsonl", "/report.html", "/report-data/games-0.js", "/view/b", "/view/a"):
        status, body = served.get(path)
        assert status == 404 and SEED.encode() not in body, (path, status, body)


def _night(tmp_path: Path, tag: str) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    bots = f'[[bots]]\nname = "snoop"\ncommand = ["{{python}}", "{SNOOP_BOT}", "{tag}"]\n{LOGS_FOLDER}'
    bots += "".join(f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{SEEDED_BOT}", "{tag}"]\n' for n in "ab")
    cfg = tmp_path / "league.toml"
    cfg.write_text(
        f'name = "snooped"\nseed = "secret"\nout = "out"\n[clock]\nmove_ms = 10000\n{bots}'
        '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'
    )
    return cfg


def test_serve_before_a_secret_night_waits_follows_it_and_hands_a_bot_nothing_secret(
    tmp_path: Path, served: _Served, probe: PageProbe
) -> None:
    """``serve`` is started on a folder that does not exist: it creates nothing
    and its live page waits; the secret night then runs (its seed file, a
    dotfile and a copy of its config in the output folder), a sandboxed bot
    with network access GETs the ledger, its WAL and SHM, the lock, the seed
    file, the dotfile, the config (and each through tricks of the path) from
    the server and gets a 404 for every one, none holding the seed; the live
    page follows the night to its end, and the report loads over HTTP."""
    out = tmp_path / "out"
    tag = "sn-" + os.urandom(4).hex()
    cfg = _night(tmp_path, tag)
    page = probe.page
    page.goto(served.origin + "/")
    assert page.url == served.origin + "/live"
    page.goto(served.origin + "/live?every=100")
    state = "document.querySelector('[data-testid=state]').textContent"
    page.wait_for_function(f"() => {state}.startsWith('waiting for the night to begin')")
    status, body = served.get("/api/status")
    assert status == 200 and json.loads(body)["started"] is False
    assert not out.exists(), "serve creates nothing"

    out.mkdir()
    (out / "seed.txt").write_text(SEED + "\n")
    (out / ".env").write_text(f"SEED={SEED}\n")
    (out / "night.toml").write_text(cfg.read_text())
    (tmp_path / "logs" / "SERVE").write_text(str(served.port))
    proc = subprocess.Popen(
        [*REFEREE, "run", str(cfg), "--seed-file", str(out / "seed.txt"), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        page.wait_for_function(f"() => {state} === 'complete'", timeout=120_000)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert page.evaluate("() => document.querySelector('[data-testid=done]').textContent") == "3"

    reports = [json.loads(p.read_text()) for p in (tmp_path / "logs").glob("snoop-*.json")]
    assert reports, "the snoop bot fetched, during the night"
    for fetched in reports:
        for path, (code, text) in fetched.items():
            assert SEED not in text, (path, code)
            if path in ("/live", "/api/status"):
                assert code == 200, (path, code, text)
            else:
                assert code == 404, (path, code, text)
    # the same, asked by this process after the night; and what is meant to be served is
    for path in fetched:
        status, body = served.get(path)
        assert (
            SEED.encode() not in body and status in (200, 404) and (status == 200) == (path in ("/live", "/api/status"))
        )
    game = sorted(p.name for p in (out / "games").glob("*.jsonl.zst"))[0].removesuffix(".jsonl.zst")
    for path in (
        "/report.html",
        "/standings.json",
        "/standings.md",
        "/report-data/games-0.js",
        "/games/viewer.html",
        f"/games/{game}.jsonl.zst",
        f"/games/{game}.frames.js",
    ):
        assert served.get(path)[0] == 200, path
    assert served.get(f"/view/{game}")[0] == 302
    page.goto(served.origin + "/")
    page.wait_for_selector('[data-testid="game-browser"][data-ready="true"]')
    assert page.url == served.origin + "/report.html"
    probe.assert_clean(served.origin + "/")
    assert not bot_processes(tag)


def test_serve_of_a_missing_folder_says_it_waits_and_a_file_is_an_error(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [*REFEREE, "serve", str(tmp_path / "none"), "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith(f"serving {tmp_path / 'none'} at http://127.0.0.1:") and "waits" in line, line
        assert not (tmp_path / "none").exists()
    finally:
        proc.kill()
        proc.communicate()
    (tmp_path / "file").write_text("x")
    res = referee("serve", str(tmp_path / "file"), "--port", "0")
    assert res.returncode == 2 and res.stderr.startswith("error: ") and len(res.stderr.splitlines()) == 1, res.stderr
