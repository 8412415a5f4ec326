"""``referee.runtime.entry.run``: Ctrl-C is never lost, wherever the signal lands.

The defect it fixes: a SIGINT that arrived while the parent ran an at-fork hook (``logging``'s lock
release after the fork of a bot spawn) became a ``KeyboardInterrupt`` raised inside the hook, which
Python reports as "Exception ignored" and drops; ``referee check-bot`` then waited for ever. The
script below puts the signal exactly there, every time: its at-fork hook sends SIGINT to its own
process and sleeps, so the handler runs inside the hook."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, time
    import trio
    from referee.runtime.entry import run

    def hook():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the SIGINT handler runs here, inside the hook

    os.register_at_fork(after_in_parent=hook)

    async def main():
        await trio.sleep(0.01)
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        print("forked", flush=True)
        await trio.sleep(60)  # a command waiting on its bots

    try:
        (run if sys.argv[1] == "entry" else trio.run)(main)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
    """
)


def _start(how: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, how], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )


def test_ctrl_c_inside_an_at_fork_hook_stops_the_run() -> None:
    proc = _start("entry")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert out.split() == ["forked", "interrupted"]
    assert "Exception ignored" not in err


def test_plain_trio_run_loses_that_ctrl_c() -> None:
    """The premise of the test above: with trio's default delivery the same signal is dropped
    and the run goes on waiting (killed here after two seconds)."""
    proc = _start("trio")
    try:
        out, err = proc.communicate(timeout=2)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    assert proc.returncode != 130
    assert "forked" in out and "interrupted" not in out
    assert "Exception ignored" in err and "KeyboardInterrupt" in err


def test_every_entry_into_trio_goes_through_run() -> None:
    """No module of the package calls ``trio.run`` itself (``entry.py`` aside)."""
    offenders = []
    for path in sorted((ROOT / "referee").rglob("*.py")):
        if path == ROOT / "referee" / "runtime" / "entry.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            f = node.func if isinstance(node, ast.Call) else None
            if isinstance(f, ast.Attribute) and f.attr == "run" and ast.unparse(f.value) == "trio":
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, "call referee.runtime.entry.run instead of trio.run: " + ", ".join(offenders)
