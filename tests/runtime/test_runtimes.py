"""Language runtime presets (referee.runtime.runtimes): the limits and variables they set, how a league
config and the commands pick them, and what a dead bot's output says about its cause."""

from __future__ import annotations

import signal
import sys
import textwrap
from pathlib import Path

import pytest

from referee.errors import UserError
from referee.league.config import load_config
from referee.runtime.limits import MiB, ResourceLimits, parse_limits
from referee.runtime.runtimes import (
    RUNTIMES,
    UnknownRuntime,
    apply_runtime,
    exit_words,
    explain_death,
    get_runtime,
    guess_runtime,
    runtime_env,
)


def test_every_language_people_use_has_a_preset() -> None:
    assert {"python", "node", "java", "c", "cpp", "rust", "go", "csharp"} <= set(RUNTIMES)
    for alias, name in [("js", "node"), ("C++", "cpp"), ("c#", "csharp"), ("golang", "go"), ("jvm", "java")]:
        assert get_runtime(alias).name == name


def test_an_unknown_runtime_names_the_closest_and_the_presets() -> None:
    with pytest.raises(UnknownRuntime, match=r"unknown runtime 'jav' \(did you mean 'java'\?\); the presets: python"):
        get_runtime("jav")


def test_the_java_preset_sizes_the_jvm_to_the_memory_limit() -> None:
    env = get_runtime("java").env(ResourceLimits())  # the default 2 GiB
    opts = env["JAVA_TOOL_OPTIONS"]
    assert "-XX:CompressedClassSpaceSize=64m" in opts and "-Xmx512m" in opts and "-Xss1m" in opts
    assert "-Xmx1024m" in get_runtime("java").env(parse_limits({"memory_mb": 4096}))["JAVA_TOOL_OPTIONS"]
    assert get_runtime("node").env(ResourceLimits()) == {"NODE_OPTIONS": "--max-old-space-size=1024"}
    assert get_runtime("go").env(ResourceLimits())["GOMEMLIMIT"] == "1228MiB"
    assert int(get_runtime("csharp").env(ResourceLimits())["DOTNET_GCHeapHardLimit"], 16) == 1024 * MiB


def test_preset_limits_sit_between_the_league_and_the_bot() -> None:
    assert apply_runtime("java", None, None) == {"build_seconds": 600}
    assert apply_runtime("java", None, {"build_seconds": 900}) == {"build_seconds": 900}  # the bot's win
    assert apply_runtime("java", {"build_seconds": 60}, None) == {}  # the league's choice is left to it
    assert apply_runtime(None, None, {"memory_mb": 5}) == {"memory_mb": 5}
    # the bot's env wins over the preset's
    env = runtime_env("node", ResourceLimits(), {"NODE_OPTIONS": "--mine"})
    assert env == {"NODE_OPTIONS": "--mine"}


def test_guess_runtime_from_the_command() -> None:
    assert guess_runtime(["java", "-cp", "./classes", "Bot"]).name == "java"  # type: ignore[union-attr]
    assert guess_runtime("python3.11 bot.py").name == "python"  # type: ignore[union-attr]
    assert guess_runtime(["./bot"]) is None


