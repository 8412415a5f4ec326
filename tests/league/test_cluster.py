"""League nights on a real Dask cluster: a `dask scheduler` and two `dask worker`
processes on 127.0.0.1 (free ports), started once for the module and torn down
after; the coordinator is the real `referee run` command."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import suppress
from functools import partial
from pathlib import Path

import pytest

from referee.league import schedule as sched
from referee.league.config import load_config
from referee.league.ledger import BotInfo, Ledger

from .conftest import LOGS_FOLDER, REFEREE, REPO, bot_processes, cli, referee

#: the tests that use the module's cluster share one worker (the cluster starts once); the others
#: (their own clusters, or none) go wherever xdist sends them
on_the_cluster = pytest.mark.xdist_group("dask")

SEEDED_BOT = REPO / "tests" / "bots" / "seeded_bot.py"
ENV = {**os.environ, "PYTHONPATH": str(REPO), "DASK_LOGGING__DISTRIBUTED": "critical"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_until(cond, what: str, limit: float = 30.0) -> None:
    """Poll ``cond`` (a generous limit: this is no timing assertion, only a hang guard)."""
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)


class DaskCluster:
    """A scheduler and its workers, each a `dask` process in its own process group
    (``protocol`` "tls": with ``scheduler_args`` and ``worker_args``, their TLS files)."""

    def __init__(
        self,
        tmp: Path,
        *,
        protocol: str = "tcp",
        scheduler_args: tuple[str, ...] = (),
        worker_args: tuple[str, ...] = (),
    ) -> None:
        self.tmp = tmp
        self.port = _free_port()
        self.address = f"{protocol}://127.0.0.1:{self.port}"
        self.worker_args = worker_args
        chosen = ["--protocol", protocol] if protocol != "tcp" else []
        self.scheduler = self._spawn(
            ["scheduler", *chosen, "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard", *scheduler_args]
        )
        self.workers: list[subprocess.Popen[bytes]] = []
        self._n = 0

    def _spawn(self, args: list[str]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "dask", *args],
            env=ENV,
            cwd=self.tmp,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def add_worker(self) -> subprocess.Popen[bytes]:
        self._n += 1
        scratch = self.tmp / f"worker-{self._n}"
        scratch.mkdir()
        w = self._spawn(
            [
                "worker",
                self.address,
                "--nthreads",
                "1",
                "--no-nanny",
                "--host",
                "127.0.0.1",
                "--no-dashboard",
                "--local-directory",
                str(scratch),
                "--name",
                f"w{self._n}",
                *self.worker_args,
            ]
        )
        self.workers.append(w)
        return w

    def live_workers(self) -> list[subprocess.Popen[bytes]]:
        return [w for w in self.workers if w.poll() is None]

    def wait_for(self, n: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as c:
            c.wait_for_workers(n, timeout=60)
            _wait_until(lambda: len(c.scheduler_info(n_workers=-1)["workers"]) == n, f"{n} workers")

    def ensure(self, n: int = 2) -> None:
        """``n`` workers alive (a killed one replaced)."""
        while len(self.live_workers()) < n:
            self.add_worker()
        self.wait_for(n)

    def stop(self) -> None:
        """Kill every process group (a worker's bots die with it: the sandbox's lifeline)."""
        for p in [*self.workers, self.scheduler]:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    c = DaskCluster(tmp_path_factory.mktemp("dask"))
    try:
        c.add_worker()
        c.add_worker()
        c.wait_for(2)
        yield c
    finally:
        c.stop()
    assert all(p.poll() is not None for p in [*c.workers, c.scheduler])


def _config(tmp: Path, tag: str, deals: int = 3, chickens: bool = True) -> Path:
    bots = "".join(f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{SEEDED_BOT}", "{tag}"]\n' for n in "abc")
    variants = f'[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = {deals}\n'
    if chickens:
        variants += '[[variants]]\nname = "chickens"\nsizes = 3\ndeals = 2\n'
    cfg = tmp / "league.toml"
    cfg.write_text(f'seed = 7\nout = "out"\n[clock]\nmove_ms = 5000\n{bots}{variants}')
    return cfg


def _rows(out: Path) -> dict[str, tuple[object, ...]]:
    """Every game's result, without the measured times."""
    with Ledger.in_dir(out, create=False) as ledger:
        return {
            r.game_id: (r.bots, r.scores, r.ranks, r.win_shares, r.forfeits, [f["fault"] for f in r.faults], r.reason)
            for r in ledger.rows()
        }


