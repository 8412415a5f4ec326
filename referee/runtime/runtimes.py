"""Language runtime presets, and what a bot's death says about its cause.

A bot's ``runtime = "java"`` (league config) or ``--runtime java`` (``play``,
``duel``, ``check-bot``) picks a :class:`Runtime`: the limits and the
environment variables the language's runtime needs to start and to run within
the bot's memory limit. The preset sits between the league's ``[limits]`` and
the bot's own ``limits`` (key by key: the bot's win), and its environment
variables under the bot's ``env``. The variables are computed from the bot's
final memory limit (``address_space``), so a preset keeps fitting when the
limit is raised or lowered.

Why the JVM needs one: at the default 2 GiB address-space limit (RLIMIT_AS),
a JVM reserves 1 GiB of compressed class space, 240 MiB of code cache and a
heap of a quarter of the machine's memory before it runs a line, and dies with
``Could not allocate compressed class space``; ``javac`` (itself a JVM) fails
the same way. The preset sizes those reservations to the limit instead.

:func:`explain_death` turns what a dead bot left (exit status, stdout, stderr)
into one sentence of what happened and a fix naming the likely cause; it is
the one definition ``referee check-bot`` and the league's start check use.

Pure code: no I/O. Errors: :func:`get_runtime` raises :class:`UnknownRuntime`
(a ``ValueError``) naming the presets.
"""

from __future__ import annotations

import difflib
import os
import re
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .limits import MiB, ResourceLimits


class UnknownRuntime(ValueError):
    """A runtime name that is not a preset (the message names the presets)."""


@dataclass(frozen=True)
class Runtime:
    """One language runtime's preset.

    ``limits``: a limits table (:func:`referee.runtime.limits.parse_limits`
    keys) applied on top of the league's and under the bot's; ``env``: the
    environment variables for a bot with the given final limits; ``sets``: what
    it does, in one line (``--help``, docs/WRITING-A-BOT.md); ``commands``: the
    program names of this runtime (to guess it from a bot's command)."""

    name: str
    language: str
    sets: str
    commands: tuple[str, ...]
    limits: Mapping[str, Any]
    env: Callable[[ResourceLimits], dict[str, str]]


