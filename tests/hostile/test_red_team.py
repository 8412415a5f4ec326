"""The process-level findings of issue 15's red-team pass, each played by a
zoo bot against a real referee process: a frozen watcher and ``kill -9`` of
the referee (1), reading the league's files (2), root's capabilities (3), CPU
hidden in auto-reaped children (4), memory hidden in memfds (5), a build that
starts a daemon (6), Unix sockets with ``network = false`` and core dumps (7).

Tests that need bubblewrap or control groups are skipped, with the reason,
only where the machine lacks them.
"""

from __future__ import annotations

import glob
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.rules import get_variant
from referee.runtime import (
    BotCrashed,
    BotSession,
    BotSpec,
    ClockSpec,
    GameSpec,
    ResourceLimits,
    cgroups,
    play_game,
)
from referee.runtime.gamelog import read_log_bytes
from tests.sandboxes import SANDBOXES, needs_bwrap

from .conftest import (
    FIRST_TURN_SEAT_1,
    PYTHON,
    REPO,
    ZOO,
    assert_no_survivors,
    new_tag,
    process_state,
    survivors,
    zoo_command,
)

LAYOUT = cgroups.layout()
needs_cgroup_cpu = pytest.mark.skipif(
    LAYOUT is None or LAYOUT.cpu is None, reason="no control group with CPU accounting can be made here"
)
needs_cgroup_memory = pytest.mark.skipif(
    LAYOUT is None or LAYOUT.memory is None, reason="no control group with a memory controller can be made here"
)
REFEREE = [sys.executable, "-m", "referee"]
SECRET = "REFEREE_TEST_SECRET"

#: a real referee process: plays one game between bots given as JSON
#: ({"bots": [{"name", "command", "cwd", "env", "limits"}], "clock": {...}, "logdir", "seed"}),
#: prints {"log": path, "faults": [...]}
REFEREE_GAME = textwrap.dedent("""
    import json, sys, trio
    from pathlib import Path
    from referee.rules import get_variant
    from referee.runtime import BotSession, BotSpec, ClockSpec, GameSpec, play_game
    from referee.runtime.limits import parse_limits
    async def main():
        cfg = json.loads(sys.argv[1])
        clock = ClockSpec(**cfg["clock"])
        specs = [BotSpec(b["name"], b["command"], cwd=b.get("cwd"), env=b.get("env"),
                         limits=parse_limits(b.get("limits"))) for b in cfg["bots"]]
        async with trio.open_nursery() as nursery:
            sessions = [await BotSession.start(s, clock, nursery) for s in specs]
            print(json.dumps({"started": [s.pid for s in sessions]}), flush=True)
            try:
                game = GameSpec("red-team", get_variant("kwartet"), len(specs), seed=cfg.get("seed", 1), clock=clock)
                result = await play_game(game, sessions, Path(cfg["logdir"]))
            finally:
                for s in sessions:
                    await s.close()
            nursery.cancel_scope.cancel()
        print(json.dumps({"log": result.log_path, "faults": [f.to_json() for f in result.faults]}), flush=True)
    trio.run(main)
""")


