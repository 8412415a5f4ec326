"""``referee check-bot``: put a bot through everything a league will ask of it.

:func:`check_bot` runs, in order:

1. **handshake** - a raw ``hello``; the bot must answer with protocol 1 within
   the startup limit, and nothing but that line.
2. **probes** on the same process, with hand-made but valid situations from the
   real rules engine:
   * *quiet*: after ``start`` and ``event`` lines (with an unknown extra field,
     which bots must ignore) the bot writes nothing until its ``turn``;
   * *reply*: the answer to a ``turn`` is one legal reply echoing its ``id``;
   * *after error*: after an ``error`` message it answers the next turn, with
     the new id;
   * *current id*: after a timeout ``error`` and a new ``turn``, its last reply
     carries the new id (never a made-up or old one);
   * *bye*: it exits within the grace time after ``bye`` (stdin left open), and
     not only at end of input.
3. **games in session mode** - real games through the runtime's ``play_game``
   (every variant, presets and two custom ask variants, at several table sizes,
   the bot in a different seat each game, the other seats played by the SDK's
   instant random bot), all in one bot process.
4. **self-play** - in every ask variant checked, two copies of the bot at one
   table (with instant bots filling the variant's smallest table) and three
   copies: every hand must end by the rules. A hand that stalls (the stalemate
   rule: ``stall`` asks in a row moved no card) or is aborted (no end after
   :data:`SELF_PLAY_MAX_DECISIONS` decisions) fails: copies of one bot that
   ask each other the same questions in circles would wipe out games in a
   league.
5. **per-game mode** - a fresh process for each of a few games, closed with
   ``bye`` after each.

Every check gives a pass/fail line; every failure carries a fix in words a bot
author can act on. Errors: a bot that cannot be started at all fails the
handshake check (the report says why); the rest is then not run. Bad options
raise :class:`~referee.errors.UserError`. Cancellation (Ctrl-C) kills every
process this module started: each one runs in its own process group and is
reaped in a shielded scope.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import trio

from referee.errors import UserError
from referee.rules import get_variant

from .fixes import FIXES, fix_for
from .games import CUSTOM_VARIANTS, PRESETS, SELF_PLAY_FIX, SELF_PLAY_MAX_DECISIONS, SELF_PLAY_SEED, GameOptions, _games
from .probes import PROBES, RawBot, _handshake, _ProbeFailure, _probes, decode_probe_line
from .report import Check, Report, plural

__all__ = [
    "CUSTOM_VARIANTS",
    "FIXES",
    "PRESETS",
    "PROBES",
    "SELF_PLAY_FIX",
    "SELF_PLAY_MAX_DECISIONS",
    "SELF_PLAY_SEED",
    "Check",
    "RawBot",
    "Report",
    "check_bot",
    "default_name",
    "decode_probe_line",
    "fix_for",
    "missing_script",
    "parse_command",
    "plural",
]


def parse_command(command: Sequence[str]) -> list[str] | str:
    """The bot command from the CLI: several words are an argv list; one word with
    spaces is a shell string. Raises :class:`UserError` when empty."""
    words = [w for w in command]
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise UserError("give the bot's command after --, e.g. referee check-bot -- python3 my_bot.py")
    if len(words) == 1 and " " in words[0].strip():
        return words[0]
    return words


async def check_bot(
    command: list[str] | str,
    *,
    name: str | None = None,
    cwd: str | None = None,
    move_ms: int = 1000,
    startup_ms: int = 10000,
    grace_ms: int = 500,
    variants: Sequence[Any] | None = None,
    log_dir: Path | None = None,
    progress: Callable[[str], None] = lambda s: None,
    limits: Any = None,
    env: dict[str, str] | None = None,
    runtime: str | None = None,
    bank_ms: int | None = None,
    clock_mode: Literal["wall", "cpu"] = "wall",
    data: tuple[str, ...] = (),
    retries: int = 0,
    max_line: int = 65536,
    max_decisions: int | None = None,
) -> Report:
    """Run every check on the bot started by ``command``; return the :class:`Report`.

    ``limits`` and ``env``: the bot's :class:`~referee.runtime.limits.ResourceLimits`
    and environment variables (None: the league's defaults); ``runtime``: the
    language preset they came from (:mod:`referee.runtime.runtimes`), for the fixes;
    ``bank_ms`` and ``clock_mode`` ("wall" or "cpu") the games' clock, as in a league;
    ``data``: folders the bot may read besides its own (``--data``); ``retries``,
    ``max_line`` and ``max_decisions`` the games' fault policy, as a league's
    (:class:`~referee.runtime.FaultPolicy`; ``max_line`` also bounds the probes' lines,
    ``max_decisions`` None: the variant's default, self-play's
    :data:`SELF_PLAY_MAX_DECISIONS`).
    ``name``: the bot's name in its hello and the games' seats (None: :func:`default_name`).
    Never raises for a misbehaving bot (that is what the report is for);
    raises :class:`UserError` for a bad ``cwd`` or bad variants.
    """
    if cwd is not None and not await trio.Path(cwd).is_dir():
        raise UserError(f"--cwd {cwd!r} is not a directory")
    name = name or default_name(command)
    chosen: list[str | dict[str, Any]] = list(variants) if variants else [*PRESETS, *CUSTOM_VARIANTS]
    for v in chosen:
        get_variant(v)  # RulesError for an unknown name
    missing = missing_script(command, cwd)
    if missing is not None:
        raise UserError(missing)
    opts = GameOptions(
        command,
        name,
        cwd,
        move_ms,
        startup_ms,
        grace_ms,
        limits,
        env,
        bank_ms,
        clock_mode,
        data,
        retries,
        max_line,
        max_decisions,
    )
    report = Report()
    t0 = time.monotonic()
    await _handshake_and_probes(opts, runtime, report, progress)
    if report.bot_name is not None:
        await _games(opts, report, chosen, log_dir, progress)
    else:
        why = "not run until the handshake works (every other check needs a bot that answers hello)"
        for probe in PROBES:
            report.skip(probe, why)
        for v in chosen:
            report.skip(f"game: {get_variant(v).name}", why)
        report.skip("self-play", why)
        report.skip("per-game mode", why)
    report.seconds = time.monotonic() - t0
    return report


async def _handshake_and_probes(
    opts: GameOptions, runtime: str | None, report: Report, progress: Callable[[str], None]
) -> None:
    """The handshake, then (if it passed) the misbehaviour probes, on one raw process of the bot."""
    async with trio.open_nursery() as nursery:
        bot: RawBot | None = None
        try:
            progress("handshake")
            try:
                bot = await RawBot.open(
                    opts.command,
                    opts.cwd,
                    nursery,
                    opts.name,
                    limits=opts.limits,
                    env=opts.env,
                    runtime=runtime,
                    data=opts.data,
                    max_line=opts.max_line,
                )
            except _ProbeFailure as exc:
                report.add("handshake", False, exc.detail, exc.fix)
            else:
                if await _handshake(bot, report, opts.startup_ms / 1000, opts.name):
                    progress("probes")
                    await _probes(
                        bot, report, max(opts.move_ms, 1000) / 1000, opts.grace_ms / 1000, opts.name, opts.clock()
                    )
        finally:
            if bot is not None:
                await bot.kill()
            nursery.cancel_scope.cancel()


#: programs that run a bot named by their last argument (a class, an assembly, a package)
_LAUNCHERS = frozenset({"java", "dotnet", "mono", "go", "cargo", "npx", "deno", "bun"})


def default_name(command: list[str] | str) -> str:
    """The bot's name when ``--name`` is not given: the name of its script or program
    without folder and suffix (``python3 bots/tracker_bot.py``: ``tracker_bot``), as a
    league's entries are usually named, never a word that says check-bot ("bot" if
    the command names nothing usable)."""
    words = command.split() if isinstance(command, str) else list(command)
    kind = _interpreter(words[0]) if words else None
    picks = [w for w in words[1:] if not w.startswith("-")] if kind is not None else words[:1]
    if words and os.path.basename(words[0]) in _LAUNCHERS:  # java -cp classes Bot: the class
        picks = [w for w in words[1:] if not w.startswith("-")][-1:] + picks
    for word in [*(w for w in words if w.endswith(SCRIPT_SUFFIXES)), *picks]:
        stem = os.path.splitext(os.path.basename(word.rstrip("/")))[0]
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-.")
        if stem:
            return stem
    return "bot"


#: interpreters whose first non-option argument is the script they open, with
#: their options that take a value (the next word) and those that mean "no script file"
_INTERPRETERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "python": (
        frozenset({"-W", "-X", "--check-hash-based-pycs"}),
        frozenset({"-m", "-c", "-V", "--version", "-h", "--help"}),
    ),
    "node": (
        frozenset(
            {
                "-r",
                "--require",
                "--import",
                "--loader",
                "--experimental-loader",
                "--conditions",
                "-C",
                "--env-file",
                "--input-type",
                "--stack-size",
                "--max-old-space-size",
                "--title",
            }
        ),
        frozenset({"-e", "--eval", "-p", "--print", "-i", "--interactive", "-v", "--version", "-h", "--help"}),
    ),
    "ruby": (frozenset({"-r", "-I", "-C", "-E", "--encoding"}), frozenset({"-e", "-v", "--version", "-h", "--help"})),
    "perl": (frozenset({"-I", "-M", "-m"}), frozenset({"-e", "-E", "-v", "-V", "-h"})),
    "sh": (
        frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}),
        frozenset({"-c", "-s", "-i", "--version", "--help"}),
    ),
}
_INTERPRETER_NAMES = re.compile(
    r"^(?:(python|pypy)[0-9.]*|(node|nodejs)|(ruby)[0-9.]*|(perl)[0-9.]*|"
    r"(sh|bash|dash|zsh|ksh))$"
)
#: option letters that, inside a cluster of short options (perl -ne, bash -lc), mean "code, not a file"
_CLUSTER_CODE = {"ruby": "e", "perl": "eE", "sh": "c"}
#: suffixes of script files (an argument ending in one names a file to open)
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".rb", ".pl", ".sh", ".bash", ".php", ".lua", ".ts", ".jar")


def _interpreter(word: str) -> str | None:
    m = _INTERPRETER_NAMES.match(os.path.basename(word))
    if m is None:
        return None
    python, node, ruby, perl, shell = m.groups()
    return "python" if python else "node" if node else "ruby" if ruby else "perl" if perl else "sh"


def missing_script(command: list[str] | str, cwd: str | None) -> str | None:
    """A message (the path as the author typed it) if ``command`` names a script
    file that does not exist, else None. A script is the first non-option
    argument after a known interpreter (python, node, ruby, perl, sh/bash...),
    or any other non-option argument ending in a script suffix (.py, .js, ...).
    Paths are relative to ``cwd`` (the current directory if None). Shell strings
    (one word with spaces) are not looked into."""
    if isinstance(command, str) or not command:
        return None
    base = os.path.abspath(cwd) if cwd else os.getcwd()
    where = f"relative to --cwd {base}" if cwd else f"relative to {base}"
    candidates: list[str] = []
    kind = _interpreter(command[0])
    rest = list(command[1:])
    if kind is not None:
        takes_value, no_script = _INTERPRETERS[kind]
        i = 0
        while i < len(rest):
            word = rest[i]
            if word == "--":
                if i + 1 < len(rest):
                    candidates.append(rest[i + 1])
                break
            if (
                word in no_script
                or (kind == "python" and word[:2] in ("-c", "-m"))
                or (
                    kind in _CLUSTER_CODE
                    and word[:1] == "-"
                    and word[1:2] != "-"
                    and any(ch in _CLUSTER_CODE[kind] for ch in word[1:])
                )
            ):
                break  # -c CODE, -m MODULE, -e CODE, perl -le, bash -lc...: no script file
            if word in takes_value:
                i += 2
                continue
            if word.startswith("-") or word.startswith("+"):
                i += 1
                continue
            candidates.append(word)
            break
    candidates += [w for w in rest if not w.startswith("-") and w.endswith(SCRIPT_SUFFIXES) and w not in candidates]
    for word in candidates:
        if word and not os.path.exists(os.path.join(base, os.path.expanduser(word))):
            return f"{word} not found ({where}): check the path to the bot's script"
    return None
