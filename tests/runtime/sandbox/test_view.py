"""What a bot's sandbox mounts for the programs its command names."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import trio

from referee.cli import main
from referee.errors import UserError
from referee.league.config import load_config
from referee.runtime import BotError, BotSession, BotSpec, ClockSpec
from referee.runtime.limits import ResourceLimits
from referee.runtime.sandbox import (
    _overlap,
    bot_view,
    own_paths,
    plan_spawn,
    protect_paths,
    resolve_command,
)
from tests.sandboxes import needs_bwrap


def test_a_version_managers_shim_mounts_the_managers_root(tmp_path: Path) -> None:
    # ~/.pyenv/shims/python3 is a script that runs ~/.pyenv/libexec/pyenv, which picks an
    # interpreter under ~/.pyenv/versions: mounting only shims/ left the bot with exit 127
    root = tmp_path / "pyenv"
    (root / "shims").mkdir(parents=True)
    shim = root / "shims" / "python3"
    shim.write_text('#!/bin/sh\nexec "$PYENV_ROOT/libexec/pyenv" exec python3 "$@"\n')
    shim.chmod(0o755)
    bot = tmp_path / "bots" / "bot.py"
    bot.parent.mkdir()
    bot.write_text("")
    paths = own_paths(["python3", str(bot)], str(tmp_path / "bots"), {"PATH": str(root / "shims")}, False)
    assert str(root) in paths and str(bot.parent) in paths


def test_a_programs_bin_folder_mounts_its_install_prefix(tmp_path: Path) -> None:
    prefix = tmp_path / "node-v20"
    (prefix / "bin").mkdir(parents=True)
    node = prefix / "bin" / "node"
    node.write_text("")
    node.chmod(0o755)
    (tmp_path / "bot").mkdir()
    paths = own_paths([str(node), "bot.js"], str(tmp_path / "bot"), dict(os.environ), False)
    assert paths == [str(prefix)]


# --------------------------------------------------------------------------
# mounts that cannot be tricked (issue 19) and a predictable view (issue 21)


ROOT = Path(__file__).resolve().parents[3]
PY = sys.executable

#: answers hello with what it sees, as JSON in its ``version``: REFEREE_BOT_DIR, and for each
#: argument (and each path in LOOK, colon-separated: not named in its command, so not
#: mounted for it) a folder's listing, a file's text or the error; ``--data`` reads
#: REFEREE_BOT_DIR/../data/table.json first (and fails like any bot without it)
PROBE = r"""
import json, os, sys
args = sys.argv[1:]
info = {"bot_dir": os.environ.get("REFEREE_BOT_DIR")}
if args[:1] == ["--data"]:
    args = args[1:]
    with open(os.path.join(os.environ["REFEREE_BOT_DIR"], "../data/table.json")) as f:
        info["table"] = json.load(f)
for a in args + [p for p in os.environ.get("LOOK", "").split(":") if p]:
    try:
        info[a] = sorted(os.listdir(a)) if os.path.isdir(a) else open(a).read()
    except OSError as exc:
        info[a] = exc.strerror
sys.stdin.readline()
print(json.dumps({"type": "hello", "protocol": 1, "name": "probe", "version": json.dumps(info)}), flush=True)
sys.stdin.read()
"""


def _night(top: Path) -> tuple[Path, Path, Path]:
    """A league's folder: ``out/`` with a ledger, ``league.toml``, and ``bots/a`` with the
    probe, ``bots/b`` another bot's folder. Returns (out, config, bot folder a)."""
    out = top / "out"
    (out / "games").mkdir(parents=True)
    (out / "ledger.sqlite").write_text("seed 4242")
    cfg = top / "league.toml"
    cfg.write_text("seed = 4242\n")
    a = top / "bots" / "a"
    a.mkdir(parents=True)
    (a / "probe.py").write_text(PROBE)
    (top / "bots" / "b").mkdir()
    (top / "bots" / "b" / "secret.txt").write_text("b's opening book")
    return out, cfg, a


def _hello(spec: BotSpec) -> dict[str, object]:
    """Start ``spec``'s bot for real, return what its hello says it saw, close it."""

    async def go() -> dict[str, object]:
        async with trio.open_nursery() as nursery:
            session = await BotSession.start(spec, ClockSpec(startup_ms=20000), nursery)
            try:
                assert session.hello is not None and session.hello.version is not None
                return dict(json.loads(session.hello.version))
            finally:
                await session.close()
                nursery.cancel_scope.cancel()

    try:
        return trio.run(go)
    except BaseExceptionGroup as group:  # the nursery's: the start's own error
        leaf = group
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        raise leaf from None


