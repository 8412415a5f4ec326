"""What a bot's sandbox mounts for the programs its command names."""

from __future__ import annotations

import os
from pathlib import Path

from referee.runtime.sandbox import own_paths


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