def _planned(cfg: Path) -> list[str]:
    return sorted(g.game_id for g in sched.games(load_config(cfg)))


def _check_complete(cfg: Path, out: Path) -> None:
    planned = _planned(cfg)
    assert sorted(_rows(out)) == planned  # every planned game exactly once
    assert sorted(p.name for p in (out / "games").glob("*.jsonl*")) == [f"{g}.jsonl.zst" for g in planned]
    assert not (out / ".incoming").exists(), "the workers' logs were all moved in, and their folder removed"


def _start(cfg: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*REFEREE, "run", str(cfg), "--progress-every", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )


def _read_games(proc: subprocess.Popen[str], n: int) -> None:
    """Read progress lines until ``n`` games are committed."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("[") and int(line[1:].split("/")[0]) >= n:
            return
    raise AssertionError(f"the run ended before {n} games: {proc.wait()} {proc.stderr.read() if proc.stderr else ''}")


@on_the_cluster
def test_a_night_on_the_cluster_equals_the_local_night_game_by_game(tmp_path: Path, cluster: DaskCluster) -> None:
    cluster.ensure(2)
    cfg = _config(tmp_path, "eq-" + uuid.uuid4().hex[:8])
    local = cli("run", str(cfg), "--quiet", "--out", str(tmp_path / "local"))
    assert local.returncode == 0, local.stderr
    remote = referee("run", str(cfg), "--cluster", cluster.address, "--insecure", "--progress-every", "0")
    assert remote.returncode == 0, remote.stderr
    assert "playing on tcp://127.0.0.1" in remote.stderr and "2 workers" in remote.stderr
    warnings = [ln for ln in remote.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "--insecure" in warnings[0] and "run code" in warnings[0], remote.stderr
    _check_complete(cfg, tmp_path / "out")
    assert _rows(tmp_path / "out") == _rows(tmp_path / "local")
    # the bots and their hello at the start check (on the workers), as the local night has them
    with Ledger.in_dir(tmp_path / "out", create=False) as a, Ledger.in_dir(tmp_path / "local", create=False) as b:
        assert a.get_meta("bots") == b.get_meta("bots")
        infos = BotInfo.parse(a.get_meta("bots")) or []
        assert [i.name for i in infos] == ["a", "b", "c"] and all(i.hello for i in infos)
    # the workers see the output folder (this machine): they wrote the logs into it themselves
    n = len(_planned(cfg))
    assert f"logs: {n} written into {tmp_path / 'out'} by the workers, 0 sent to this machine" in remote.stdout
    # and each game's viewer page, made as it was played (its live file removed at its end)
    assert f"viewer pages: 0 written, {n} up to date" in remote.stdout, remote.stdout
    assert not list((tmp_path / "out" / "live").glob("*.frames.jsonl"))
    replay = cli("replay", str(next((tmp_path / "out" / "games").glob("*.jsonl*"))))
    assert replay.returncode == 0, replay.stdout + replay.stderr


@on_the_cluster
def test_send_logs_sends_every_log_and_the_night_is_the_same(tmp_path: Path, cluster: DaskCluster) -> None:
    """``--send-logs``: the logs come over the network (as from workers that
    cannot see the output folder); the night is the same game by game."""
    cluster.ensure(2)
    cfg = _config(tmp_path, "sl-" + uuid.uuid4().hex[:8], deals=2, chickens=False)
    local = cli("run", str(cfg), "--quiet", "--out", str(tmp_path / "local"))
    assert local.returncode == 0, local.stderr
    remote = referee(
        "run", str(cfg), "--cluster", cluster.address, "--insecure", "--send-logs", "--progress-every", "0"
    )
    assert remote.returncode == 0, remote.stderr
    n = len(_planned(cfg))
    assert f"logs: 0 written into {tmp_path / 'out'} by the workers, {n} sent to this machine" in remote.stdout
    _check_complete(cfg, tmp_path / "out")
    assert _rows(tmp_path / "out") == _rows(tmp_path / "local")
    verify = cli("verify", str(tmp_path / "out"))
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_worker_writes_logs_in_place_only_where_it_sees_the_runs_folder(tmp_path: Path) -> None:
    from referee.league.cluster import WorkerSetup, _in_place_folder, _incoming_folder, _unit_prefix

    out = tmp_path / "out"
    (out / ".incoming" / "old-run" / "unit-x").mkdir(parents=True)  # left by a coordinator killed earlier
    folder = _incoming_folder(out, "run1")
    assert folder == str(out / ".incoming" / "run1") and os.listdir(out / ".incoming") == ["run1"]
    assert os.stat(folder).st_mode & 0o777 == 0o700
    key = "referee-unit-run1-3-kwartet/3p t0000"
    mine = _in_place_folder(WorkerSetup("run1", (), (), folder), key)
    assert mine is not None and mine.parent == Path(folder) and mine.name.startswith(_unit_prefix(key))
    assert "/" not in _unit_prefix(key) and " " not in _unit_prefix(key)
    # a worker on a machine without that folder (no shared file system), or a night with --send-logs
    assert _in_place_folder(WorkerSetup("run1", (), (), str(tmp_path / "elsewhere" / "run1")), key) is None
    assert _in_place_folder(WorkerSetup("run1", (), (), None), key) is None


def test_a_worker_running_as_another_user_sends_its_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that is not the folder's owner (say, root, for a coordinator run by
    a user) would leave files the coordinator cannot move: it sends its logs."""
    from referee.league.cluster import WorkerSetup, _in_place_folder, _incoming_folder

    folder = _incoming_folder(tmp_path / "out", "run2")
    assert folder is not None
    uid = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: uid + 1)
    assert _in_place_folder(WorkerSetup("run2", (), (), folder), "referee-unit-run2-1-t") is None
    assert os.listdir(folder) == []


