"""``referee check-bot``: every FAIL names the real problem with its own fix
(not a generic one), knock-on effects are not reported as the cause, the
"after an error" probe blames error handling only when the error message was
the cause, and the summary counts what it prints. Real bot processes throughout
(tests/bots/ misbehave on their second turn, tests/broken_bots/ each have one
mistake).

The check-bot runs the tests read are made by one module fixture, :func:`runs`, a few at a time
(tests/parallel_cli.py): each test asserts on its own run, as before, and tests that ran
the very same command share its run."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from referee.checkbot import missing_script
from referee.cli import main
from referee.rules import VARIANTS
from tests.parallel_cli import Run, check_bots, checked

# the module's check-bot runs are made once (one fixture, on one worker)
pytestmark = pytest.mark.xdist_group("checkbot-fixes")

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"
BROKEN = ROOT / "tests" / "broken_bots"
PY = sys.executable


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["check-bot", *argv])
    cap = capsys.readouterr()
    return status, cap.out, cap.err


def argv_of(bot: Path, *options: str) -> tuple[str, ...]:
    return (*options, "--", PY, str(bot))


def all_argvs() -> list[tuple[str, ...]]:
    """Every check-bot command line the tests below read from :func:`runs`."""
    return [
        *(argv_of(BOTS / bot, "--variant", variant) for bot, variant, _, _ in SECOND_TURN_CASES),
        *(second_turn_argv(bot) for bot in SECOND_TURN_BOTS),
        argv_of(BOTS / "nonjson_bot.py", "--variant", "authors"),
        argv_of(BOTS / "badutf8_bot.py", "--variant", "kwartet"),
        argv_of(BROKEN / "quits_on_error.py", "--variant", "kwartet"),
        argv_of(BROKEN / "debug_stdout.py"),
        *(argv_of(bot) for bot in HANDSHAKE_BOTS),
        *COUNTS_ARGVS,
    ]


@pytest.fixture(scope="module")
def runs() -> dict[tuple[str, ...], Run]:
    """Each of :func:`all_argvs` run once through ``referee.cli.main`` (a few side by side)."""
    return check_bots(all_argvs())


def entry(out: str, check: str) -> tuple[str, str]:
    """(the status line of ``check``, its fix line or "")."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"\s*(PASS|FAIL) {re.escape(check)}:", line):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            return line, nxt if nxt.strip().startswith("fix:") else ""
    raise AssertionError(f"no line for {check!r}:\n{out}")


def assert_counts_match(out: str) -> None:
    """The summary's failed count is the number of FAIL lines; its SKIP count the skipped checks."""
    fails = len(re.findall(r"^\s+FAIL ", out, re.M))
    m = re.search(r"^(\d+) of (\d+) checks? failed(?:, (\d+) not run \(SKIP\))?", out, re.M)
    assert m, out
    assert int(m.group(1)) == fails, out
    passes = len(re.findall(r"^\s+PASS ", out, re.M))
    assert int(m.group(2)) == fails + passes, out
    skip_lines = re.findall(r"^\s+SKIP (?:(\d+) checks \(|(.+?): )", out, re.M)
    skipped = sum(int(n) if n else 1 for n, _ in skip_lines)
    assert int(m.group(3) or 0) == skipped, out


# --- the fix addresses the real problem ------------------------------------------------------------

SECOND_TURN_CASES = [
    # bot, variant, words the failing line must hold, words its fix must hold
    (
        "wrongshape_bot.py",
        "kwartet",
        ["field `target` expected int, got str"],
        ["`target` as an integer", "not as a string"],
    ),
    ("wrongshape_bot.py", "chickens", ["field `card` expected str, got int"], ["`card` as a string"]),
    (
        "unknowntype_bot.py",
        "kwartet",
        ["unknown message type 'pass'"],
        ["'pass' is not a message type", '"decide": "ask"', 'reply with "type": "ask"'],
    ),
    ("unknowntype_bot.py", "chickens", ["unknown message type 'pass'"], ['"decide": "play"']),
    (
        "wrongtype_bot.py",
        "kwartet",
        ["asks for a `ask` reply, got `take`"],
        ['the message type the turn\'s "decide" names', '"decide": "ask"', 'reply {"type": "ask", ...}'],
    ),
    ("badutf8_bot.py", "kwartet", ["not valid UTF-8 (byte 0xff"], ["UTF-8"]),
]


