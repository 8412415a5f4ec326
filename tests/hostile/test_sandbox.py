"""The sandbox a bot runs in: scrubbed environment, temporary working
directory, rlimits, PID and network namespaces, and the watcher that kills a
bot (and everything it forked) when the referee dies - even by SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
from pathlib import Path

import pytest
import trio

from referee.errors import UserError
from referee.league.config import load_config
from referee.rules import get_variant
from referee.runtime import BotSession, BotSpec, ClockSpec, GameSpec, ResourceLimits, play_game, sandbox
from referee.runtime.limits import LimitsError, MiB, parse_limits
from tests.sandboxes import SANDBOXES, needs_bwrap

from .conftest import FIRST_TURN_SEAT_1, PYTHON, REPO, ZOO, assert_no_survivors, new_tag, survivors, zoo_command

CLOCK = ClockSpec(move_ms=2000, startup_ms=8000, grace_ms=200)
MINIMAL_ENV = {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONUNBUFFERED", "REFEREE_BOT_DIR", "JAVA_TOOL_OPTIONS"}


async def introspect(limits: ResourceLimits | None = None, *args: str, **spec_kw) -> tuple[dict, BotSession]:
    tag = new_tag("introspect")
    spec = BotSpec("introspect", [PYTHON, "introspect.py", tag, *args], cwd=str(ZOO), limits=limits, **spec_kw)
    async with trio.open_nursery() as nursery:
        session = await BotSession.start(spec, CLOCK, nursery)
        report = json.loads(session.hello.version)
        plan_dir = session._plan.workdir
        groups = session._plan.cgroup.dirs() if session._plan.cgroup is not None else []
        await session.close()
        nursery.cancel_scope.cancel()
    assert plan_dir is None or not await trio.Path(plan_dir).exists(), "the temporary working directory was not removed"
    assert not [g for g in groups if await trio.Path(g).exists()], "the bot's control groups were not removed"
    if plan_dir:
        assert not await trio.Path(report["cwd"]).exists()
    await assert_no_survivors(tag)
    return report, session


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_defaults_scrub_env_temp_cwd_rlimits_pid_namespace(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    monkeypatch.setenv("REFEREE_TEST_SECRET", "s3cret")
    report, session = await introspect(ResourceLimits(isolation=kind), env={"ZOO_EXTRA": "1"})
    # environment: only the minimal base plus what the spec passes
    assert "REFEREE_TEST_SECRET" not in report["env"]
    assert set(report["env"]) <= MINIMAL_ENV | {"ZOO_EXTRA", "PWD", "SHLVL", "_"}, report["env"]
    assert report["env_values"]["ZOO_EXTRA"] == "1"
    # a fresh temporary working directory, the relative script path resolved against cwd
    assert os.path.basename(report["cwd"]).startswith("referee-bot-introspect-")
    assert report["env_values"]["HOME"] == report["cwd"] == report["env_values"]["TMPDIR"]
    assert report["env_values"]["REFEREE_BOT_DIR"] == str(ZOO)
    assert report["wrote"] == 2 << 20
    defaults = ResourceLimits()
    assert report["rlimits"] == {
        "RLIMIT_AS": defaults.address_space,
        "RLIMIT_CPU": defaults.cpu_seconds,
        "RLIMIT_NPROC": defaults.processes,
        "RLIMIT_FSIZE": defaults.file_size,
        "RLIMIT_NOFILE": defaults.open_files,
    }
    assert report["core"] == [0, 0], "no core dumps, and no way to turn them on"
    assert report["umask"] == 0o077, "the bot's files are its own (0600/0700)"
    info = session.sandbox_info()
    assert info["sandbox"] == kind
    if kind == "bwrap":
        assert report["pid"] == 2, "the bot should be PID 2 of its own PID namespace (bwrap's init is PID 1)"
        assert report["uid"] == sandbox.SANDBOX_UID
        assert report["shm_bytes"] == sandbox.SHM_KIB * 1024, "the bot should get its own small /dev/shm"
    elif sandbox.namespace_support(True)[0]:
        assert report["pid"] == 1, "the bot should be PID 1 of its own PID namespace"
        assert report["shm_bytes"] == sandbox.SHM_KIB * 1024, "the bot should get its own small /dev/shm"
    # the lifeline never sits on 0-3, where the child's stdio and the watcher's fd 3 are set up
    # (at fd 3, dup2(3, 3) kept close-on-exec and every watcher killed its bot at once)
    assert sandbox.lifeline_fd() >= 10


async def test_file_size_limit_and_named_cwd() -> None:
    report, _ = await introspect(ResourceLimits(file_size=1 * MiB, temp_workdir=False, writable=True))
    assert report["cwd"] == str(ZOO)
    assert report["wrote"] != 2 << 20 and "too large" in str(report["wrote"]).lower(), report["wrote"]
    big = ZOO / report["big"]
    assert big.stat().st_size <= 1 * MiB
    big.unlink()


@needs_bwrap
async def test_bwrap_mounts_the_bot_folder_read_only_unless_writable() -> None:
    """In bubblewrap the bot's own folder is read-only by default (its temporary
    working directory stays writable); ``writable = true`` opens it."""
    report, _ = await introspect(ResourceLimits(isolation="bwrap", temp_workdir=False))
    assert report["cwd"] == str(ZOO)
    assert "Read-only file system" in str(report["wrote"]), report["wrote"]
    assert not (ZOO / report["big"]).exists()


async def test_sandbox_off_runs_the_command_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """No sandbox: the command as given, in its folder, with the referee's
    environment - but a root referee's bot runs as a host uid of its own,
    for which the root-owned folder is not writable (unless ``writable``)."""
    monkeypatch.setenv("REFEREE_TEST_SECRET", "s3cret")
    report, session = await introspect(ResourceLimits(sandbox=False, file_size=4 * MiB), env=dict(os.environ))
    assert report["cwd"] == str(ZOO) and "REFEREE_TEST_SECRET" in report["env"] and report["pid"] != 1
    if os.geteuid() == 0:
        assert "Permission denied" in str(report["wrote"]), report["wrote"]
        assert session.sandbox_info()["uid"] == "own"
    else:
        (ZOO / report["big"]).unlink()


async def test_network_false_cuts_the_network() -> None:
    ok, why = sandbox.namespace_support(False)
    if not ok:  # the refusal itself is tested below; here the machine must allow it
        with pytest.raises(UserError, match="network = false"):
            sandbox.check_limits(ResourceLimits(network=False))
        return
    listener = trio.socket.socket()
    await listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = str(listener.getsockname()[1])
    try:
        with_net, _ = await introspect(ResourceLimits(), port)
        without, _ = await introspect(ResourceLimits(network=False), port)
    finally:
        listener.close()
    assert with_net["net"] == "connected"
    # its own network namespace: the host's listener is out of reach (basic: loopback is down;
    # bwrap brings loopback up, where nothing listens)
    assert without["net"] != "connected", without["net"]
    assert "unreachable" in without["net"].lower() or "refused" in without["net"].lower(), without["net"]


def test_network_refused_where_impossible(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Where the machine cannot make network namespaces, network = false is an
    error naming the reason - never a silent run with network. (The machine's
    answer is replaced here: this machine can do it.)"""
    monkeypatch.setattr(sandbox.mode, "namespace_support", lambda network: (network, "no namespaces on this box"))
    with pytest.raises(UserError) as info:
        sandbox.plan_spawn(BotSpec("b", ["true"], limits=ResourceLimits(network=False, isolation="basic")))
    assert "network = false" in str(info.value) and "no namespaces on this box" in str(info.value)
    cfg = tmp_path / "l.toml"
    cfg.write_text(
        '[limits]\nnetwork = false\nsandbox = "basic"\n[[bots]]\nname = "a"\ncommand = "true"\n'
        '[[bots]]\nname = "b"\ncommand = "true"\n[[bots]]\nname = "c"\ncommand = "true"\n'
        '[[variants]]\nname = "kwartet"\n'
    )
    with pytest.raises(UserError, match=r"bots\[0\]\.limits: network = false .* not possible here"):
        load_config(cfg)