def test_a_local_rerun_removes_what_a_killed_cluster_run_left(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "lr-" + uuid.uuid4().hex[:8], deals=1, chickens=False)
    left = tmp_path / "out" / ".incoming" / "run0" / "unit-1"
    left.mkdir(parents=True)
    (left / "kwartet-3p-t0000-d000-r0.jsonl.zst").write_bytes(b"a log never moved in")
    res = cli("run", str(cfg), "--quiet")
    assert res.returncode == 0, res.stderr
    _check_complete(cfg, tmp_path / "out")


def test_send_logs_needs_a_cluster(tmp_path: Path) -> None:
    res = cli("run", str(_config(tmp_path, "x")), "--send-logs")
    assert res.returncode == 2 and res.stderr.startswith("error: --send-logs"), res.stderr
    assert not (tmp_path / "out").exists()


@on_the_cluster
def test_a_worker_killed_mid_unit_still_gives_every_game_once(tmp_path: Path, cluster: DaskCluster) -> None:
    cluster.ensure(2)
    tag = "kw-" + uuid.uuid4().hex[:8]
    cfg = _config(tmp_path, tag, deals=10, chickens=False)  # one table: two units of 5 deal sets, side by side
    proc = _start(cfg, "--cluster", cluster.address, "--insecure")
    try:
        _read_games(proc, 3)
        victim = cluster.live_workers()[0]
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    _check_complete(cfg, tmp_path / "out")
    _wait_until(lambda: not bot_processes(tag), "the dead worker's bots to go")