IN_FOLDER = ResourceLimits(temp_workdir=False)  # a bot whose config names its cwd


@pytest.mark.parametrize("target", ["out", "league.toml", "bots/b"])
def test_a_link_in_the_bots_folder_named_in_its_command_is_refused(tmp_path: Path, target: str) -> None:
    out, cfg, a = _night(tmp_path)
    protect_paths(secret=[str(out), str(cfg)], bot_folders=[str(a), str(tmp_path / "bots" / "b")])
    (a / "peek").symlink_to(tmp_path / target)
    spec = BotSpec("sneaky", [PY, "probe.py", "peek"], cwd=str(a), limits=IN_FOLDER)
    with pytest.raises(UserError) as err:
        plan_spawn(spec)
    msg = str(err.value)
    assert "'sneaky'" in msg and str(tmp_path / target) in msg and "\n" not in msg, msg


def test_a_cwd_that_is_a_link_to_the_output_folder_is_refused(tmp_path: Path) -> None:
    out, cfg, a = _night(tmp_path)
    protect_paths(secret=[str(out), str(cfg)])
    (a / "results").symlink_to(out)
    spec = BotSpec("sneaky", [PY, str(a / "probe.py")], cwd=str(a / "results"), limits=IN_FOLDER)
    with pytest.raises(UserError, match=r"bot 'sneaky': its sandbox would mount .*out, which is .*out"):
        plan_spawn(spec)


def test_a_folder_that_holds_another_bots_folder_or_the_config_is_refused(tmp_path: Path) -> None:
    out, cfg, a = _night(tmp_path)
    protect_paths(secret=[str(out), str(cfg)], bot_folders=[str(a), str(tmp_path / "bots" / "b")])
    for cwd, held in ((tmp_path / "bots", f"{tmp_path}/bots/[ab], another bot's folder"), (tmp_path, f"{cfg}, a path")):
        spec = BotSpec("greedy", [PY, str(a / "probe.py")], cwd=str(cwd), limits=IN_FOLDER)
        with pytest.raises(UserError, match=f"bot 'greedy': .* holds {held}"):  # noqa: RUF043
            plan_spawn(spec)


def test_a_league_whose_bot_links_to_another_bots_folder_stops_with_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As cwd (through a link) and named in the command: one ``error:`` line, no game."""
    _night(tmp_path)
    (tmp_path / "bots" / "a" / "peek").symlink_to(tmp_path / "bots" / "b")
    (tmp_path / "bots" / "b" / "probe.py").write_text(PROBE)
    tail = '[[bots]]\nname = "b"\ncwd = "bots/b"\ncommand = ["{python}", "probe.py"]\n'
    tail += '[[variants]]\nname = "happy-families"\nsizes = 2\ndeals = 1\n'
    for bot_a in (
        'cwd = "bots/a/peek"\ncommand = ["{python}", "probe.py"]\n',
        'cwd = "bots/a"\ncommand = ["{python}", "probe.py", "peek/secret.txt"]\n',
    ):
        cfg = tmp_path / "night.toml"
        cfg.write_text(f'out = "night"\n[[bots]]\nname = "a"\n{bot_a}{tail}')
        assert main(["run", str(cfg), "--quiet"]) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and str(tmp_path / "bots" / "b") in lines[0], lines
        assert not list((tmp_path / "night").glob("games/*.jsonl*"))


@needs_bwrap
def test_a_link_into_usr_still_works(tmp_path: Path) -> None:
    _out, _cfg, a = _night(tmp_path)
    (a / "python").symlink_to("/usr/bin/python3")  # the system's interpreter (CI and here: Debian's)
    seen = _hello(BotSpec("linked", [str(a / "python"), "probe.py"], cwd=str(a), limits=IN_FOLDER))
    assert seen["bot_dir"] == str(a)


@needs_bwrap
def test_run_from_a_parent_folder_the_bot_sees_only_its_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """check-bot, play and duel start a bot without a cwd from the caller's directory: here one that
    holds another night's ledger and config. The bot sees neither; REFEREE_BOT_DIR is its folder."""
    _out, _cfg, a = _night(tmp_path)
    monkeypatch.chdir(tmp_path)
    look = {"LOOK": f"{tmp_path}:{tmp_path / 'out'}"}
    seen = _hello(BotSpec("probe", [PY, str(a / "probe.py")], env=look))
    assert seen["bot_dir"] == str(a)
    assert seen[str(tmp_path)] == ["bots"], seen  # only the path to its own folder (made by bwrap), no ledger
    assert seen[str(tmp_path / "out")] == "No such file or directory"
    # relative paths from the caller's directory too: resolved, and still only its own folder
    assert resolve_command([PY, "bots/a/probe.py"], str(tmp_path))[1] == str(a / "probe.py")


