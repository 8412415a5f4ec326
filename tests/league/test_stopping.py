"""Stopping a night like a service: SIGTERM and SIGHUP do what Ctrl-C does (referee.cli, referee.league.runner)."""

from __future__ import annotations

import os
import signal
import subprocess
import uuid
from pathlib import Path

from referee.league import schedule as sched
from referee.league.config import load_config
from referee.league.ledger import Ledger

from .conftest import REFEREE, REPO, bots_toml, cli, processes_with


def _start(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([*REFEREE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_sigterm_mid_night_records_every_finished_game_and_leaves_no_stray_log(tmp_path: Path, make_config) -> None:
    tag = f"league-sigterm-{uuid.uuid4().hex}"
    cfg = make_config(
        # reuse = "table": a set of 4 processes a table (session mode: a fresh set per rotation)
        'seed = 9\nout = "out"\nconcurrency = 2\nreuse = "table"\n[output]\ncompress = "none"\n'
        + bots_toml(["a", "b", "c", "d"], tag=tag)
        + '[[variants]]\nname = "authors"\nsizes = 4\ndeals = 6\n'  # 24 games: the stop comes after 4
    )
    planned = {g.game_id for g in sched.games(load_config(cfg))}
    proc = _start("run", str(cfg), "--progress-every", "0")
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("[4/"):
            break
    assert processes_with(tag), "the bots should be running now"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "interrupted:" in err and "run the same command again to resume" in err and "Traceback" not in err
    assert processes_with(tag) == []
    out = tmp_path / "out"
    with Ledger.in_dir(out, create=False) as ledger:
        recorded = {r.game_id for r in ledger.rows()}
    assert 4 <= len(recorded) < len(planned)
    logs = {p.name.removesuffix(".jsonl") for p in (out / "games").glob("*.jsonl")}
    assert logs == recorded  # the games in flight left no log behind
    check = cli("verify", str(out))
    assert check.returncode == 0, check.stdout  # no "logs without a row": every game there checks
    assert f"verified: all {len(recorded)} games replay" in check.stdout

    done = cli("run", str(cfg), "--quiet")
    assert done.returncode == 0, done.stderr
    final = cli("verify", str(out))
    assert final.returncode == 0 and f"all {len(planned)} games replay" in final.stdout, final.stdout


def test_sighup_stops_a_ladder_as_ctrl_c_does(tmp_path: Path, make_config) -> None:
    tag = f"ladder-sighup-{uuid.uuid4().hex}"
    cfg = make_config(
        'seed = 3\nout = "out"\nconcurrency = 1\n'
        + bots_toml(["a", "b", "c", "d"], tag=tag)
        + '[[variants]]\nname = "authors"\nsizes = 4\ndeals = 30\n'
    )
    proc = _start("ladder", str(cfg))
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("table "):
            break
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 128 + signal.SIGHUP, err
    assert "interrupted:" in err and "Traceback" not in err
    assert processes_with(tag) == []
    check = cli("verify", str(tmp_path / "out"))
    assert check.returncode == 0 and "without a row" not in check.stdout, check.stdout