@pytest.mark.parametrize(
    "bot,variant,words,fix_words", SECOND_TURN_CASES, ids=[f"{c[0]}-{c[1]}" for c in SECOND_TURN_CASES]
)
def test_the_fix_names_the_real_problem(
    bot: str, variant: str, words: list[str], fix_words: list[str], runs: dict[tuple[str, ...], Run]
) -> None:
    status, out = checked(runs, argv_of(BOTS / bot, "--variant", variant))
    assert status == 1, out
    checks = (
        [f"game: {variant}", "per-game mode"]
        if variant != "kwartet"
        else ["probe: legal reply with the turn's id", "game: kwartet", "per-game mode"]
    )
    for check in checks:
        line, fix = entry(out, check)
        if check == "per-game mode" and variant != "kwartet":
            continue  # per-game mode plays kwartet, authors and chickens: checked with kwartet
        assert line.strip().startswith("FAIL"), out
        for word in words:
            assert word in line, (word, line)
        for word in fix_words:
            assert word in fix, (word, fix)
        # not the generic advice for other problems
        assert "debug output" not in fix and "answer with something from turn.options" not in fix, fix
    assert_counts_match(out)


# --- the after-error probe blames error handling only for what the error message caused -----------


SECOND_TURN_BOTS = [
    "badutf8_bot.py",
    "illegal_bot.py",
    "nonjson_bot.py",
    "staleid_bot.py",
    "wrongshape_bot.py",
    "wrongtype_bot.py",
    "unknowntype_bot.py",
    "silent_bot.py",
]


def second_turn_argv(bot: str) -> tuple[str, ...]:
    # the silent bot times out at its second turn of every process: the games' clock is shorter
    # for it (the probes wait 1,000 ms for a reply whatever --move-ms says: what is checked here)
    clock = ("--move-ms", "300") if bot == "silent_bot.py" else ()
    return argv_of(BOTS / bot, "--variant", "authors", *clock)


@pytest.mark.parametrize("bot", SECOND_TURN_BOTS)
def test_a_second_turn_mistake_is_not_blamed_on_error_handling(bot: str, runs: dict[tuple[str, ...], Run]) -> None:
    status, out = checked(runs, second_turn_argv(bot))
    assert status == 1, out
    line, fix = entry(out, "probe: keeps going after an error")
    assert line.strip().startswith("PASS"), out
    assert "an error message needs no answer" not in out, out
    # the mistake itself is reported, under the reply probe, with the turn it happened on
    line, fix = entry(out, "probe: legal reply with the turn's id")
    assert line.strip().startswith("FAIL") and "turn id 2" in line and fix, out


def test_nonjson_second_turn_is_reported_as_debug_output(runs: dict[tuple[str, ...], Run]) -> None:
    out = runs[argv_of(BOTS / "nonjson_bot.py", "--variant", "authors")].out
    line, fix = entry(out, "probe: legal reply with the turn's id")
    assert "line 3 is not JSON: 'debug x=3'" in line and "stderr" in fix


def test_badutf8_probe_and_games_give_the_same_reason(runs: dict[tuple[str, ...], Run]) -> None:
    out = runs[argv_of(BOTS / "badutf8_bot.py", "--variant", "kwartet")].out
    probe, _ = entry(out, "probe: legal reply with the turn's id")
    game, _ = entry(out, "game: kwartet")
    reason = "line 3 is not valid UTF-8 (byte 0xff at offset 40)"
    assert reason in probe and reason in game, out
    assert "is not JSON" not in out


def test_a_bot_that_quits_on_an_error_is_still_blamed(runs: dict[tuple[str, ...], Run]) -> None:
    out = runs[argv_of(BROKEN / "quits_on_error.py", "--variant", "kwartet")].out
    line, fix = entry(out, "probe: keeps going after an error")
    assert line.strip().startswith("FAIL") and "exited (status 0) after an error message" in line, out
    assert fix.strip().startswith("fix: an error message needs no answer"), fix
    assert re.search(
        r"SKIP 2 checks \(probe: answers only with the current id, probe: exits on bye\): "
        r"not run: the bot is no longer running",
        out,
    ), out
    assert_counts_match(out)


# --- knock-on effects ------------------------------------------------------------------------------