@on_the_cluster
def test_the_coordinator_killed_then_a_rerun_resumes(tmp_path: Path, cluster: DaskCluster) -> None:
    cluster.ensure(2)
    tag = "kc-" + uuid.uuid4().hex[:8]
    cfg = _config(tmp_path, tag, deals=8)
    proc = _start(cfg, "--cluster", cluster.address, "--insecure")
    _read_games(proc, 4)
    proc.kill()
    proc.wait()
    first = _rows(tmp_path / "out")
    assert 4 <= len(first) < len(_planned(cfg))
    _wait_until(lambda: not bot_processes(tag), "the workers to stop the dead coordinator's units")
    again = referee("run", str(cfg), "--cluster", cluster.address, "--insecure", "--quiet")
    assert again.returncode == 0, again.stderr
    _check_complete(cfg, tmp_path / "out")
    rows = _rows(tmp_path / "out")
    assert {g: rows[g] for g in first} == first


@on_the_cluster
def test_ctrl_c_stops_every_unit_and_every_bot_on_the_workers(tmp_path: Path, cluster: DaskCluster) -> None:
    cluster.ensure(2)
    tag = "cc-" + uuid.uuid4().hex[:8]
    cfg = _config(tmp_path, tag, deals=40, chickens=False)
    proc = _start(cfg, "--cluster", cluster.address, "--insecure")
    _read_games(proc, 2)
    assert bot_processes(tag)  # bots are playing on the workers
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted:" in err and "safely recorded" in err
    _wait_until(lambda: not bot_processes(tag), "every bot on every worker to go", limit=10)
    done = _rows(tmp_path / "out")
    assert 2 <= len(done) < len(_planned(cfg))


def test_a_wrong_or_unreachable_address_is_one_error_before_anything_is_written(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "wa")
    for address in (f"tcp://127.0.0.1:{_free_port()}", "no-port-here"):
        res = cli("run", str(cfg), "--cluster", address, "--insecure", "--cluster-timeout", "1")
        assert res.returncode == 2, res.stderr
        lines = [ln for ln in res.stderr.strip().splitlines() if not ln.startswith("warning: --insecure")]
        assert len(lines) == 1 and lines[0].startswith("error: --cluster"), res.stderr
        assert not (tmp_path / "out").exists()
    res = cli("run", str(cfg), "--workers", "0")
    assert res.returncode == 2 and res.stderr.startswith("error: --workers"), res.stderr


