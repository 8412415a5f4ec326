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


def bots_toml(names: list[str], env: dict[str, str] | None = None) -> str:
    out = []
    for n in names:
        out.append(f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{HAND_BOT}"]\n')
        if env:
            out.append("env = { " + ", ".join(f'{k} = "{v}"' for k, v in env.items()) + " }\n")
    return "".join(out)


@pytest.fixture
def make_config(tmp_path: Path):
    def make(body: str, name: str = "league.toml") -> Path:
        p = tmp_path / name
        p.write_text(textwrap.dedent(body))
        return p

    return make
