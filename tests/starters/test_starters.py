"""The starter bots (starters/<language>/): each README's `Build:` line builds it in the league's build
sandbox with the language's runtime preset, and its `Check it:` line passes check-bot (real processes).

A missing toolchain fails with what to install: nothing is skipped. The builds run once per test
session (and xdist worker) in a copy of starters/; check-bot runs a quick subset of its variants (one
card-mode ask variant with the politeness rule, one family-mode variant, chickens), all its probes,
self-play and per-game mode."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.checkbot import CUSTOM_VARIANTS, check_bot
from referee.runtime.build import run_build
from referee.runtime.limits import parse_limits
from referee.runtime.runtimes import apply_runtime, runtime_env

ROOT = Path(__file__).resolve().parents[2]
STARTERS = ROOT / "starters"
LANGUAGES = ["python", "node", "java", "c", "cpp", "rust", "go", "csharp"]
#: the Debian packages of each toolchain (.ci/run installs them)
INSTALL = {
    "python": "python3",
    "node": "nodejs",
    "java": "openjdk-17-jdk-headless",
    "c": "gcc",
    "cpp": "g++",
    "rust": "rustc (or rustup: its tools in ~/.cargo/bin)",
    "go": "golang-go",
    "csharp": "mono-mcs mono-runtime",
}
#: check-bot's quick subset: card mode with please, family mode, chickens
VARIANTS: list[Any] = [*CUSTOM_VARIANTS, "chickens"]


def readme(language: str) -> tuple[str | None, str, str | None, list[str]]:
    """``(build, runtime, cwd, command)`` from the language's README lines."""
    text = (STARTERS / language / "README.md").read_text()
    build = re.search(r"^Build: `([^`]+)`", text, re.M)
    check = re.search(r"^Check it: `referee check-bot ([^`]+)`", text, re.M)
    assert check is not None, f"starters/{language}/README.md has no 'Check it: `referee check-bot ...`' line"
    words = shlex.split(check.group(1))
    split = words.index("--")
    options, command = words[:split], words[split + 1 :]
    opts = dict(zip(options[::2], options[1::2], strict=True))
    assert opts.get("--runtime"), f"starters/{language}/README.md: check-bot without --runtime"
    return (build.group(1) if build else None), opts["--runtime"], opts.get("--cwd"), command


def tool_path() -> str:
    """PATH with a rustup toolchain's own bin folder first: rustup's proxies (~/.cargo/bin/rustc)
    need ~/.rustup, which the sandbox does not mount; a toolchain's folder is an install prefix
    it mounts whole (docs/WRITING-A-BOT.md, Rust)."""
    path = os.environ.get("PATH", os.defpath)
    rustup = shutil.which("rustup", path=f"{path}{os.pathsep}{Path.home() / '.cargo' / 'bin'}")
    if rustup is not None:
        which = subprocess.run([rustup, "which", "rustc"], capture_output=True, text=True)
        if which.returncode == 0 and which.stdout.strip():
            path = f"{os.path.dirname(which.stdout.strip())}{os.pathsep}{path}"
    return path


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``build(language) -> folder``: a copy of starters/ whose starters are built on demand,
    each once, by its README's build command in the league's build sandbox (its preset's limits)."""
    root = tmp_path_factory.mktemp("starters-copy")
    shutil.copytree(STARTERS, root / "starters", ignore=shutil.ignore_patterns("bot", "classes", "bot.exe", ".cache"))
    done: dict[str, Path] = {}
    path = tool_path()

    def build(language: str) -> Path:
        if language in done:
            return done[language]
        folder = root / "starters" / language
        command, runtime, _, run = readme(language)
        tools = [shlex.split(command)[0]] if command else []
        tools.append(run[0] if "/" not in run[0] else "")
        for tool in filter(None, tools):
            if shutil.which(tool, path=path) is None:
                pytest.fail(
                    f"the {language} starter needs `{tool}`, which is not installed: install {INSTALL[language]} "
                    "(apt-get install ...), or put it on the PATH"
                )
        if command:
            limits = parse_limits(apply_runtime(runtime, None, {"temp_workdir": False}))
            old = os.environ.get("PATH")
            os.environ["PATH"] = path  # the sandbox passes the referee's PATH on to the build
            try:
                result = trio.run(
                    lambda: run_build(
                        language, command, str(folder), env=runtime_env(runtime, limits, None), limits=limits
                    )
                )
            finally:
                if old is None:
                    os.environ.pop("PATH", None)
                else:
                    os.environ["PATH"] = old
            assert result.ok, f"{language}: {command!r} failed in the build sandbox:\n{result.tail()}"
        done[language] = root
        return root

    return build


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_language_has_a_starter_with_a_build_and_check_line(language: str) -> None:
    folder = STARTERS / language
    assert folder.is_dir() and any(
        p.suffix in (".py", ".js", ".java", ".c", ".cpp", ".rs", ".go", ".cs") for p in folder.rglob("*")
    )
    build, runtime, _, command = readme(language)
    assert command and runtime
    assert (build is None) == (language in ("python", "node")), "compiled languages give their build command"


@pytest.mark.parametrize("language", LANGUAGES)
async def test_the_starter_passes_check_bot(built: Any, language: str) -> None:
    root = await trio.to_thread.run_sync(built, language)
    _, runtime, cwd, command = readme(language)
    limits = parse_limits(apply_runtime(runtime, None, None))
    report = await check_bot(
        command,
        cwd=str(root / cwd) if cwd else str(root),
        variants=VARIANTS,
        limits=limits,
        env=runtime_env(runtime, limits, None),
        runtime=runtime,
    )
    failed = [f"{c.name}: {c.detail} (fix: {c.fix})" for c in report.failed]
    assert report.ok, f"{language}: {failed or report.skipped}"