@on_the_cluster
def test_a_bot_failing_the_start_check_is_named_with_the_worker(tmp_path: Path, cluster: DaskCluster) -> None:
    cluster.ensure(2)
    cfg = tmp_path / "league.toml"
    bots = "".join(f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{SEEDED_BOT}"]\n' for n in "ab")
    cfg.write_text(
        f'seed = 1\nout = "out"\n{bots}[[bots]]\nname = "broken"\ncommand = ["{{python}}", "-c", "pass"]\n'
        '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'
    )
    res = referee("run", str(cfg), "--cluster", cluster.address, "--insecure", "--quiet")
    assert res.returncode == 2, res.stderr
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 2  # the broken bot, on each worker
    assert all("error: worker tcp://127.0.0.1:" in e and "'broken'" in e for e in errors)
    assert "nothing was played or recorded" in res.stderr
    with Ledger.in_dir(tmp_path / "out", create=False) as ledger:
        assert ledger.count() == 0


# ----------------------------------------------------------------------------- security (issue 19)

ATTACKER_BOT = REPO / "tests" / "bots" / "dask_attacker_bot.py"


@on_the_cluster
@on_the_cluster
def test_an_unauthenticated_scheduler_needs_tls_files_or_insecure(
    tmp_path: Path, cluster: DaskCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--cluster tcp://...`` with no TLS configuration is one ``error:`` line
    (before anything is written); misplaced security options are one too. In this process
    (``referee.cli.main``): each is refused before any connection is made."""
    cluster.ensure(2)
    cfg = _config(tmp_path, "ns")
    for k in [k for k in os.environ if k.startswith("DASK_DISTRIBUTED__COMM__TLS")]:
        monkeypatch.delenv(k)
    for args in (
        ["--cluster", cluster.address],
        ["--cluster", cluster.address.removeprefix("tcp://")],
        ["--cluster", cluster.address, "--tls-ca-file", str(cfg), "--tls-cert", str(cfg)],  # tls for a tcp:// address
        ["--cluster", cluster.address, "--tls-ca-file", str(tmp_path / "none.pem"), "--tls-cert", str(cfg)],
        ["--cluster", cluster.address, "--tls-cert", str(cfg)],
        ["--cluster", cluster.address, "--insecure", "--tls-cert", str(cfg)],
        ["--cluster", cluster.address, "--dashboard", "--insecure"],
        ["--workers", "2", "--insecure"],
        ["--insecure"],
    ):
        res = cli("run", str(cfg), *args, cwd=tmp_path)
        assert res.returncode == 2, (args, res.stderr)
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, res.stderr)
        assert not (tmp_path / "out").exists()
    res = cli("run", str(cfg), "--cluster", cluster.address)
    assert "no TLS configuration" in res.stderr and "--insecure" in res.stderr, res.stderr


def _listening_ports(pid: int) -> set[int]:
    """The TCP ports process ``pid`` listens on (its socket inodes matched in /proc/net/tcp)."""
    inodes = set()
    with suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with suppress(OSError):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
    ports = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(name).read_text().splitlines()[1:]:
            parts = row.split()
            if parts[3] == "0A" and parts[9] in inodes:
                ports.add(int(parts[1].rsplit(":", 1)[1], 16))
    return ports


def _descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with suppress(OSError, IndexError, ValueError):
                parents[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        out += kids
        todo += kids
    return out


def test_a_bot_on_a_workers_night_cannot_reach_the_scheduler_or_the_workers(tmp_path: Path) -> None:
    """``--workers 2`` on a secret night: a sandboxed bot with network access and
    ``distributed`` in its interpreter is given the ports of the scheduler (in the
    ``referee run`` process) and of every worker and nanny, and tries plain tcp://,
    tls:// without a client certificate, tls:// with a certificate of its own and a
    bare TLS handshake on each, and GETs of Dask's HTTP pages: every one fails, and
    the night plays on, equal game by game to the same night played here (the same
    seed file)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    seed = tmp_path / "seed.txt"
    seed.write_text("271828182845904523\n")
    tag = "at-" + uuid.uuid4().hex[:8]
    bots = f'[[bots]]\nname = "attacker"\ncommand = ["{{python}}", "{ATTACKER_BOT}", "{tag}"]\n{LOGS_FOLDER}'
    bots += "".join(f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{SEEDED_BOT}", "{tag}"]\n' for n in "ab")
    cfg = tmp_path / "league.toml"
    cfg.write_text(
        f'seed = "secret"\nout = "out"\n[clock]\nmove_ms = 5000\nstartup_ms = 60000\n{bots}'
        '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'
    )
    (logs / "PORTS").write_text("")  # here, no cluster to attack
    local = cli("run", str(cfg), "--quiet", "--out", str(tmp_path / "local"), "--seed-file", str(seed))
    assert local.returncode == 0, local.stderr
    for p in [logs / "PORTS", *logs.glob("attack-*.json")]:
        p.unlink()
    proc = _start(cfg, "--workers", "2", "--seed-file", str(seed))
    try:
        found: dict[str, set[int]] = {}

        def ports() -> bool:
            found["scheduler"] = _listening_ports(proc.pid)
            found["workers"] = set().union(*(_listening_ports(p) for p in _descendants(proc.pid)))
            return bool(found["scheduler"]) and len(found["workers"]) >= 2

        _wait_until(ports, "the local cluster's ports", limit=60)
        (logs / "PORTS.tmp").write_text(" ".join(map(str, sorted(found["scheduler"] | found["workers"]))))
        (logs / "PORTS.tmp").rename(logs / "PORTS")
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "playing on 2 local workers: 2 workers, 2 threads" in err
    reports = [json.loads(p.read_text()) for p in logs.glob("attack-*.json")]
    assert reports, "the attacker ran its attack"
    for report in reports:
        assert report["keys_read"] == [], report
        # it could find them (attacker's view of /proc/net/tcp), and tried every one
        assert found["scheduler"] <= set(report["listening"]), report
        assert {int(p) for p in report["tried"]} == found["scheduler"] | found["workers"], report
        for port, attempts in report["tried"].items():
            assert set(attempts) == {"tcp", "tls-no-cert", "tls-own-cert", "handshake", "http"}
            for how, what in attempts.items():
                assert "connected" not in what, (port, how, what)
    rows = _rows(tmp_path / "out")  # the night played on: every game recorded, with its log
    assert rows == _rows(tmp_path / "local")
    assert not (tmp_path / "out" / ".incoming").exists()
    assert len(rows) == 3 and sorted(p.name for p in (tmp_path / "out" / "games").glob("*.jsonl*")) == [
        f"{g}.jsonl.zst" for g in sorted(rows)
    ]
    assert not bot_processes(tag)


@on_the_cluster
def test_a_given_up_bot_forfeits_alike_on_the_cluster_and_here(tmp_path: Path, cluster: DaskCluster) -> None:
    """Issue 20: ``broken_bot = "forfeit"`` with a bot that exits at start, in a
    field where some tables do not seat it: the cluster night (whose units only
    name the given-up bots they seat) equals the local night game by game."""
    cluster.ensure(2)
    tag = "gu-" + uuid.uuid4().hex[:8]
    bots = "".join(f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{SEEDED_BOT}", "{tag}"]\n' for n in "abc")
    cfg = tmp_path / "league.toml"
    cfg.write_text(
        f'seed = 3\nout = "out"\n[faults]\nbroken_bot = "forfeit"\n{bots}'
        '[[bots]]\nname = "broken"\ncommand = ["{python}", "-c", "pass"]\n'
        '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'
    )
    local = cli("run", str(cfg), "--quiet", "--out", str(tmp_path / "local"))
    assert local.returncode == 0, local.stderr
    remote = referee("run", str(cfg), "--cluster", cluster.address, "--insecure", "--progress-every", "0")
    assert remote.returncode == 0, remote.stderr
    assert "Traceback" not in remote.stderr and "'broken'" in remote.stderr and "forfeits" in remote.stderr
    _check_complete(cfg, tmp_path / "out")
    rows = _rows(tmp_path / "out")
    assert rows == _rows(tmp_path / "local")
    assert any("broken" not in r[0] for r in rows.values()) and any("broken" in r[0] for r in rows.values())
    assert all(r[4] for r in rows.values() if "broken" in r[0])  # its seats forfeit
    assert not bot_processes(tag)


#: the certificates of docs/CLUSTER.md#security, made as it says (a CA, then one certificate per role)
MAKE_CERTS = r"""
set -e
openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=referee-dask-ca" -keyout ca.key -out ca.pem
for who in scheduler worker client; do
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$who" -keyout $who.key -out $who.csr
  openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -out $who.pem
done
chmod 600 *.key
"""


def test_a_tls_cluster_plays_with_the_client_certificate_and_refuses_others(tmp_path: Path) -> None:
    """A real deployment as docs/CLUSTER.md#security makes it: `dask scheduler` and
    `dask worker` with certificates of one CA; `referee run --cluster tls://...`
    with the client's files plays the night; a client without a certificate, or
    with one of another CA (the referee's own options too), gets nothing. A
    night whose bot's own folder holds the client's TLS files (a careless
    deployment) is refused in one line; a sandboxed bot of the night reads none
    of them and cannot connect to the scheduler."""
    from distributed import Client
    from distributed.security import Security

    logs = tmp_path / "logs"
    logs.mkdir()
    certs = tmp_path / "tls"
    certs.mkdir(mode=0o700)
    subprocess.run(["sh", "-c", MAKE_CERTS], cwd=certs, check=True, capture_output=True)
    sched = tmp_path / "sched"  # the scheduler's files (and the CA's key) are on its machine, not a worker's
    sched.mkdir(mode=0o700)
    for name in ("scheduler.pem", "scheduler.key", "ca.key"):
        (certs / name).rename(sched / name)
    shutil.copy(certs / "ca.pem", sched / "ca.pem")
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    subprocess.run(["sh", "-c", MAKE_CERTS], cwd=other, check=True, capture_output=True)

    def tls(who: str, folder: Path | None = None) -> list[str]:
        folder = folder or (sched if who == "scheduler" else certs)
        return ["--tls-ca-file", str(folder / "ca.pem"), "--tls-cert", str(folder / f"{who}.pem"),
                "--tls-key", str(folder / f"{who}.key")]  # fmt: skip

    dask = DaskCluster(
        tmp_path, protocol="tls", scheduler_args=tuple(tls("scheduler")), worker_args=tuple(tls("worker"))
    )
    port, address = dask.port, dask.address
    try:
        dask.add_worker()
        client_sec = Security(
            tls_ca_file=str(certs / "ca.pem"),
            tls_client_cert=str(certs / "client.pem"),
            tls_client_key=str(certs / "client.key"),
            require_encryption=True,
        )
        _wait_until(lambda: _free_port_taken(port), "the scheduler to listen")
        with Client(address, timeout=30, security=client_sec, set_as_default=False) as c:
            c.wait_for_workers(1, timeout=60)
        tag = "tl-" + uuid.uuid4().hex[:8]
        cfg = tmp_path / "league.toml"
        bots = f'[[bots]]\nname = "attacker"\ncommand = ["{{python}}", "{ATTACKER_BOT}", "{tag}"]\n{LOGS_FOLDER}'
        bots += "".join(f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{SEEDED_BOT}", "{tag}"]\n' for n in "ab")
        cfg.write_text(
            f'seed = 7\nout = "out"\n[clock]\nmove_ms = 5000\nstartup_ms = 60000\n{bots}'
            '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'
        )
        (logs / "PORTS").write_text(str(port))
        # a careless deployment: the client's files in the attacker's own folder: refused before any game
        careless = tmp_path / "careless"
        (careless / "tls").mkdir(mode=0o700, parents=True)
        for name in ("ca.pem", "client.pem", "client.key"):
            shutil.copy(certs / name, careless / "tls" / name)
        cfg.write_text(cfg.read_text().replace('cwd = "logs"', 'cwd = "careless"', 1))
        res = referee("run", str(cfg), "--cluster", address, *tls("client", careless / "tls"), timeout=120)
        assert res.returncode == 2 and "error: bot 'attacker': its sandbox would mount" in res.stderr, res.stderr
        assert str(careless) in res.stderr and not list(tmp_path.glob("out/games/*.jsonl*")), res.stderr
        cfg.write_text(cfg.read_text().replace('cwd = "careless"', 'cwd = "logs"', 1))
        res = referee("run", str(cfg), "--cluster", address, *tls("client"), "--progress-every", "0", timeout=120)
        assert res.returncode == 0, res.stderr
        assert f"playing on {address}: 1 worker" in res.stderr and "warning" not in res.stderr, res.stderr
        _check_complete(cfg, tmp_path / "out")
        (report,) = [json.loads(p.read_text()) for p in logs.glob("attack-*.json")]
        assert report["keys_read"] == [], report
        assert sorted(report["tried"]) == [str(port)], report
        for how, what in report["tried"][str(port)].items():
            assert "connected" not in what, (how, what)
        assert not bot_processes(tag)
        # the same files through dask's own configuration, instead of the options
        conf = {
            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(certs / "ca.pem"),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(certs / "client.pem"),
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(certs / "client.key"),
        }
        res = subprocess.run(
            [*REFEREE, "run", str(cfg), "--cluster", address.removeprefix("tls://"), "--out", str(tmp_path / "o2")],
            capture_output=True, text=True, timeout=120, env={**ENV, **conf},
        )  # fmt: skip
        assert res.returncode == 0 and f"playing on {address}" in res.stderr, res.stderr
        assert _rows(tmp_path / "o2") == _rows(tmp_path / "out")
        # the attacker's ways in: no certificate, a certificate of another CA (the referee's options too)
        for addr, sec in (
            (f"tcp://127.0.0.1:{port}", None),
            (
                address,
                Security(
                    tls_ca_file=str(certs / "ca.pem"),
                    tls_client_cert=str(other / "client.pem"),
                    tls_client_key=str(other / "client.key"),
                    require_encryption=True,
                ),
            ),  # fmt: skip
        ):
            with pytest.raises(Exception):  # noqa: B017 - any refusal will do; a connection would not raise
                Client(addr, timeout=2, security=sec, set_as_default=False)
        res = referee("run", str(cfg), "--cluster", address, *tls("client", other), "--cluster-timeout", "2")
        assert res.returncode == 2 and res.stderr.startswith(f"error: --cluster {address}: cannot reach"), res.stderr
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    finally:
        dask.stop()


def _free_port_taken(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_tls_files_are_hidden_from_bots_and_the_local_certificate_is_no_file(tmp_path: Path) -> None:
    """The coordinator's TLS files go into the paths every worker hides from its
    bots (with the output folder and the config); the --workers certificate is
    text in memory (no file to hide), for every role."""
    from distributed.security import Security

    from referee.league.cluster import _key_files, _setup, local_security

    for name in ("ca.pem", "client.pem", "client.key"):
        (tmp_path / name).write_text("x")
    sec = Security(
        tls_ca_file=str(tmp_path / "ca.pem"),
        tls_client_cert=str(tmp_path / "client.pem"),
        tls_client_key=str(tmp_path / "client.key"),
        require_encryption=True,
    )
    files = _key_files(sec)
    assert sorted(files) == sorted(str(tmp_path / n) for n in ("ca.pem", "client.pem", "client.key"))
    league = load_config(_config(tmp_path, "kf", deals=1, chickens=False))
    setup = _setup(league, "run1", keys=files)
    assert set(files) | {str(league.out), str(league.path)} == set(setup.secret)
    local = local_security()
    assert local.require_encryption and _key_files(local) == []
    for role in ("client", "scheduler", "worker"):
        tls = local.get_tls_config_for_role(role)
        assert "BEGIN CERTIFICATE" in tls["ca_file"] and "BEGIN CERTIFICATE" in tls["cert"], role
        assert "PRIVATE KEY" in tls["key"], role


def test_dashboard_only_when_asked(tmp_path: Path) -> None:
    """``--dashboard`` (with --workers) needs bokeh: without it, one error line
    and nothing written; with it, the dashboard's address on stderr."""
    cfg = _config(tmp_path, "db-" + uuid.uuid4().hex[:8], deals=1, chickens=False)
    res = referee("run", str(cfg), "--workers", "1", "--dashboard", "--progress-every", "0", timeout=120)
    try:
        import bokeh  # noqa: F401
    except ImportError:
        assert res.returncode == 2 and res.stderr.startswith("error: --dashboard"), res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
    else:
        assert res.returncode == 0 and "dashboard: http://127.0.0.1:" in res.stderr, res.stderr


@on_the_cluster
def test_a_ladder_table_on_the_cluster_equals_the_local_one(tmp_path: Path, cluster: DaskCluster) -> None:
    """``Ladder(cluster=...)`` (what ``referee host --cluster`` plays its ladder with): the same table,
    the same games and results as on this machine."""
    import trio

    from referee.league.cluster import Cluster
    from referee.league.ladder import open_ladder, run_ladder
    from referee.view.night import write_outputs

    cluster.ensure(2)
    cfg = _config(tmp_path, "ladder-" + uuid.uuid4().hex[:8], deals=1, chickens=False)
    outs = {}
    for where in ("local", "remote"):
        remote = Cluster.connect(cluster.address) if where == "remote" else None
        try:
            ladder = open_ladder(
                str(cfg), out=str(tmp_path / where), say=lambda line: None, cluster=remote, outputs=write_outputs
            )
            try:
                trio.run(partial(run_ladder, ladder, tables=1))
            finally:
                ladder.ledger.close()
        finally:
            if remote is not None:
                remote.close()
        outs[where] = _rows(tmp_path / where)
    assert outs["local"] == outs["remote"] and len(outs["local"]) == 3