@needs_bwrap
def test_dotdot_through_an_unmounted_folder_works(tmp_path: Path) -> None:
    _out, _cfg, a = _night(tmp_path)
    seen = _hello(BotSpec("probe", [PY, f"{tmp_path}/out/../bots/a/probe.py"]))
    assert seen["bot_dir"] == str(a)
    cfg_dir = tmp_path / "cfg"
    cfg_dir.mkdir()
    (cfg_dir / "league.toml").write_text(
        '[[bots]]\nname = "p"\ncommand = ["{python}", "{config_dir}/../bots/a/probe.py"]\n'
        '[[bots]]\nname = "q"\ncommand = ["{python}", "../bots/a/probe.py"]\n'
        '[[variants]]\nname = "happy-families"\nsizes = 2\n'
    )
    league = load_config(cfg_dir / "league.toml")
    for b in league.bots:
        seen = _hello(BotSpec(b.name, b.command, cwd=b.cwd, data=b.data))
        assert seen["bot_dir"] == str(a)


@needs_bwrap
def test_a_data_folder_is_readable_with_data_and_named_in_the_fault_without_it(tmp_path: Path) -> None:
    _out, _cfg, a = _night(tmp_path)
    data = tmp_path / "bots" / "data"
    data.mkdir()
    (data / "table.json").write_text('{"opening": "ask for aces"}')
    command = [PY, str(a / "probe.py"), "--data"]
    seen = _hello(BotSpec("reader", command, data=(str(data),)))
    assert seen["table"] == {"opening": "ask for aces"}
    with pytest.raises(BotError) as err:
        _hello(BotSpec("reader", command))
    msg = str(err.value)
    assert "before answering hello" in msg and f'data = ["{data}"]' in msg and f"--data {data}" in msg, msg
    with pytest.raises(UserError, match="bot 'reader': data folder .*nowhere does not exist"):
        plan_spawn(BotSpec("reader", command, data=(str(tmp_path / "nowhere"),)))


def test_no_example_config_shows_a_bot_another_bots_folder_or_an_output_folder() -> None:
    configs = sorted((ROOT / "tournaments").glob("*.toml"))
    assert configs
    for path in configs:
        league = load_config(path)
        secret = [str(league.out), str(league.path)]
        views = [bot_view(b.command, b.cwd, None, True, b.data) for b in league.bots]
        folders = {v.folder for v in views if v.folder}
        for b, view in zip(league.bots, views, strict=True):
            assert view.folder, f"{path.name}: {b.name} has no folder of its own"
            for m in view.mounts():
                for p in secret + sorted(folders - {view.folder}):
                    assert not _overlap(m, p), f"{path.name}: {b.name} would mount {m}, which {_overlap(m, p)} {p}"


def test_a_link_its_build_makes_to_the_output_folder_stops_the_night_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Checked again at the bot's start: the build made the link after the first check."""
    _night(tmp_path)
    (tmp_path / "bots" / "b" / "probe.py").write_text(PROBE)
    link = "import os; os.symlink('../../' + 'tonight', 'peek')"  # (the build's own words name no path)
    cfg = tmp_path / "night.toml"
    cfg.write_text(
        f'out = "tonight"\n[[bots]]\nname = "a"\ncwd = "bots/a"\nbuild = {json.dumps(f"{PY} -c {link!r}")}\n'
        'command = ["{python}", "probe.py", "peek"]\n'
        '[[bots]]\nname = "b"\ncwd = "bots/b"\ncommand = ["{python}", "probe.py"]\n'
        '[[variants]]\nname = "happy-families"\nsizes = 2\ndeals = 1\n'
    )
    assert main(["run", str(cfg), "--quiet"]) == 2
    assert (tmp_path / "bots" / "a" / "peek").is_symlink()
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: bot 'a'") and f"{tmp_path / 'tonight'}, a path" in lines[0]
    assert not list((tmp_path / "tonight").glob("games/*.jsonl*"))
