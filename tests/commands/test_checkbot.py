"""``referee check-bot``: the samples pass; each purpose-built broken bot fails
with the right check and an actionable message. Real bot processes throughout.

Most of the check-bot runs the tests read are made by one module fixture, :func:`runs`, a few at
a time (tests/parallel_cli.py): each test asserts on its own run, as before, and tests that
ran the very same command share its run."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from referee.checkbot import CUSTOM_VARIANTS, PRESETS
from referee.cli import main
from referee.rules import get_variant, kind_of
from tests.parallel_cli import Run, check_bots, checked

# the module's check-bot runs are made once (one fixture, on one worker)
pytestmark = pytest.mark.xdist_group("checkbot")

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "tests" / "broken_bots"
PY = sys.executable


def check_bot(*argv: str) -> int:
    """Run ``referee check-bot ARGV...`` through the CLI entry point."""
    return main(["check-bot", *argv])


def sample_commands(tmp_path: Path) -> dict[str, list[str]]:
    """The sample bots' commands (the C one compiled into ``tmp_path``)."""
    exe = tmp_path / "c_bot"
    subprocess.run(["cc", "-O2", "-o", str(exe), str(ROOT / "sample_bots" / "c_bot.c")], check=True)
    node = shutil.which("node")
    if node is None:
        pytest.fail("node (Node.js) is not installed: the JavaScript sample cannot be checked; install Node.js")
    return {
        "random": [PY, str(ROOT / "sample_bots" / "random_bot.py")],
        "tracker": [PY, str(ROOT / "sample_bots" / "tracker_bot.py")],
        "js": [node, str(ROOT / "sample_bots" / "js_bot.js")],
        "c": [str(exe)],
    }


DAEMON_TAGS = {when: f"daemon-{uuid.uuid4().hex[:12]}" for when in ("start", "bye")}
RANDOM = [PY, str(ROOT / "sample_bots" / "random_bot.py")]


def broken_argv(bot: str) -> tuple[str, ...]:
    return ("--variant", "kwartet", "--", PY, str(BROKEN / bot))


def daemon_argv(when: str) -> tuple[str, ...]:
    bot = ROOT / "tests" / "hostile" / "bots" / "daemonizer.py"
    return ("--variant", "kwartet", "--", PY, str(bot), DAEMON_TAGS[when], when)


CIRCLES = ("--variant", "kwartet", "--", PY, str(ROOT / "tests" / "bots" / "looping_bot.py"))
CHICKENS_ONLY = ("--variant", "chickens", "--", *RANDOM)
JSON_SHELL = ("--json", "--variant", "authors", "--", " ".join(RANDOM))  # one word with spaces: a shell command


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    return sample_commands(tmp_path_factory.mktemp("samples"))


@pytest.fixture(scope="module")
def runs(samples: dict[str, list[str]]) -> dict[tuple[str, ...], Run]:
    """Every check-bot command line the tests read, each run once through ``referee.cli.main``
    (a few side by side)."""
    return check_bots(
        [
            *(("--", *command) for command in samples.values()),
            *(broken_argv(case[0]) for case in BROKEN_CASES),
            *(daemon_argv(when) for when in DAEMON_TAGS),
            CIRCLES,
            CHICKENS_ONLY,
            JSON_SHELL,
        ]
    )


def test_samples_pass_every_check(samples: dict[str, list[str]], runs: dict[tuple[str, ...], Run]) -> None:
    for label, command in samples.items():
        status, out = checked(runs, ("--", *command))
        assert status == 0, f"{label}:\n{out}"
        assert "FAIL" not in out
        for name in (
            "handshake",
            "probe: exits on bye",
            "game: kwartet",
            "game: chickens",
            "game: generations",
            "game: tens",
            "self-play",
            "per-game mode",
        ):
            assert f"PASS {name}" in out, (label, name, out)
        asking = sum(1 for v in [*PRESETS, *CUSTOM_VARIANTS] if kind_of(get_variant(v)).style == "ask")
        assert (
            f"PASS self-play: {2 * asking} tables with 2 or 3 copies of the bot in {asking} ask variants: "
            "every hand ended" in out
        )
        for name in PRESETS:  # every registered preset is played
            assert f"PASS game: {name}:" in out, (label, name, out)
        assert "is ready for a league" in out


BROKEN_CASES = [
    # bot, the check that must fail, words the message must contain
    ("debug_stdout.py", "probe: quiet until its turn", ["line 2 is not JSON", "thinking about turn 1", "stderr"]),
    ("wrong_id.py", "probe: legal reply with the turn's id", ["turn id 1 was answered with id 0", "echo the id"]),
    ("ignores_bye.py", "probe: exits on bye", ["still running 500 ms after bye", "exit as soon"]),
    ("illegal_asks.py", "game: kwartet", ["illegal", "you cannot ask yourself", "turn.targets"]),
    ("wrong_protocol.py", "handshake", ["protocol version 2", "protocol version 1", '"protocol": 1']),
    ("crash_midgame.py", "game: kwartet", ["crash", "during turn 7", "keep reading stdin"]),
    (
        "quits_on_error.py",
        "probe: keeps going after an error",
        ["exited (status 0) after an error message", "keep reading"],
    ),
]


