"""Helpers for league tests: small configs with real bot subprocesses."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
HAND_BOT = HERE / "bots" / "hand_bot.py"
REPO = HERE.parent.parent

#: how the tests start the CLI as a subprocess
REFEREE = [sys.executable, "-m", "referee"]


def referee(*args: str, timeout: float = 60, **kw) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([*REFEREE, *args], capture_output=True, text=True, timeout=timeout, env=env, **kw)


@dataclass(frozen=True)
class Result:
    """What :func:`cli` gives back: the exit status and the output, as ``subprocess.run`` would."""

    returncode: int
    stdout: str
    stderr: str


def cli(*args: str, cwd: Path | str | None = None) -> Result:
    """``referee ARGS`` in this process (``referee.cli.main``, the entry point ``python -m referee``
    calls), its standard output and error captured; ``cwd``: the folder it runs in. For every test
    that needs no separate process: :func:`referee` is for signals, kill -9 and what a dead process
    leaves behind. What a command hides from bots it hides for itself only
    (``referee.runtime.sandbox.protection_scope``), so one test's nights do not see another's."""
    from referee.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        if cwd is not None:
            stack.enter_context(contextlib.chdir(cwd))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        code = main(list(args))
    return Result(code, out.getvalue(), err.getvalue())


#: the keys that give a bot the folder ``logs`` (next to the config) as its own, writable
#: folder: a sandboxed bot can write nowhere else that the test can read
LOGS_FOLDER = 'cwd = "logs"\nlimits = { writable = true }\n'


def bots_toml(names: list[str], env: dict[str, str] | None = None, tag: str = "", keys: str = "") -> str:
    """``[[bots]]`` tables running the hand bot; ``tag`` is an extra (ignored)
    argument that lets a test find its bot processes in /proc; ``keys`` are
    added to each table (e.g. :data:`LOGS_FOLDER`)."""
    out = []
    extra = f', "{tag}"' if tag else ""
    for n in names:
        out.append(f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{HAND_BOT}"{extra}]\n{keys}')
        if env:
            out.append("env = { " + ", ".join(f'{k} = "{v}"' for k, v in env.items()) + " }\n")
    return "".join(out)


def bot_processes(tag: str) -> list[int]:
    """Pids of the bots themselves whose command line contains ``tag`` (not the
    sandbox's processes around each bot: bubblewrap and its shell step)."""
    out = []
    for pid in processes_with(tag):
        try:
            argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if os.path.basename(argv0) not in (b"bwrap", b"sh"):
            out.append(pid)
    return out


def processes_with(tag: str) -> list[int]:
    """Pids of running processes whose command line contains ``tag``."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            cmdline = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = next((ln for ln in (d / "status").read_text().splitlines() if ln.startswith("State:")), "")
        except OSError:
            continue
        if tag in cmdline and "zombie" not in state:
            found.append(int(d.name))
    return found


@pytest.fixture
def make_config(tmp_path: Path):
    def make(body: str, name: str = "league.toml") -> Path:
        p = tmp_path / name
        p.write_text(textwrap.dedent(body))
        return p

    return make
