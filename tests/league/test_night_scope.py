"""What a night hides from bots, it hides for that night only (referee.runtime.sandbox.protection_scope).

A long-lived process plays many nights (the site's host; a test calling ``referee.cli.main``): the
output folder, config and bots' folders one night protects must not stay protected for the next,
whose bots may legitimately use a folder that holds them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from referee.cli import main
from referee.league.config import load_config
from referee.league.outdir import open_night
from referee.league.runner import play
from referee.runtime.sandbox import protect_paths, protection_scope, view

from .conftest import REPO

INSTANT = REPO / "tests" / "bots" / "instant_bot.py"


def _night(cfg: Path, out: str, bots: dict[str, str]) -> Path:
    tables = "".join(
        f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{INSTANT}"]\n{keys}' for n, keys in bots.items()
    )
    variant = '[[variants]]\nname = "happy-families"\nsizes = 2\ndeals = 1\n'
    cfg.write_text(f'out = "{out}"\n[clock]\nmove_ms = 10000\n{tables}{variant}')
    return cfg


def _registered(path: Path) -> bool:
    return str(path) in view._PROTECTED or str(path) in view._OTHERS


def test_a_second_night_in_the_same_process_may_use_what_the_first_one_hid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first"
    first.mkdir()
    (first / "own").mkdir()
    cfg = _night(first / "night.toml", "out", {"a": 'cwd = "own"\n', "b": ""})
    league, ledger, _ = open_night(load_config(cfg))
    with ledger:
        stats = play(league, ledger)  # the night itself (as the site's host plays a gauntlet), no CLI around it
    assert stats.done == 2
    assert not any(_registered(p) for p in (first / "out", cfg, first / "own"))
    # a bot whose folder holds the first night's output folder, config and bot folder: refused while
    # that night was being played, welcome in a night of its own
    second = _night(tmp_path / "second.toml", "second-out", {"c": 'cwd = "first"\n', "d": ""})
    assert main(["run", str(second), "-q"]) == 0, capsys.readouterr().err
    assert not _registered(tmp_path / "second-out")


def test_a_scope_releases_only_what_it_registered() -> None:
    kept, night, shared = "/nowhere/kept", "/nowhere/night", "/nowhere/shared"
    protect_paths(secret=[kept, shared])  # outside any scope: for the whole process, as before
    try:
        with protection_scope():
            protect_paths(secret=[night, shared], bot_folders=[night + "-bot"])
            with protection_scope():  # a nested night
                protect_paths(secret=["/nowhere/inner"])
            assert "/nowhere/inner" not in view._PROTECTED
            assert {kept, night, shared} <= set(view._PROTECTED) and night + "-bot" in view._OTHERS

            async def in_a_child_task() -> None:  # a night's tasks register into the night's scope
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(lambda: _protect_async("/nowhere/child"))

            trio.run(in_a_child_task)
            assert "/nowhere/child" in view._PROTECTED
        assert kept in view._PROTECTED and shared in view._PROTECTED  # still held by the registration outside
        assert not {night, "/nowhere/child"} & set(view._PROTECTED) and night + "-bot" not in view._OTHERS
    finally:
        for p in (kept, shared):
            del view._PROTECTED[p]


async def _protect_async(path: str) -> None:
    protect_paths(secret=[path])
