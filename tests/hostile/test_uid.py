"""Issue 19: no bot ever runs as host uid 0, and the kernel's knobs are
read-only. Each test runs real bots with the referee as root (as on CI) and
fails on the code before this change, where a root referee's bots were host
root: they could open sysctls such as kernel.core_pattern for writing, read
root's 0600 files, write the host's /etc in the basic sandbox, and shared
one uid (RLIMIT_NPROC)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trio

import referee
from referee.runtime import BotSession, BotSpec, ClockSpec, ResourceLimits, sandbox
from referee.runtime.build import run_build
from tests.sandboxes import SANDBOXES

from .conftest import PYTHON, REPO, ZOO, assert_no_survivors, new_tag, survivors

CLOCK = ClockSpec(move_ms=2000, startup_ms=10000, grace_ms=200)
#: and without a sandbox: a root referee's bots still never run as host root
ALL_MODES = [*SANDBOXES, "none"]
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="the referee runs as root on CI; here it does not")


def host_uids(tag: str) -> set[int]:
    """The real host uids of the live processes carrying ``tag`` (bwrap and the bot)."""
    out = set()
    for pid in survivors(tag):
        try:
            with open(f"/proc/{pid}/status") as f:
                out.add(int(f.read().split("Uid:")[1].split()[0]))
        except (OSError, IndexError):
            pass
    return out


def own_folder(tmp_path: Path, bot: str) -> Path:
    """A bot folder of its own (a copy of the zoo bot and its helper) below
    pytest's 0700 root-owned temporary folder: the bot's uid can reach it only
    because the sandbox exposes it."""
    folder = tmp_path / "bot"
    folder.mkdir()
    for name in (f"{bot}.py", "_common.py"):
        shutil.copy(ZOO / name, folder / name)
    return folder


@root_only
@pytest.mark.parametrize("kind", ALL_MODES)
async def test_bots_run_as_host_uids_of_their_own_and_cannot_touch_the_kernels_knobs(tmp_path: Path, kind: str) -> None:
    folder = own_folder(tmp_path, "rootprobe")
    secret = folder / "secret.txt"
    secret.write_text("root's eyes only")
    secret.chmod(0o600)  # owned by root, next to the bot's own files
    package = os.path.dirname(os.path.abspath(referee.__file__))  # noqa: ASYNC240  a module's path: no disk I/O
    tags = [new_tag("rootprobe"), new_tag("rootprobe")]
    reports, uids = [], []
    limits = ResourceLimits(isolation=kind, network=False)
    async with trio.open_nursery() as nursery:
        sessions = []
        for tag in tags:
            argv = [PYTHON, "rootprobe.py", tag, str(secret), "/etc", "/usr/bin", package, str(folder), "."]
            spec = BotSpec("rootprobe", argv, cwd=str(folder), limits=limits)
            sessions.append(await BotSession.start(spec, CLOCK, nursery))
        for tag, session in zip(tags, sessions, strict=True):
            reports.append(json.loads(session.hello.version))
            uids.append(host_uids(tag))
            assert session.sandbox_info()["sandbox"] == kind
        for session in sessions:
            await session.close()
        nursery.cancel_scope.cancel()
    for tag in tags:
        await assert_no_survivors(tag)
    for report, seen in zip(reports, uids, strict=True):
        # not root on the host: seen from the host, and (basic, where the bot is in the host's user
        # namespace) from inside; in bwrap /proc/self/uid_map is relative to bwrap's outer namespace
        assert seen and 0 not in seen, seen
        if kind in ("basic", "none"):
            assert report["uid"] in seen and report["uid_map"][:2] == ["0", "0"]
            assert report["euid"] == report["uid"] and 0 not in report["groups"], report
        else:
            assert report["uid"] == sandbox.SANDBOX_UID
        opened = [k for k, v in report["knobs"].items() if not v.startswith("refused")]
        assert not opened, f"kernel knobs writable: {opened}"
        assert report["secret"].startswith("refused"), report["secret"]
        assert report["capabilities"] == "0" * 16 and report["no_new_privs"] == "1", report
        created = {d: v for d, v in report["create"].items() if v == "CREATED"}
        # only its temporary folder is writable (bwrap: not even the sandbox's own /etc); without a
        # sandbox there is none: "." is its own folder, not writable for its uid
        assert created == ({} if kind == "none" else {".": "CREATED"}), report["create"]
    assert not uids[0] & uids[1], f"two bots share a host uid: {uids}"
    start, count = sandbox.uid_range()
    assert all(start <= u < start + count for u in uids[0] | uids[1])


@root_only
@pytest.mark.parametrize("kind", ALL_MODES)
async def test_a_fork_bomb_at_its_process_limit_leaves_the_next_bot_its_own(kind: str) -> None:
    """RLIMIT_NPROC counts the processes of a uid; each bot has its own, so a
    bot forking up to its limit costs the other bots nothing: the second one
    gets as many children as the first."""
    limits = ResourceLimits(isolation=kind, processes=25)
    tags = [new_tag("forkbomb"), new_tag("forkbomb")]
    counts, uids = [], []
    async with trio.open_nursery() as nursery:
        sessions = []
        for tag in tags:  # one after the other: the first holds all its children while the second starts
            spec = BotSpec("forkbomb", [PYTHON, str(ZOO / "forkbomb.py"), tag], limits=limits)
            session = await BotSession.start(spec, CLOCK, nursery)
            count, _, error = session.hello.version.partition(" ")
            counts.append(int(count))
            uids.append(host_uids(tag))
            assert error, "the fork bomb should have hit its limit"
            sessions.append(session)
        for session in sessions:
            await session.close()
        nursery.cancel_scope.cancel()
    for tag in tags:
        await assert_no_survivors(tag)
    assert 10 < counts[0] < 25 and 10 < counts[1] < 25, counts
    assert 0 not in uids[0] | uids[1] and not uids[0] & uids[1], uids


@root_only
@pytest.mark.parametrize("kind", ALL_MODES)
async def test_a_build_runs_as_a_host_uid_of_its_own_and_writes_its_folder(tmp_path: Path, kind: str) -> None:
    """The build runs as a non-root host uid (seen from the host while it
    runs), yet writes its root-owned folder (an idmapped mount: what it
    writes belongs to the folder's owner on disk)."""
    folder = tmp_path / "bot"
    folder.mkdir()
    tag = new_tag("build")
    script = (
        "import os, time; open('built.txt', 'w').write('ok'); os.chmod('built.txt', 0o6755)\n"
        f"while not os.path.exists('go'): time.sleep(0.02)  # {tag}"
    )
    uids: set[int] = set()

    async def release() -> None:
        with trio.fail_after(20):
            while not (folder / "built.txt").exists() or not host_uids(tag):  # noqa: ASYNC110  another process's
                await trio.sleep(0.02)
        uids.update(host_uids(tag))
        (folder / "go").touch()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(release)
        result = await run_build("builder", [PYTHON, "-c", script], str(folder), limits=ResourceLimits(isolation=kind))
    assert result.ok, result.output
    assert uids and 0 not in uids, uids
    assert result.sandbox["uid"] == "own"
    st = (folder / "built.txt").stat()
    assert (st.st_uid, st.st_gid) == (0, 0), "a build's files belong to its folder's owner"
    assert st.st_mode & 0o7777 == 0o755, "a setuid/setgid file owned by root on disk would be a way up"
    assert (folder / "built.txt").read_text() == "ok"
    await assert_no_survivors(tag)


def test_a_fallback_to_basic_warns_once_and_require_sandbox_refuses_it(tmp_path: Path) -> None:
    """Where bwrap is missing (REFEREE_BWRAP names a program that is not
    there) ``sandbox = true`` runs the bots in "basic" after one warning line
    that says why and what to install; ``require_sandbox`` refuses instead."""
    env = {**os.environ, "REFEREE_BWRAP": str(tmp_path / "no-bwrap-here")}
    bot = f"{sys.executable} {REPO / 'sample_bots' / 'random_bot.py'}"
    bots = [f"--bot=b{i}={bot}" for i in range(3)]
    run = subprocess.run(
        [sys.executable, "-m", "referee", "play", "kwartet", *bots, "--seed", "7", "--log", str(tmp_path / "logs")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    warnings = [line for line in run.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, run.stderr
    assert "basic sandbox" in warnings[0] and "apt-get install bubblewrap" in warnings[0]
    code = (
        "from referee.runtime import ResourceLimits, sandbox\n"
        "print(sandbox.limits_problem(ResourceLimits(require_sandbox=True)))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert "require_sandbox = true" in run.stdout and "not installed" in run.stdout, run.stdout + run.stderr
    assert "warning:" not in run.stderr


def test_the_uid_range_comes_from_the_limits_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.errors import UserError
    from referee.runtime.limits import LimitsError, parse_limits

    monkeypatch.delenv("REFEREE_UID_BASE", raising=False)
    monkeypatch.delenv("REFEREE_UID_COUNT", raising=False)
    assert sandbox.uid_range(ResourceLimits()) == (sandbox.UID_BASE, sandbox.UID_COUNT)
    assert sandbox.uid_range(parse_limits({"uid_base": 3_000_000_000, "uid_count": 10})) == (3_000_000_000, 10)
    monkeypatch.setenv("REFEREE_UID_BASE", "100000")
    assert sandbox.uid_range(ResourceLimits()) == (100000, sandbox.UID_COUNT)
    assert sandbox.uid_range(ResourceLimits(uid_base=5000)) == (5000, sandbox.UID_COUNT)  # the config wins
    for bad in ("0", "-3", "many"):
        monkeypatch.setenv("REFEREE_UID_BASE", bad)
        with pytest.raises(UserError, match="REFEREE_UID_BASE"):
            sandbox.uid_range(ResourceLimits())
    monkeypatch.delenv("REFEREE_UID_BASE")
    with pytest.raises(UserError, match="never 0"):
        sandbox.uid_range(ResourceLimits(uid_base=4_294_967_000, uid_count=1000))
    for value in (0, True, "2000000000", 1.5):
        with pytest.raises(LimitsError, match="uid_base"):
            parse_limits({"uid_base": value})


@root_only
def test_uids_are_never_shared_within_a_process_or_across_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within the process a set, across processes a flock per block of uids:
    another process's block is skipped, a full range is a clear error, a
    released uid comes back, and a forked child takes blocks of its own."""
    from referee.errors import UserError

    uids = sandbox.uids
    monkeypatch.setattr(uids, "UID_LOCK_DIR", str(tmp_path / "locks"))
    for name, fresh in (("_LOCK_DIRS", {}), ("_BLOCKS", {}), ("_UIDS_IN_USE", set())):
        monkeypatch.setattr(uids, name, fresh)
    first = 3_100_000_000  # two whole blocks: 48437500 and 48437501
    assert first % uids.UID_BLOCK == 0
    limits = ResourceLimits(uid_base=first, uid_count=2 * uids.UID_BLOCK)
    other = first // uids.UID_BLOCK + (os.getpid() * 7919) % 2  # where this process starts its search
    (tmp_path / "locks").mkdir(mode=0o700)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time; f = open(sys.argv[1], 'w'); fcntl.flock(f, fcntl.LOCK_EX); "
            "print('locked', flush=True); time.sleep(60)",
            str(tmp_path / "locks" / f"block-{other}"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        got = [sandbox.allocate_uid(limits) for _ in range(uids.UID_BLOCK)]
        assert len({u for u, _fd in got}) == uids.UID_BLOCK
        assert all(u // uids.UID_BLOCK != other for u, _fd in got), "a uid of the other process's block"
        with pytest.raises(UserError, match=f"all {2 * uids.UID_BLOCK} bot uids"):
            sandbox.allocate_uid(limits)
        sandbox.release_uid(*got[5])
        again = sandbox.allocate_uid(limits)
        assert again[0] == got[5][0]
        # a forked child does not use its parent's block: it finds none free here
        pid = os.fork()
        if pid == 0:
            try:
                sandbox.allocate_uid(limits)
                os._exit(1)
            except UserError:
                os._exit(0)
            except BaseException:
                os._exit(2)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    finally:
        holder.kill()
        holder.wait()
        for fd in uids._BLOCKS.values():
            os.close(fd)