def referee_game(
    tmp_path: Path, bots: list[dict[str, Any]], clock: dict[str, Any] | None = None, env: dict[str, str] | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Play one game in a referee subprocess; returns (result, the log's records)."""
    cfg = {
        "bots": bots,
        "clock": clock or {"move_ms": 2000, "startup_ms": 10000, "grace_ms": 200},
        "logdir": str(tmp_path / "logs"),
    }
    run = subprocess.run(
        [PYTHON, "-c", REFEREE_GAME, json.dumps(cfg)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {}), "PYTHONPATH": str(REPO)},
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    records = [json.loads(line) for line in Path(result["log"]).read_text().splitlines()]
    return result, records


def hello_of(records: list[dict[str, Any]], bot: str) -> str:
    return next(s["hello"]["version"] for s in records[0]["seats"] if s["bot"] == bot)


def legal(name: str = "legal") -> dict[str, Any]:
    return {"name": name, "command": zoo_command("legal", new_tag("legal"))}


# --------------------------------------------------------------------------
# 1. a bot freezes its watcher; the referee is killed with SIGKILL


def process_table(pids: list[int]) -> str:
    """One line per process: pid, state, where it sleeps in the kernel, command line."""
    rows = []
    for pid in pids:
        try:
            state = process_state(pid)
            with open(f"/proc/{pid}/wchan") as f:
                wchan = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")[:200]
        except OSError:
            continue
        rows.append(f"{pid} {state} {wchan or '-'} {cmd}")
    return "\n".join(rows) or "no process"


def _kill_referee_and_count(
    cmd: list[str], tag: str, label: str, env: dict[str, str] | None = None
) -> tuple[list[int], list[str]]:
    """Start the referee ``cmd``, wait until the freezer has frozen its group and
    plays, SIGKILL the referee, wait one second; return (survivors, workdirs)."""
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
    )
    try:
        try:
            with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
                own = f.read()
        except OSError:
            own = b""

        def bot() -> list[int]:
            """The tagged processes but the referee's own: its command line names the bot's
            command (and so the tag), as does each of its forks until it runs exec."""
            found = []
            for pid in survivors(tag):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        if f.read() == own:
                            continue
                except OSError:
                    continue
                found.append(pid)
            return found

        deadline = time.monotonic() + 60  # a loaded CI machine can take long to start a sandbox
        while len(found := bot()) < 3 and time.monotonic() < deadline:  # the bot and its two children
            time.sleep(0.05)
        if len(found) < 3:  # say what was there, and what the referee said, before failing
            table = process_table(found)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            raise AssertionError(f"the freezer did not start in 60 s: {table}\n{proc.stderr.read().decode()}")
        time.sleep(2.0)  # its SIGSTOP, the SIGCONT of its child, hello, a slow first turn
        assert proc.poll() is None, "the referee should still be playing"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    time.sleep(1.0)  # nothing of the bot may be left one second after the referee died
    left = survivors(tag)
    workdirs = glob.glob(os.path.join(tempfile.gettempdir(), f"referee-bot-{label}-*"))
    if LAYOUT is not None:  # and its control groups
        workdirs += [
            g for parent in LAYOUT.parents() for g in glob.glob(os.path.join(parent, f"referee-bot-{label}-*"))
        ]
    for pid in left:  # do not leak them into other tests
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for d in workdirs:
        if d.startswith("/sys/fs/cgroup"):
            try:
                os.rmdir(d)
            except OSError:
                pass
        else:
            shutil.rmtree(d, ignore_errors=True)
    return left, workdirs


def test_1_kill_9_of_referee_play_while_the_bot_froze_its_watcher(tmp_path: Path) -> None:
    """The freezer stops its process group (SIGSTOP): where the watcher shared
    it, it was frozen, and after ``kill -9`` of the referee the bot, its
    setsid and setpgid children and its temporary folder lived on. The watcher
    is in no group of the bot's now: one second after ``kill -9`` of a real
    ``referee play``, nothing of the bot is left."""
    tag = new_tag("freezer")
    label = f"freezer{uuid.uuid4().hex[:8]}"
    legal_cmd = shlex.join(zoo_command("legal", new_tag("legal")))
    cmd = [
        *REFEREE,
        "play",
        "kwartet",
        "--seed",
        "3",
        "--move-ms",
        "5000",
        "--log",
        str(tmp_path / "logs"),
        "--bot",
        f"{label}={shlex.join(zoo_command('freezer', tag))}",
        "--bot",
        f"a={legal_cmd}",
        "--bot",
        f"b={legal_cmd}",
    ]
    left, workdirs = _kill_referee_and_count(cmd, tag, label)
    assert not left, f"processes of the bot survived the referee's SIGKILL: {left}"
    assert not workdirs, f"the bot's temporary folder or control groups survived: {workdirs}"


def test_1_the_basic_sandbox_too(tmp_path: Path) -> None:
    """The same attack against the basic sandbox (no bubblewrap)."""
    tag = new_tag("freezer")
    label = f"freezer{uuid.uuid4().hex[:8]}"
    cfg = {
        "bots": [
            {"name": label, "command": zoo_command("freezer", tag), "limits": {"sandbox": "basic"}},
            legal("a"),
            legal("b"),
        ],
        "clock": {"move_ms": 5000, "startup_ms": 10000},
        "logdir": str(tmp_path / "logs"),
    }
    left, workdirs = _kill_referee_and_count([PYTHON, "-c", REFEREE_GAME, json.dumps(cfg)], tag, label)
    assert not left, f"processes of the bot survived the referee's SIGKILL: {left}"
    assert not workdirs, f"the bot's temporary folder or control groups survived: {workdirs}"


# --------------------------------------------------------------------------
# 2. the league's files


@needs_bwrap
def test_2_a_bot_cannot_read_the_config_ledger_logs_or_other_bots(tmp_path: Path) -> None:
    """The snoop in the league's own folder (``cwd = "."``: the config, the
    output folder with the ledger and logs, another bot's folder are all below
    it) is refused before any game, in one error line. In a folder of its own,
    with links there to the config, the output folder and the other bot's
    folder, it looks for the seed, the ledger, the logs, the other bot's files
    and the referee's code: it finds nothing."""
    other = tmp_path / "bots" / "other"
    other.mkdir(parents=True)
    for name in ("legal.py", "_common.py"):
        shutil.copy(ZOO / name, other / name)
    (other / "secret.txt").write_text("the other bot's opening book\n")
    own = tmp_path / "bots" / "snoop"
    own.mkdir()
    for name in ("snoop.py", "_common.py"):
        shutil.copy(ZOO / name, own / name)
    (own / "league.toml").symlink_to(tmp_path / "league.toml")
    (own / "out").symlink_to(tmp_path / "out")
    (own / "other").symlink_to(other)
    (tmp_path / "out" / "games").mkdir(parents=True)
    (tmp_path / "out" / "games" / "earlier.jsonl").write_text('{"seed": 987654321}\n')
    tag = new_tag("snoop")
    cfg = tmp_path / "league.toml"
    for snoop in (
        f'cwd = "."\ncommand = {json.dumps(zoo_command("snoop", tag))}\n',
        f'cwd = "bots/snoop"\ncommand = ["{{python}}", "snoop.py", "{tag}"]\n',
    ):
        cfg.write_text(
            'seed = 987654321\nout = "out"\nreuse = "game"\n'
            f'[[bots]]\nname = "snoop"\n{snoop}'
            f'[[bots]]\nname = "other"\ncwd = "bots/other"\ncommand = ["{{python}}", "legal.py", "{new_tag()}"]\n'
            f'[[bots]]\nname = "legal"\ncommand = {json.dumps(zoo_command("legal", new_tag("legal")))}\n'
            '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'
        )
        run = subprocess.run(
            [*REFEREE, "run", str(cfg), "--quiet"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        if 'cwd = "."' in snoop:
            lines = run.stderr.strip().splitlines()
            assert run.returncode == 2 and len(lines) == 1, run.stderr
            assert lines[0].startswith(f"error: bot 'snoop': its sandbox would mount {tmp_path}, which holds")
            assert not list((tmp_path / "out" / "games").glob("kwartet*"))
            continue
        assert run.returncode == 0, run.stderr
    logs = sorted((tmp_path / "out" / "games").glob("kwartet*.jsonl*"))
    assert logs
    for log in logs:
        records = [json.loads(line) for line in read_log_bytes(log.read_bytes()).splitlines()]
        found = json.loads(hello_of(records, "snoop"))
        assert found == {"config": [], "ledger": [], "logs": [], "other_bot": [], "referee_code": []}, found
        seats = {s["bot"]: s["sandbox"]["sandbox"] for s in records[0]["seats"]}
        assert seats == {"snoop": "bwrap", "other": "bwrap", "legal": "bwrap"}


# --------------------------------------------------------------------------
# 3. root's capabilities


@pytest.mark.parametrize("kind", SANDBOXES)
def test_3_a_root_bot_has_no_capabilities_and_reaches_nothing(tmp_path: Path, kind: str) -> None:
    """The rootkit (with ``network = false``) tries umount2("/proc"), reads
    the referee's environment, joins the host's network namespace, connects to
    the host's loopback and writes fake replies into the other seats' pipes:
    all of it fails, and the other seats play without a fault."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = str(listener.getsockname()[1])
    try:
        result, records = referee_game(
            tmp_path,
            [
                legal("a"),
                {
                    "name": "rootkit",
                    "command": zoo_command("rootkit", new_tag("rootkit"), port),
                    "limits": {"network": False, "sandbox": kind},
                },
                legal("b"),
            ],
            env={SECRET: "s3cret"},
        )
    finally:
        listener.close()
    report = json.loads(hello_of(records, "rootkit"))
    assert int(report["cap_eff"], 16) == 0, report
    assert report["umount_proc"] != "ok", report
    assert report["referee_environ"] == 0 and report["pipes_written"] == 0, report
    assert report["setns_net"] != "ok" and report["net"] != "connected", report
    assert result["faults"] == [], result["faults"]


# --------------------------------------------------------------------------
# 4. CPU in auto-reaped children


@needs_cgroup_cpu
async def test_4_cpu_burnt_in_auto_reaped_children_is_charged(tmp_path: Path) -> None:
    """Children reaped automatically (SIGCHLD ignored) burn 300 ms per move:
    the bot's control group counts them, and the CPU clock times it out (it
    was charged about 5 ms)."""
    tag = new_tag("reaper")
    clock = ClockSpec(move_ms=150, mode="cpu", wall_ceiling_ms=5000, startup_ms=10000, grace_ms=200)
    specs = [
        BotSpec("legal0", zoo_command("legal", new_tag("legal"))),
        BotSpec("reaper", zoo_command("reaper", tag, "300")),
        BotSpec("legal2", zoo_command("legal", new_tag("legal"))),
    ]
    async with trio.open_nursery() as nursery:
        sessions = [await BotSession.start(s, clock, nursery) for s in specs]
        info = sessions[1].sandbox_info()
        try:
            result = await play_game(
                GameSpec("reaper", get_variant("kwartet"), 3, seed=FIRST_TURN_SEAT_1, clock=clock), sessions, tmp_path
            )
        finally:
            for s in sessions:
                await s.close()
        nursery.cancel_scope.cancel()
    assert info["accounting"].startswith("cgroup"), info
    assert result.faults, "the reaper's children burnt 300 ms per move, and it was never charged for them"
    first = result.faults[0]
    assert (first.seat, first.fault) == (1, "timeout") and "CPU time" in first.detail, result.faults
    assert {f.seat for f in result.faults} == {1}
    used = int(first.detail.split("it used ")[1].split(" ms")[0]) if "it used " in first.detail else None
    assert used is None or used >= 150, first.detail
    header = json.loads((await trio.Path(result.log_path).read_text()).splitlines()[0])
    assert header["seats"][1]["sandbox"]["accounting"] == info["accounting"]
    await assert_no_survivors(tag)


# --------------------------------------------------------------------------
# 5. memory in memfds


@needs_cgroup_memory
async def test_5_memfd_pages_count_against_the_memory_limit() -> None:
    """Eight memfds of 64 MiB under ``memory_mb = 256`` (pages that count
    against no address space): the bot's control group counts them and the
    bot is killed before it holds them all."""
    tag = new_tag("memfd")
    spec = BotSpec("memfd", zoo_command("memfd", tag, "8", "64"), limits=ResourceLimits(address_space=256 << 20))
    async with trio.open_nursery() as nursery:
        try:
            session = await BotSession.start(spec, ClockSpec(startup_ms=20000, grace_ms=200), nursery)
        except BotCrashed as exc:
            assert "SIGKILL" in str(exc) or "signal" in str(exc), str(exc)
        else:
            status = session.hello.version
            await session.close()
            assert not status.startswith("held"), f"the bot held its memfds: {status}"
        nursery.cancel_scope.cancel()
    await assert_no_survivors(tag)


# --------------------------------------------------------------------------
# 6. a build that starts a daemon


def test_6_a_build_that_starts_a_daemon_leaves_nothing(tmp_path: Path) -> None:
    """A bot's build command daemonizes a process (double fork, setsid, every
    signal ignored): after ``referee run`` has built and played, nothing of
    the build is left."""
    tag = new_tag("daemon")
    (tmp_path / "c").mkdir()  # the built bot's own folder
    for name in ("daemonizer.py", "legal.py", "_common.py"):
        shutil.copy(ZOO / name, tmp_path / "c" / name)
    cfg = tmp_path / "league.toml"
    build = shlex.join([PYTHON, "daemonizer.py", tag, "build"])
    cfg.write_text(
        'out = "out"\n'
        + "".join(
            f'[[bots]]\nname = "{n}"\ncommand = {json.dumps(zoo_command("legal", new_tag("legal")))}\n' for n in "ab"
        )
        + f'[[bots]]\nname = "c"\ncwd = "c"\ncommand = ["{{python}}", "legal.py", "{new_tag("legal")}"]\n'
        + f"build = {json.dumps(build)}\n"
        + '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'
    )
    run = subprocess.run(
        [*REFEREE, "run", str(cfg), "--quiet"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    left = survivors(tag)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert run.returncode == 0, run.stderr
    assert not left, f"the build's daemon survived: {left}"


# --------------------------------------------------------------------------
# 7. Unix sockets with network = false; core dumps


@needs_bwrap
def test_7_network_false_reaches_no_unix_socket(tmp_path: Path) -> None:
    """With ``network = false`` a bot reaches neither a Unix socket on the
    file system outside its folder (bubblewrap does not mount it) nor one in
    the abstract namespace (its own network namespace)."""
    path = tmp_path / "referee.sock"
    abstract = f"referee-test-{uuid.uuid4().hex[:8]}"
    listeners = []
    for address in (str(path), "\0" + abstract):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(address)
        s.listen(8)
        listeners.append(s)
    os.chmod(path, 0o777)
    try:
        _result, records = referee_game(
            tmp_path,
            [
                legal("a"),
                {
                    "name": "netcheck",
                    "command": zoo_command("netcheck", new_tag("netcheck")),
                    "env": {"NETCHECK_PATH": str(path), "NETCHECK_ABSTRACT": abstract},
                    "limits": {"network": False},
                },
                legal("b"),
            ],
        )
    finally:
        for s in listeners:
            s.close()
    report = json.loads(hello_of(records, "netcheck"))
    assert report["unix_path"] != "connected" and report["unix_abstract"] != "connected", report


@pytest.mark.parametrize("kind", SANDBOXES)
def test_7_a_crashing_bot_dumps_no_core(tmp_path: Path, kind: str) -> None:
    """A bot that raises its core size limit and aborts in a folder it may
    write writes no core there: RLIMIT_CORE is 0 and cannot be raised."""
    cores = tmp_path / "cores"
    cores.mkdir()
    os.chmod(cores, 0o777)
    result, records = referee_game(
        tmp_path,
        [
            legal("a"),
            {
                "name": "coredump",
                "command": zoo_command("coredump", new_tag("coredump")),
                "env": {"COREDUMP_DIR": str(cores)},
                "limits": {"sandbox": kind},
            },
            legal("b"),
        ],
    )
    report = json.loads(hello_of(records, "coredump"))
    assert report["core_limit"] == [0, 0], report
    assert [(f["seat"], f["fault"]) for f in result["faults"]] == [(1, "crash")], result["faults"]
    time.sleep(0.2)
    assert not list(cores.iterdir()), f"a core was written: {list(cores.iterdir())}"
    assert not (REPO / "core").exists() and not (ZOO / "core").exists()