def test_a_league_bot_with_a_runtime_gets_its_limits_and_env(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("")
    cfg = tmp_path / "league.toml"
    cfg.write_text(
        textwrap.dedent(
            """
            fill = "repeat"
            [limits]
            memory_mb = 1024
            [[bots]]
            name = "j"
            command = ["java", "-cp", "./classes", "Bot"]
            runtime = "java"
            env = { EXTRA = "1" }
            [[bots]]
            name = "p"
            command = ["{python}", "bot.py"]
            [[variants]]
            name = "chickens"
            sizes = 3
            """
        )
    )
    league = load_config(cfg)
    java, plain = league.bots
    assert java.env is not None and "-Xmx256m" in java.env["JAVA_TOOL_OPTIONS"] and java.env["EXTRA"] == "1"
    assert java.limits is not None and java.limits["build_seconds"] == 600
    assert plain.env is None
    # a bot without a runtime keeps its old canonical form (no "runtime" key): old ledgers still match
    bots = league.canonical()["bots"]
    assert "runtime" not in bots[1] and bots[0]["runtime"] == "java"


def test_a_league_bot_with_an_unknown_runtime_is_a_config_error(tmp_path: Path) -> None:
    cfg = tmp_path / "league.toml"
    cfg.write_text('[[bots]]\nname = "j"\ncommand = "x"\nruntime = "jaav"\n[[bots]]\nname = "k"\ncommand = "x"\n')
    with pytest.raises(UserError, match=r"bots\[0\]\.runtime: unknown runtime 'jaav' \(did you mean 'java'\?\)"):
        load_config(cfg)


# --------------------------------------------------------------------------
# why a bot died


JVM = "Error occurred during initialization of VM\nCould not allocate compressed class space: 1073741824 bytes"


def test_a_jvm_that_dies_at_once_is_explained_by_the_memory_limit() -> None:
    detail, fix = explain_death(1, JVM, "", command=["java", "-cp", "./classes", "Bot"])
    assert detail.startswith("the bot exited with status 1 before answering hello; its stdout: 'Error occurred")
    assert "compressed class space" in detail and "nothing to stderr" in detail
    assert "memory limit (2048 MiB" in fix and "--runtime java" in fix and 'runtime = "java"' in fix
    assert "--memory-mb 4096" in fix and "memory_mb" in fix


@pytest.mark.parametrize(
    "stderr",
    [
        "Error: Could not reserve enough space for object heap",
        "terminate called after throwing an instance of 'std::bad_alloc'",
        "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
        "fatal error: runtime: out of memory",
        "GC heap initialization failed with error 0x8007000E",
    ],
)
def test_memory_messages_of_every_runtime_point_at_the_memory_limit(stderr: str) -> None:
    _, fix = explain_death(1, "", stderr, command=["./bot"])
    assert "memory limit" in fix and "--memory-mb" in fix and "--runtime" in fix


def test_signals_are_named_with_their_likely_cause() -> None:
    detail, fix = explain_death(-signal.SIGSEGV, "", "")
    assert "was killed by SIGSEGV" in detail and "invalid memory access" in fix and "--memory-mb" in fix
    _, fix = explain_death(-signal.SIGKILL, "", "")
    assert "memory limit" in fix and "cpu_seconds" in fix
    assert "SIGXCPU" in exit_words(-signal.SIGXCPU)
    assert "128 + SIGKILL" in exit_words(137)
    _, fix = explain_death(127, "", "sh: 1: mybot: not found")
    assert "command not found" in fix


def test_a_java_class_path_relative_to_the_bot_folder_is_explained() -> None:
    _, fix = explain_death(1, "", "Error: Could not find or load main class Bot")
    assert "./classes" in fix and "temporary working directory" in fix


# --------------------------------------------------------------------------
# what the presets' sandbox changes let a bot see (as an attacker would look)


async def test_a_bot_sees_only_the_named_etc_files_and_runtime_folders() -> None:
    import json

    import trio

    from referee.runtime import BotSpec
    from referee.runtime.process import BotProcess
    from referee.runtime.sandbox import sandbox_mode

    assert sandbox_mode(ResourceLimits())[0] == "bwrap", "bubblewrap must work here (apt-get install bubblewrap)"
    spy = (
        "import json, os\n"
        "def can_read(p):\n"
        "    try:\n"
        "        open(p, 'rb').read(1); return True\n"
        "    except OSError:\n"
        "        return False\n"
        "print(json.dumps({'etc': sorted(os.listdir('/etc')), 'shadow': can_read('/etc/shadow'),\n"
        "    'mono': can_read('/etc/mono/config'), 'root': os.path.exists('/root/.ssh')}), flush=True)\n"
    )
    async with trio.open_nursery() as nursery:
        proc = await BotProcess.spawn(BotSpec("spy", [sys.executable, "-c", spy], limits=ResourceLimits()), nursery)
        async with proc:
            with trio.fail_after(20):
                seen = json.loads(bytes(await proc.reader.read_line()))
    allowed = {"ld.so.cache", "alternatives", "localtime", "nsswitch.conf", "passwd", "group", "hosts"}
    allowed |= {"resolv.conf", "gai.conf", "services", "ssl", "pki"}
    extra = [n for n in seen["etc"] if n not in allowed and not n.startswith(("python3", "java", "mono"))]
    assert extra == [] and seen["shadow"] is False and seen["root"] is False, seen
    assert seen["mono"] == await trio.Path("/etc/mono/config").exists()  # mono's library map: public configuration