def test_sandbox_keys_and_refusals(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``sandbox = "bwrap"`` or ``require_sandbox = true`` where bubblewrap
    cannot run stop the league with the reason; ``true`` falls back to
    "basic", ``false`` is "none". (The machine's answer is replaced here.)"""
    assert parse_limits({"sandbox": True}).isolation == "auto"
    assert parse_limits({"sandbox": False}).isolation == "none" and not parse_limits({"sandbox": False}).sandbox
    assert parse_limits({"sandbox": "basic"}).isolation == "basic"
    assert not parse_limits({"sandbox": "none"}).sandbox
    with pytest.raises(LimitsError, match='expected "bwrap", "basic" or "none"'):
        parse_limits({"sandbox": "docker"})
    monkeypatch.setattr(sandbox.mode, "bwrap_support", lambda network=True, uid=None: (False, "no bwrap on this box"))
    assert sandbox.sandbox_mode(ResourceLimits()) == ("basic", None)
    assert sandbox.sandbox_mode(ResourceLimits(sandbox=False)) == ("none", None)
    with pytest.raises(UserError, match='sandbox = "bwrap" is not possible here: no bwrap on this box'):
        sandbox.plan_spawn(BotSpec("b", ["true"], limits=ResourceLimits(isolation="bwrap")))
    with pytest.raises(UserError, match="require_sandbox = true .*no bwrap on this box"):
        sandbox.plan_spawn(BotSpec("b", ["true"], limits=ResourceLimits(require_sandbox=True)))
    with pytest.raises(UserError, match='require_sandbox = true, but sandbox = "basic"'):
        sandbox.check_limits(ResourceLimits(require_sandbox=True, isolation="basic"))
    cfg = tmp_path / "l.toml"
    bots = "".join(f'[[bots]]\nname = "{n}"\ncommand = "true"\n' for n in "abc")
    cfg.write_text("[limits]\nrequire_sandbox = true\n" + bots + '[[variants]]\nname = "kwartet"\n')
    with pytest.raises(UserError, match=r"bots\[0\]\.limits: require_sandbox = true .*no bwrap on this box"):
        load_config(cfg)


def test_parse_limits_keys_and_errors(tmp_path: Path) -> None:
    lim = parse_limits({"memory_mb": 512, "network": True}, {"memory_mb": 256, "cpu_seconds": False})
    assert lim.address_space == 256 * MiB and lim.cpu_seconds is None and lim.file_size == ResourceLimits().file_size
    with pytest.raises(LimitsError, match="did you mean 'memory_mb'"):
        parse_limits({"memroy_mb": 1})
    with pytest.raises(LimitsError, match="network: expected true or false"):
        parse_limits({"network": "no"})
    with pytest.raises(LimitsError, match="expected a whole number"):
        parse_limits({"processes": -3})
    cfg = tmp_path / "l.toml"
    bots = "".join(f'[[bots]]\nname = "{n}"\ncommand = "true"\n' for n in "abc")
    cfg.write_text('[limits]\nmemory_mb = "lots"\n' + bots + '[[variants]]\nname = "kwartet"\n')
    with pytest.raises(UserError, match=r"l\.toml: limits\.memory_mb: expected a whole number"):
        load_config(cfg)
    cfg.write_text(
        "[limits]\nmemory_mb = 512\n"
        + bots.replace('command = "true"\n', 'command = "true"\ncwd = "."\n', 1)
        + 'limits = { cpu_seconds = 5 }\n[[variants]]\nname = "kwartet"\n'
    )
    league = load_config(cfg)
    assert league.bots[0].limits == {"memory_mb": 512, "temp_workdir": False}
    assert league.bots[2].limits == {"memory_mb": 512, "cpu_seconds": 5}


async def test_cpu_seconds_limit_kills_a_spinning_bot(tmp_path: Path) -> None:
    """A bot that spins forever is killed by the kernel at its CPU-seconds limit: crash."""
    tag = new_tag("spinner")
    specs = [BotSpec(f"legal{i}", zoo_command("legal", new_tag("legal"))) for i in range(3)]
    specs.insert(1, BotSpec("spinner", zoo_command("cpuburner", tag, "1000"), limits=ResourceLimits(cpu_seconds=1)))
    clock = ClockSpec(move_ms=20000, startup_ms=8000, grace_ms=200)
    async with trio.open_nursery() as nursery:
        sessions = [await BotSession.start(s, clock, nursery) for s in specs]
        try:
            result = await play_game(
                GameSpec("cpu-limit", get_variant("kwartet"), 4, seed=5, clock=clock), sessions, tmp_path
            )
        finally:
            for s in sessions:
                await s.close()
        nursery.cancel_scope.cancel()
    assert [(f.seat, f.fault) for f in result.faults] == [(1, "crash")], result.faults
    assert "SIGKILL" in result.faults[0].detail or "signal" in result.faults[0].detail
    await assert_no_survivors(tag)


REFEREE_SCRIPT = textwrap.dedent("""
    import json, sys, trio
    from referee.runtime import BotSession, BotSpec, ClockSpec
    async def main():
        async with trio.open_nursery() as nursery:
            spec = BotSpec("lingerer", json.loads(sys.argv[1]))
            s = await BotSession.start(spec, ClockSpec(startup_ms=8000), nursery)
            print(json.dumps({"pid": s.pid, "workdir": s._plan.workdir}), flush=True)
            await trio.sleep_forever()
    trio.run(main)
""")


def test_referee_sigkill_takes_every_bot_process_with_it() -> None:
    """SIGKILL of the referee: the watcher notices (lifeline pipe), kills the
    bot, its PID namespace (also the child that left the process group) and
    removes the working directory."""
    tag = new_tag("lingerer")
    proc = subprocess.Popen(
        [PYTHON, "-c", REFEREE_SCRIPT, json.dumps(zoo_command("lingerer", tag))],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        line = proc.stdout.readline()
        info = json.loads(line or b"{}")
        assert len(survivors(tag)) >= 3, "the bot and its two lingering children should be running"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    trio.run(assert_no_survivors, tag)

    async def folder_gone() -> None:  # the watcher removes it right after the bot is dead
        with trio.move_on_after(3):
            while await trio.Path(info["workdir"]).exists():  # noqa: ASYNC110  the watcher process removes it
                await trio.sleep(0.02)

    trio.run(folder_gone)
    assert not os.path.exists(info["workdir"]), "the watcher did not remove the bot's temporary folder"


async def test_cpu_clock_sees_thinking_hidden_in_a_setsid_child(tmp_path: Path) -> None:
    """A bot that leaves the watched process group (setsid) and thinks in a child
    that leaves it too is still charged: the CPU clock counts its whole PID
    namespace. (Before the fix it was charged 0 ms and never timed out.)"""
    ok, _why = sandbox.namespace_support(True)
    tag = new_tag("cpuhider")
    clock = ClockSpec(move_ms=200, mode="cpu", wall_ceiling_ms=3000, startup_ms=8000, grace_ms=200)
    specs = [
        BotSpec("legal0", zoo_command("legal", new_tag("l"))),
        BotSpec("cpuhider", zoo_command("cpuhider", tag)),
        BotSpec("legal2", zoo_command("legal", new_tag("l"))),
    ]
    async with trio.open_nursery() as nursery:
        sessions = [await BotSession.start(s, clock, nursery) for s in specs]
        try:
            result = await play_game(
                GameSpec("cpu-hider", get_variant("kwartet"), 3, seed=FIRST_TURN_SEAT_1, clock=clock),
                sessions,
                tmp_path,
            )
        finally:
            for s in sessions:
                await s.close()
        nursery.cancel_scope.cancel()
    if not ok:  # without a PID namespace the hole is documented in SECURITY.md
        return
    first = result.faults[0]
    assert (first.seat, first.fault) == (1, "timeout") and "CPU time" in first.detail, result.faults
    assert {f.seat for f in result.faults} == {1}
    await assert_no_survivors(tag)


async def test_user_limit_caps_a_fork_bomb(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as another user, RLIMIT_NPROC counts only that user's processes: a
    fork bomb gets a handful of children, then every one of them dies with it.
    (Not root: switching users is refused with a message saying so.)"""
    import tempfile

    if os.geteuid() != 0:
        assert "needs the referee to run as root" in (sandbox.limits_problem(ResourceLimits(user="nobody")) or "")
        return

    monkeypatch.setattr(tempfile, "tempdir", "/var/tmp")  # /tmp may not be reachable for that user
    tag = new_tag("forkbomb")
    limits = ResourceLimits(user="nobody", processes=25)
    spec = BotSpec("forkbomb", ["/usr/bin/python3", str(ZOO / "forkbomb.py"), tag], limits=limits)
    async with trio.open_nursery() as nursery:
        session = await BotSession.start(spec, CLOCK, nursery)
        count, _, error = session.hello.version.partition(" ")
        assert 0 < int(count) < 25 and error, session.hello.version
        uids = {
            int((await trio.Path(f"/proc/{pid}/status").read_text()).split("Uid:")[1].split()[0])
            for pid in survivors(tag)
        }
        assert uids == {65534} or uids == {int(__import__("pwd").getpwnam("nobody").pw_uid)}
        await session.close()
        nursery.cancel_scope.cancel()
    await assert_no_survivors(tag)


def test_user_limit_refused_when_impossible() -> None:
    with pytest.raises(LimitsError, match="user name or uid"):
        parse_limits({"user": True})
    problem = sandbox.limits_problem(ResourceLimits(user="no-such-user-here"))
    assert problem and "no such user" in problem


async def test_bot_cannot_spy_on_the_referee_or_other_bots_through_proc() -> None:
    """Without its own /proc a bot could read the referee's environment and
    another bot's memory (its private hand) through /proc/PID/environ and
    /proc/PID/mem (same user). In its PID namespace it gets a private /proc."""
    tags = [new_tag("legal"), new_tag("legal"), new_tag("spy")]
    async with trio.open_nursery() as nursery:
        others = [await BotSession.start(BotSpec("legal", zoo_command("legal", t)), CLOCK, nursery) for t in tags[:2]]
        spy = await BotSession.start(BotSpec("spy", zoo_command("spy", tags[2])), CLOCK, nursery)
        found = json.loads(spy.hello.version)
        for s in [*others, spy]:
            await s.close()
        nursery.cancel_scope.cancel()
    if sandbox.namespace_support(True)[0]:
        assert found == {"visible": 0, "environ": 0, "cmdline_other_bots": 0, "mem_bytes": 0}, found
    for t in tags:
        await assert_no_survivors(t)


def test_the_first_turn_seat_1_deal_starts_with_seat_1() -> None:
    """The deal the seat-1 CPU-clock tests play gives seat 1 the first turn."""
    assert get_variant("kwartet").new_game(3, seed=FIRST_TURN_SEAT_1).turn == 1
