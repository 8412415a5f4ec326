"""Helpers for league tests: small configs with real bot subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
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