def test_debug_stdout_is_reported_as_such_not_as_stale_ids(runs: dict[tuple[str, ...], Run]) -> None:
    status, out = checked(runs, argv_of(BROKEN / "debug_stdout.py"))
    assert status == 1, out
    for check in ("game: kwartet", "game: authors", "game: chickens", "game: tens", "per-game mode"):
        line, fix = entry(out, check)
        assert "is not JSON: 'thinking about turn" in line, out
        assert "send debug output to stderr" in fix
    assert "stale" not in out and "echo the id" not in out, out
    # the probes that could not run are named, with the reason
    assert re.search(
        r"SKIP 4 checks \(probe: legal reply with the turn's id, probe: keeps going after an error, "
        r"probe: answers only with the current id, probe: exits on bye\): not run: the bot's first "
        r"reply went wrong",
        out,
    ), out
    assert "SKIP self-play: not run: fix the failed games above first" in out, out
    assert "5 not run (SKIP)" in out
    assert_counts_match(out)


# --- output slips ----------------------------------------------------------------------------------


HANDSHAKE_BOTS = [BROKEN / "wrong_protocol.py", BOTS / "oldproto_bot.py"]


@pytest.mark.parametrize("bot", HANDSHAKE_BOTS, ids=lambda p: p.name)
def test_a_failed_handshake_counts_what_it_prints(bot: Path, runs: dict[tuple[str, ...], Run]) -> None:
    status, out = checked(runs, argv_of(bot))
    assert status == 1, out
    assert len(re.findall(r"^\s+FAIL ", out, re.M)) == 1, out
    # every other check is skipped: the probes, a game per registered variant, self-play, per-game mode
    skipped = re.search(r"SKIP (\d+) checks \((.*)\): not run until the handshake works", out)
    assert skipped is not None, out
    assert int(skipped[1]) == len(skipped[2].split(", ")), out
    assert {f"game: {v}" for v in VARIANTS} <= set(skipped[2].split(", ")), out
    assert f"1 of 1 check failed, {skipped[1]} not run (SKIP)" in out, out
    assert (
        f"SKIP {skipped[1]} checks (probe: quiet until its turn" in out
        and "self-play, per-game mode): not run until the handshake works" in out
    ), out
    assert_counts_match(out)


COUNTS_ARGVS = [
    argv_of(BOTS / "illegal_bot.py", "--variant", "happy-families", "--variant", "authors"),
    argv_of(ROOT / "sample_bots" / "random_bot.py", "--variant", "authors"),
]


def test_counts_are_singular_or_plural(runs: dict[tuple[str, ...], Run]) -> None:
    out = runs[COUNTS_ARGVS[0]].out
    assert "(and 1 more game)" in out, out  # happy-families: 4 and 6 seats (2 seats is its lowest)
    assert "(and 2 more games)" in out, out
    assert "1 more games" not in out
    status, out = checked(runs, COUNTS_ARGVS[1])
    assert status == 0, out
    assert "PASS per-game mode: 3 games, a fresh process for each" in out


def test_no_command_prints_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys)
    assert status == 2
    assert err.splitlines()[0].startswith("error: give the bot's command after --")
    assert "usage: referee check-bot [OPTIONS] -- COMMAND [ARG...]" in err
    status, out, err = run(capsys, "--")
    assert status == 2 and "usage: referee check-bot" in err


# --- a missing script is named as the author typed it ---------------------------------------------


def test_a_missing_script_is_an_error_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, "--", "python3", "nonexist.py")
    assert status == 2 and out == ""
    assert err.strip() == f"error: nonexist.py not found (relative to {tmp_path}): check the path to the bot's script"
    assert "referee-bot-" not in err
    status, out, err = run(capsys, "--cwd", str(ROOT), "--", PY, "-u", "bots/nonexist.py")
    assert status == 2 and f"error: bots/nonexist.py not found (relative to --cwd {ROOT})" in err


def test_what_counts_as_a_script(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("")
    base = str(tmp_path)
    # scripts: the first non-option argument of an interpreter, or a word with a script suffix
    for command in (
        ["python3", "x.py"],
        ["python", "-u", "-X", "dev", "x"],
        ["/usr/bin/node", "x.mjs"],
        ["ruby", "x"],
        ["perl", "-w", "x"],
        ["bash", "x"],
        ["sh", "--", "x"],
        ["./run", "x.rb"],
    ):
        assert missing_script(command, base) is not None, command
    # not scripts: code and modules, option values, words without a script suffix, files that exist
    for command in (
        ["python3", "-m", "mybot"],
        ["python3", "-c", "print(1)"],
        ["node", "-e", "1"],
        ["perl", "-le", "print 1"],
        ["bash", "-lc", "echo hi"],
        ["./run", "--level", "3", "x"],
        ["python3", "bot.py"],
        ["python3", "-W", "ignore", "bot.py"],
        "python3 nope.py",
        ["java", "-cp", "classes", "Bot"],
    ):
        assert missing_script(command, base) is None, command
