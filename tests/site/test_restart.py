"""``referee host`` killed with SIGKILL mid-queue, then started again: the queue resumes, nothing is lost;
with ``referee host ... add-entrant``, ``entrants`` and ``referee submit`` as a host and an entrant use
them (in this process: the CLI's code, without an interpreter each), the pages and the access log of
the real server, and SIGTERM ending it mid-gauntlet with no bot left behind."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from tests.site.conftest import SITE_TOML, write_site
from tests.site.test_app import _free_port, start_host, wait_up
from tests.site.test_pipeline import bot_folder

SETTINGS = """
[site]
title = "Restart"
promote = "host"
gauntlet_tables = 1
ladder_interval = 0
cookie_secure = false
"""


def referee(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``referee ARGS`` (its main, in this process): exit status, standard output, standard error."""
    from referee.cli import main

    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def state(port: int, token: str, vid: int) -> dict:
    r = httpx.get(
        f"http://127.0.0.1:{port}/api/versions/{vid}", headers={"Authorization": f"Bearer {token}"}, timeout=30
    )
    assert r.status_code == 200, r.text
    return r.json()


#: a version's states in the order it goes through them (``failed`` and ``rejected`` end it anywhere)
ORDER = ("received", "building", "checking", "candidate", "active", "retired")
ENDS = ("failed", "rejected")


def wait_for(port: int, token: str, vid: int, target: str, timeout: float = 150.0) -> dict:
    """The version once it is in ``target`` or a later state (a transient state may be passed between
    two looks), or has ended (``failed``, ``rejected``); the caller asserts which."""
    later = ORDER[ORDER.index(target) :] if target in ORDER else (target,)
    deadline = time.monotonic() + timeout
    v: dict = {"state": "unknown (no answer yet)"}
    while time.monotonic() < deadline:
        v = state(port, token, vid)
        if v["state"] in later or v["state"] in ENDS:
            return v
        time.sleep(0.05)
    raise AssertionError(f"version {vid} is still {v['state']}, not {target} or later")


#: a build held until the test lets it go (``go`` in the version's folder; at most 5 minutes, should the
#: test fail and leave it): the site is killed mid-build
HOLD = "n=0; while [ ! -e go ] && [ $n -lt 6000 ]; do sleep 0.05; n=$((n+1)); done"
HELD_BUILD = f'build = "{HOLD}; cc -O2 -o bot bot.c"\n'


def test_kill_9_mid_queue_then_restart_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = write_site(tmp_path, text=SITE_TOML.split("[site]")[0] + SETTINGS)
    code, out, err = referee(capsys, "host", str(site), "add-entrant", "alice")
    assert code == 0, err
    token = out.strip().splitlines()[-1]
    assert token.startswith("rt_")
    assert "alice" in referee(capsys, "host", str(site), "entrants")[1]
    c = bot_folder(tmp_path, "c", 'command = ["./bot"]\n' + HELD_BUILD + 'runtime = "c"\n')
    quits = bot_folder(tmp_path, "c", 'command = ["sh", "-c", "exit 3"]\n')
    go = tmp_path / "site-data" / "bots" / "alice" / "v1" / "go"
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_host(site, port)
    try:
        wait_up(port, proc)
        code, out, err = referee(capsys, "submit", "--site", url, "--token", token, str(c))
        assert code == 0 and f"{url}/versions/1" in out, err
        code, out, err = referee(capsys, "submit", "--site", url, "--token", token, str(quits))
        assert code == 0 and "/versions/2" in out, err
        # the site answers while the build is held (its build, check-bot and ladder do not hold its loop)
        assert wait_for(port, token, 1, "building")["state"] == "building"
        assert state(port, token, 2)["state"] == "received" and not go.exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
    assert state_after_kill(site) == {1: "building", 2: "received"}
    deadline = time.monotonic() + 60  # (a hang guard, no timing assertion)
    while _processes_with("[ ! -e go ]"):  # the held build died with the site (its sandbox's lifeline)
        assert time.monotonic() < deadline, "the build outlived the site killed with SIGKILL"
        time.sleep(0.05)
    go.write_text("")
    proc = start_host(site, port)
    try:
        wait_up(port, proc)
        home = httpx.get(f"{url}/", timeout=30)
        assert home.status_code == 200 and "Restart" in home.text and "Log in" in home.text
        assert httpx.get(f"{url}/static/site.css", timeout=30).status_code == 200
        v1 = wait_for(port, token, 1, "candidate")
        assert v1["state"] == "candidate" and v1["check_report"]["ok"], v1
        notes = [t["note"] for t in v1["transitions"]]
        assert "restarted: the site stopped while building" in notes
        v2 = wait_for(port, token, 2, "failed")
        assert v2["state"] == "failed" and v2["error"].startswith("check-bot: handshake"), v2
    finally:
        proc.send_signal(signal.SIGTERM)  # (v1's gauntlet is starting or under way: its bots go too)
        _, err_bytes = proc.communicate(timeout=60)
    log = err_bytes.decode()
    assert proc.returncode == 143, log[-2000:]
    assert not _bots_left(tmp_path)
    lines = [json.loads(x) for x in log.splitlines() if x.startswith("{")]
    home_line = next(x for x in lines if x["path"] == "/")
    assert home_line["method"] == "GET" and home_line["status"] == 200 and home_line["ms"] >= 0
    assert any(x["path"] == "/api/versions/1" and x["entrant"] == "alice" for x in lines)


def state_after_kill(site: Path) -> dict[int, str]:
    from referee.site.config import load_site
    from referee.site.store import Store

    store = Store.open(load_site(site).db_path)
    try:
        return {v.id: v.state for v in store.versions()}
    finally:
        store.close()


def _processes_with(text: str) -> list[str]:
    """The command lines of the processes (but this one's) that hold ``text``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmd:
            found.append(cmd)
    return found


def _bots_left(tmp_path: Path) -> list[str]:
    """Processes still running from the site's bot folders."""
    left = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(tmp_path) in cmd and "pytest" not in cmd:
            left.append(cmd)
    return left


def test_submit_needs_a_token_and_a_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from referee.cli import main

    assert main(["submit", "--site", "http://127.0.0.1:9", str(tmp_path)]) == 2
    assert "error: --token TOKEN" in capsys.readouterr().err
    assert main(["submit", "--site", "http://127.0.0.1:9", "--token", "x", str(tmp_path)]) == 2
    assert "no referee.toml" in capsys.readouterr().err
    (tmp_path / "referee.toml").write_text('command = "./bot"\n')
    assert main(["submit", "--site", "http://127.0.0.1:9", "--token", "x", str(tmp_path)]) == 2
    assert "cannot reach the site" in capsys.readouterr().err
