"""``run_build``: a bot's build command in the bot's sandbox - its folder
writable, a scrubbed environment, no network unless ``build_network``, a
wall-clock limit, and nothing it starts left afterwards. Real processes."""

from __future__ import annotations

import os
import shlex
import socket
import sys
import uuid
from pathlib import Path

import pytest
import trio

from referee.errors import UserError
from referee.runtime import ResourceLimits, sandbox
from referee.runtime.build import BuildStartError, run_build
from tests.sandboxes import SANDBOXES, needs_bwrap

from ..hostile.conftest import survivors

PY = sys.executable


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_a_build_writes_its_folder_with_a_scrubbed_environment(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REFEREE_TEST_SECRET", "s3cret")
    script = (
        "import os, socket, sys; open('built.txt', 'w').write('ok'); "
        "print('secret' if 'REFEREE_TEST_SECRET' in os.environ else 'scrubbed', os.environ['MARK']); "
        "s = socket.socket(); s.settimeout(2)\n"
        "try:\n s.connect(('127.0.0.1', int(sys.argv[1]))); print('network: connected')\n"
        "except OSError as e:\n print('network:', e.strerror)"
    )
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    try:
        result = await run_build(
            "b", [PY, "-c", script, str(port)], str(tmp_path), env={"MARK": "x"}, limits=ResourceLimits(isolation=kind)
        )
        opened = await run_build(
            "b",
            [PY, "-c", script, str(port)],
            str(tmp_path),
            env={"MARK": "x"},
            limits=ResourceLimits(isolation=kind, build_network=True),
        )
    finally:
        listener.close()
    assert result.ok, result.output
    assert (tmp_path / "built.txt").read_text() == "ok"
    assert "scrubbed x" in result.output and "secret" not in result.output
    assert "network: connected" not in result.output, result.output  # no network by default
    assert "network: connected" in opened.output, opened.output  # build_network = true
    assert result.sandbox["sandbox"] == kind and result.sandbox["network"] is False


async def test_a_failing_build_and_one_that_cannot_start(tmp_path: Path) -> None:
    result = await run_build("b", "echo compiling; echo 'c.c:3: error' >&2; exit 4", str(tmp_path))
    assert not result.ok and result.returncode == 4 and not result.timed_out
    assert result.tail() == "compiling\nc.c:3: error"
    with pytest.raises(BuildStartError, match="No such file"):
        await run_build("b", [str(tmp_path / "no-such-compiler")], str(tmp_path))


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_a_build_past_its_time_is_killed_with_everything_it_started(tmp_path: Path, kind: str) -> None:
    tag = f"build-{uuid.uuid4().hex[:12]}"
    sleeper = shlex.join([PY, "-c", "import time, sys; time.sleep(60)", tag])
    command = f"echo started; {sleeper} & {sleeper} & wait"
    with trio.fail_after(20):
        result = await run_build("slow", command, str(tmp_path), limits=ResourceLimits(isolation=kind, build_seconds=1))
    assert result.timed_out and not result.ok and result.returncode is None
    assert 1 <= result.seconds < 10 and "started" in result.output
    assert survivors(tag) == [], "the build's processes survived it"


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_a_daemon_started_by_a_build_does_not_survive_it(tmp_path: Path, kind: str) -> None:
    tag = f"daemon-{uuid.uuid4().hex[:12]}"
    zoo = (await trio.Path(__file__).resolve()).parents[1] / "hostile" / "bots" / "daemonizer.py"
    result = await run_build("d", [PY, str(zoo), tag, "build"], str(tmp_path), limits=ResourceLimits(isolation=kind))
    assert result.ok and "a daemon started" in result.output, result.output
    with trio.move_on_after(2):
        while survivors(tag):  # noqa: ASYNC110  polls the kernel's process table: no trio event to wait on
            await trio.sleep(0.02)
    assert survivors(tag) == [], "the build's daemon survived it"


@needs_bwrap
async def test_a_build_sees_neither_the_ledger_nor_the_config(tmp_path: Path) -> None:
    """In bubblewrap the league's output folder and config are never mounted:
    a build in the folder that holds them is refused, and a build in its own
    folder does not reach them through links to them."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "ledger.sqlite").write_text("seed 12345")
    cfg = tmp_path / "league.toml"
    cfg.write_text("seed = 12345\n")
    sandbox.protect_paths(secret=[str(out), str(cfg)])
    with pytest.raises(UserError, match=f"bot 'b-build': its sandbox would mount {tmp_path}, which holds"):
        await run_build("b", [PY, "-c", "pass"], str(tmp_path))
    own = tmp_path / "bot"
    own.mkdir()
    (own / "out").symlink_to(out)
    (own / "league.toml").symlink_to(cfg)
    script = (
        "import os\nfor p in ('out/ledger.sqlite', 'league.toml'):\n"
        " try: print(p, repr(open(p).read()))\n except OSError as e: print(p, e.strerror)\n"
        "try: open('league.toml', 'w').write('hacked')\nexcept OSError as e: print('write', e.strerror)"
    )
    result = await run_build("b", [PY, "-c", script], str(own))
    assert result.ok, result.output
    assert "12345" not in result.output, result.output
    assert cfg.read_text() == "seed = 12345\n" and os.listdir(out) == ["ledger.sqlite"]