def _mib(limits: ResourceLimits, share: float, default: int) -> int:
    """``share`` of the memory limit in MiB (``default`` MiB without a limit), at least 16."""
    if limits.address_space is None:
        return default
    return max(16, int(limits.address_space * share) // MiB)


def _java_env(limits: ResourceLimits) -> dict[str, str]:
    heap = _mib(limits, 0.25, 1024)
    # JAVA_TOOL_OPTIONS reaches every JVM: java, javac, jar, and build tools run through them
    return {
        "JAVA_TOOL_OPTIONS": f"-XX:CompressedClassSpaceSize=64m -XX:ReservedCodeCacheSize=64m -Xss1m "
        f"-Xmx{heap}m -XX:MaxRAM={2 * heap}m -XX:+UseSerialGC -XX:TieredStopAtLevel=1"
    }


def _node_env(limits: ResourceLimits) -> dict[str, str]:
    # V8 collects garbage before the heap reaches the limit, and says "JavaScript heap out of memory" at it
    return {"NODE_OPTIONS": f"--max-old-space-size={_mib(limits, 0.5, 4096)}"}


def _go_env(limits: ResourceLimits) -> dict[str, str]:
    # the Go collector works harder as the heap nears GOMEMLIMIT (go 1.19+) instead of growing past the limit;
    # TMPDIR: the sandbox's is the bot's folder, and the go command ignores a go.mod in the temporary folder
    # (under bubblewrap /tmp is the bot's own)
    return {
        "GOMEMLIMIT": f"{_mib(limits, 0.6, 4096)}MiB",
        "GOFLAGS": "-mod=mod",
        "GOTOOLCHAIN": "local",
        "TMPDIR": "/tmp",
    }


def _csharp_env(limits: ResourceLimits) -> dict[str, str]:
    heap = _mib(limits, 0.5, 4096)
    return {
        "MONO_GC_PARAMS": f"max-heap-size={heap}m",  # mono
        # dotnet: a hard heap limit makes the GC reserve that much instead of 256 GiB of address space
        "DOTNET_GCHeapHardLimit": hex(heap * MiB),
        "DOTNET_GCgen0size": hex(32 * MiB),
        "DOTNET_CLI_TELEMETRY_OPTOUT": "1",
        "DOTNET_NOLOGO": "1",
    }


def _python_env(limits: ResourceLimits) -> dict[str, str]:
    return {"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def _none(limits: ResourceLimits) -> dict[str, str]:
    return {}


RUNTIMES: dict[str, Runtime] = {
    r.name: r
    for r in (
        Runtime(
            "python",
            "Python",
            "PYTHONUNBUFFERED=1 (every print reaches the referee at once)",
            ("python", "python3", "pypy", "pypy3"),
            {},
            _python_env,
        ),
        Runtime(
            "node",
            "JavaScript (Node.js)",
            "NODE_OPTIONS=--max-old-space-size=(half the memory limit)",
            ("node", "nodejs"),
            {},
            _node_env,
        ),
        Runtime(
            "java",
            "Java (and other JVM languages)",
            "JAVA_TOOL_OPTIONS sizing the JVM's reservations to the memory limit: compressed class space "
            "and code cache 64 MiB, 1 MiB thread stacks, heap (-Xmx) a quarter of the limit, serial GC, "
            "fast startup (C1 only); applies to java and javac alike",
            ("java", "javac", "kotlin", "scala", "jar"),
            {"build_seconds": 600},
            _java_env,
        ),
        Runtime("c", "C", "nothing: a C program needs no runtime", ("cc", "gcc", "clang"), {}, _none),
        Runtime("cpp", "C++", "nothing: a C++ program needs no runtime", ("c++", "g++", "clang++"), {}, _none),
        Runtime("rust", "Rust", "nothing: a Rust program needs no runtime", ("cargo", "rustc"), {}, _none),
        Runtime(
            "go",
            "Go",
            "GOMEMLIMIT=(60% of the memory limit), GOFLAGS=-mod=mod, GOTOOLCHAIN=local (builds offline), "
            "TMPDIR=/tmp (the go command ignores a go.mod in its temporary folder, which is otherwise the bot's)",
            ("go",),
            {},
            _go_env,
        ),
        Runtime(
            "csharp",
            "C# (mono or dotnet)",
            "MONO_GC_PARAMS=max-heap-size and DOTNET_GCHeapHardLimit at half the memory limit (dotnet "
            "otherwise reserves 256 GiB of address space and cannot start)",
            ("mono", "dotnet", "mcs", "csc"),
            {},
            _csharp_env,
        ),
    )
}

#: other names people type
ALIASES = {
    "py": "python",
    "python3": "python",
    "js": "node",
    "javascript": "node",
    "nodejs": "node",
    "jvm": "java",
    "kotlin": "java",
    "c++": "cpp",
    "cxx": "cpp",
    "golang": "go",
    "cs": "csharp",
    "c#": "csharp",
    "dotnet": "csharp",
    "mono": "csharp",
}


def get_runtime(name: str) -> Runtime:
    """The preset called ``name`` (or an alias: js, c++, c#, golang...).
    Raises :class:`UnknownRuntime` naming the presets (and the closest one)."""
    key = ALIASES.get(name.strip().lower(), name.strip().lower())
    if key in RUNTIMES:
        return RUNTIMES[key]
    close = difflib.get_close_matches(key, [*RUNTIMES, *ALIASES], n=1, cutoff=0.6)
    hint = f" (did you mean '{ALIASES.get(close[0], close[0])}'?)" if close else ""
    raise UnknownRuntime(f"unknown runtime {name!r}{hint}; the presets: {', '.join(RUNTIMES)}")


def apply_runtime(
    runtime: str | None, league: Mapping[str, Any] | None, bot: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The bot's limits table with the preset's between the league's and the bot's:
    ``{**preset.limits, **bot}`` (None without a runtime and a table). The league's
    table stays the caller's to merge underneath; keys the league's table sets and
    the bot's does not are left to the league (a league's choice wins over a preset)."""
    if runtime is None:
        return dict(bot) if bot is not None else None
    preset = {k: v for k, v in get_runtime(runtime).limits.items() if k not in (league or {})}
    return {**preset, **(bot or {})}


def runtime_env(runtime: str | None, limits: ResourceLimits, env: Mapping[str, str] | None) -> dict[str, str] | None:
    """The bot's environment variables: the preset's (for the final ``limits``)
    under the bot's own ``env`` (None without either)."""
    if runtime is None:
        return dict(env) if env else None
    return {**get_runtime(runtime).env(limits), **(env or {})}


def guess_runtime(command: list[str] | str) -> Runtime | None:
    """The preset whose program starts ``command`` (``java -cp . Bot`` -> java), or None."""
    words = command.split() if isinstance(command, str) else command
    for word in words[:3]:
        base = os.path.basename(word)
        if re.fullmatch(r"(python|pypy)[0-9.]*", base):
            return RUNTIMES["python"]
        for r in RUNTIMES.values():
            if base in r.commands:
                return r
    return None


# --------------------------------------------------------------------------
# why a bot died

#: what a runtime writes when it cannot get memory (as it starts, or later); matched case-insensitively
MEMORY_SIGNS = (
    "error occurred during initialization of vm",  # the JVM's first line: its reservations failed (usually)
    "could not reserve enough space",
    "could not allocate compressed class space",
    "insufficient memory for the java runtime",
    "outofmemoryerror",
    "out of memory",
    "std::bad_alloc",
    "cannot allocate memory",
    "memoryerror",
    "failed to reserve",
    "gc heap initialization failed",
    "outofmemoryexception",
    "javascript heap out of memory",
)
_MEMORY_RE = re.compile("|".join(re.escape(s) for s in MEMORY_SIGNS), re.IGNORECASE)

#: other common deaths at start, by what the runtime writes: (pattern, fix)
_START_SIGNS = (
    (
        re.compile(r"Could not find or load main class|ClassNotFoundException|NoClassDefFoundError"),
        "java could not find the bot's class: the bot runs in a temporary working directory, so give the "
        "class path as ./classes (a word with a / or . naming an existing file or folder is made absolute), "
        "or an absolute path, and check the class name (with its package)",
    ),
    (
        re.compile(r"Cannot find module|ERR_MODULE_NOT_FOUND"),
        "node could not find a module: give the script's path with a / (./bot.js) and install its "
        "dependencies in the bot's folder (npm ci) in its build command",
    ),
    (
        re.compile(r"ModuleNotFoundError|ImportError"),
        "python could not import a module: install it where the bot can reach it (a virtual environment in "
        "the bot's folder, made by its build command), or use only the standard library",
    ),
    (
        re.compile(r"error while loading shared libraries|GLIBC_[0-9.]+' not found|cannot open shared object"),
        "the program needs a shared library this machine does not have: link it statically, or build it "
        "here with the bot's build command",
    ),
)

_SIGNAL_CAUSES = {
    "SIGKILL": "killed outright: by the memory limit of its control group (memory_mb), or at the CPU limit "
    "(cpu_seconds), or by the referee",
    "SIGSEGV": "a crash: an invalid memory access (in C/C++/Rust unsafe code: a bad pointer, a stack "
    "overflow from deep recursion, or an allocation that failed under the memory limit and was not checked)",
    "SIGABRT": "aborted: a failed assert, an uncaught C++ exception (std::bad_alloc: out of memory) or a Rust panic "
    "in an abort build",
    "SIGBUS": "a crash: a bad memory access (a file mapped and truncated, or misaligned access)",
    "SIGFPE": "a crash: an arithmetic error (integer division by zero)",
    "SIGILL": "a crash: an illegal instruction (a binary built for another CPU, -march=native on another machine)",
    "SIGXCPU": "the CPU limit (cpu_seconds) was reached",
    "SIGXFSZ": "it wrote a file larger than the file size limit (file_size_mb)",
    "SIGPIPE": "it wrote to a closed pipe",
}


def exit_words(returncode: int | None) -> str:
    """``exited with status 1``, ``was killed by SIGSEGV``, ``is still running``..."""
    if returncode is None:
        return "is still running"
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    if returncode > 128 and returncode - 128 in {s.value for s in signal.Signals}:
        # a shell reports a child's signal as 128 + N
        name = signal.Signals(returncode - 128).name
        return f"exited with status {returncode} (128 + {name}: a shell's child was killed)"
    return f"exited with status {returncode}"


def _signal_name(returncode: int | None) -> str | None:
    if returncode is None:
        return None
    n = -returncode if returncode < 0 else returncode - 128 if returncode > 128 else 0
    try:
        return signal.Signals(n).name if n > 0 else None
    except ValueError:
        return None


def _shown(text: str, limit: int = 400) -> str:
    text = text.strip()
    if len(text) > limit:
        text = "..." + text[-limit:]
    return repr(text)


def _memory_words(limits: ResourceLimits) -> str:
    return f"{limits.address_space // MiB} MiB" if limits.address_space else "no limit"


def likely_cause(
    stdout: str,
    stderr: str,
    *,
    command: list[str] | str | None = None,
    limits: ResourceLimits | None = None,
    runtime: str | None = None,
) -> str | None:
    """The fix for a start failure that the bot's output explains (a runtime
    that could not get its memory, a class or module not found, a missing
    shared library), or None when the output says nothing known."""
    lim = limits or ResourceLimits()
    if _MEMORY_RE.search(stdout) or _MEMORY_RE.search(stderr):
        guessed = guess_runtime(command) if command is not None else None
        if guessed is not None and guessed.name != "python" and runtime is None:
            preset = (
                f"use the {guessed.language} preset, which sizes the runtime to the limit: --runtime "
                f'{guessed.name} (league config: runtime = "{guessed.name}" in the bot\'s table), or '
            )
        elif runtime is None:
            preset = (
                "use the preset of its language (--runtime java|node|go|csharp|...; league config: "
                'runtime = "java"), or '
            )
        else:
            preset = ""
        return (
            f"the runtime could not get the memory it asked for under the memory limit ({_memory_words(lim)} of "
            f"address space: memory_mb): {preset}raise the limit, e.g. --memory-mb 4096 "
            "(league config: limits = { memory_mb = 4096 }); see docs/WRITING-A-BOT.md, 'Languages'"
        )
    for pattern, fix in _START_SIGNS:
        if pattern.search(stderr) or pattern.search(stdout):
            return fix
    return None


def crash_fix(detail: str, stderr: str, default: str) -> str:
    """The fix for a bot that crashed mid-game (``detail``: the fault's, which says
    how it ended): the cause its output or its signal shows, else ``default``."""
    cause = likely_cause(detail, stderr)
    if cause is not None:
        return cause
    for name, why in _SIGNAL_CAUSES.items():
        if name in detail:
            return f"{why}; {default}"
    return default


def explain_death(
    returncode: int | None,
    stdout: str,
    stderr: str,
    *,
    when: str = "before answering hello",
    command: list[str] | str | None = None,
    limits: ResourceLimits | None = None,
    runtime: str | None = None,
    default_fix: str | None = None,
) -> tuple[str, str]:
    """``(detail, fix)`` for a bot that died: what it wrote on stdout and stderr
    (the last 400 characters of each), how it ended (exit status, or the
    signal by name), and a fix naming the likely cause. ``when`` completes "the
    bot exited ..."; ``command``, ``limits`` and ``runtime`` (the preset in use,
    if any) shape the fix (the memory limit, the preset to use); ``default_fix``
    is the fix when nothing points at a cause."""
    out, err = stdout.strip(), stderr.strip()
    detail = f"the bot {exit_words(returncode)} {when}"
    detail += f"; its stdout: {_shown(out)}" if out else "; it wrote nothing to stdout"
    detail += f"; its stderr ends: {_shown(err)}" if err else " and nothing to stderr"
    lim = limits or ResourceLimits()
    mem = _memory_words(lim)
    sig = _signal_name(returncode)
    cause = likely_cause(out, err, command=command, limits=lim, runtime=runtime)
    if cause is not None:
        fix = cause
    elif sig is not None and sig in _SIGNAL_CAUSES:
        fix = f"{_SIGNAL_CAUSES[sig]}"
        if sig in ("SIGKILL", "SIGSEGV", "SIGABRT"):
            fix += f"; the memory limit here is {mem} (--memory-mb N, league config: limits = {{ memory_mb = N }})"
        fix += "; run the command by hand to see it happen"
    elif returncode == 127:
        fix = (
            "status 127 is the shell's 'command not found': the program (or its interpreter) is not on the "
            "PATH inside the sandbox; give its full path, or check the #! line"
        )
    elif returncode == 126:
        fix = "status 126 is the shell's 'cannot execute': chmod +x the program, or run it through its interpreter"
    else:
        fix = default_fix or (
            "read its stdout and stderr above for the reason, and run the command by hand to see what goes "
            "wrong (a wrong path or a missing interpreter is common); a bot must keep running, answer hello "
            "and then read stdin until bye"
        )
    return detail, fix