@pytest.mark.parametrize("bot,check,words", BROKEN_CASES, ids=[c[0] for c in BROKEN_CASES])
def test_broken_bot_fails_with_the_right_message(
    bot: str, check: str, words: list[str], runs: dict[tuple[str, ...], Run]
) -> None:
    status, out = checked(runs, broken_argv(bot))
    assert status == 1, out
    lines = out.splitlines()
    failing = [i for i, line in enumerate(lines) if line.strip().startswith(f"FAIL {check}:")]
    assert failing, f"expected a failing {check!r} line:\n{out}"
    i = failing[0]
    text = lines[i] + "\n" + (lines[i + 1] if i + 1 < len(lines) else "")
    for word in words:
        assert word in text, f"{word!r} missing from:\n{text}"
    assert "fix:" in text
    assert re.search(r"^\d+ of \d+ checks? failed", out, re.M), out


@pytest.mark.parametrize("when", ["start", "bye"])
def test_a_bot_that_leaves_a_daemon_is_not_ready(when: str, runs: dict[tuple[str, ...], Run]) -> None:
    """A bot that daemonizes a process (at start-up, or when it reads bye) and
    exits on bye as it should: the sandbox counts what it left behind (then
    kills it), and check-bot fails the bye probe with a fix."""
    tag = DAEMON_TAGS[when]
    status, out = checked(runs, daemon_argv(when))
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and tag.encode() in _cmdline(p)]
    assert not left, f"the daemon survived check-bot: {left}"
    assert status == 1, out
    line = next((x for x in out.splitlines() if x.strip().startswith("FAIL probe: exits on bye:")), "")
    assert "but left 1 process running" in line and "python" in line, out
    assert "never daemonize" in out and "is ready for a league" not in out


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


def test_a_bot_that_asks_in_circles_fails_self_play(runs: dict[tuple[str, ...], Run]) -> None:
    """Issue 10: the old WRITING-A-BOT example passed every check, yet two copies never end a kwartet hand."""
    status, out = checked(runs, CIRCLES)
    assert status == 1, out
    assert "PASS game: kwartet" in out and "PASS per-game mode" in out  # every other check passes
    lines = out.splitlines()
    i = next(i for i, line in enumerate(lines) if line.strip().startswith("FAIL self-play:"))
    assert "kwartet, 2 copies and 1 instant bot, seed 1: the hand stalled: 100 asks in a row moved no card" in lines[i]
    assert "(and 1 more table)" in lines[i]  # 3 copies stall too
    assert "fix: remember misses; vary target or card" in lines[i + 1]
    assert "1 of 9 checks failed" in out


def test_self_play_reports_an_aborted_hand(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import referee.checkbot.games

    monkeypatch.setattr(referee.checkbot.games, "SELF_PLAY_MAX_DECISIONS", 3)  # no kwartet hand ends that fast
    status = check_bot("--variant", "kwartet", "--", PY, str(ROOT / "sample_bots" / "random_bot.py"))
    out = capsys.readouterr().out
    assert status == 1, out
    assert (
        "FAIL self-play: kwartet, 2 copies and 1 instant bot, seed 1: the hand was aborted: no end after 3 "
        "decisions" in out
    ), out
    assert "fix: remember misses; vary target or card" in out


def test_self_play_is_skipped_without_an_ask_variant_or_after_failed_games(runs: dict[tuple[str, ...], Run]) -> None:
    status, out = checked(runs, CHICKENS_ONLY)
    assert status == 0 and "self-play" not in out, out  # chickens has no asks: nothing to check
    status, out = checked(runs, broken_argv("illegal_asks.py"))
    assert status == 1 and "FAIL game: kwartet" in out
    assert "SKIP self-play: not run: fix the failed games above first" in out, out


def test_json_report_and_shell_string(runs: dict[tuple[str, ...], Run]) -> None:
    # one argument with spaces is a shell command line
    status, report = runs[JSON_SHELL].status, json.loads(runs[JSON_SHELL].out)
    assert status == 0 and report["ok"] is True
    assert report["bot"] == "RandomBot" and report["version"] == "1.0"
    names = [c["name"] for c in report["checks"]]
    assert names[0] == "handshake" and "game: authors" in names and "per-game mode" in names


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check_bot() == 2
    assert "give the bot's command after --" in capsys.readouterr().err
    assert check_bot("--move-ms", "0", "--", "true") == 2
    assert "--move-ms must be a positive" in capsys.readouterr().err
    assert check_bot("--variant", "snap", "--", "true") == 2
    assert "unknown variant 'snap'" in capsys.readouterr().err
    missing = tmp_path / "no_such_bot"
    assert check_bot("--", str(missing)) == 1
    out = capsys.readouterr().out
    assert "FAIL handshake" in out and "not found" in out
    assert "not run until the handshake works" in out
