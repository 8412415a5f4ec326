"""A league bot's ``data = [...]``: read-only folders besides its own, relative to the config."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from referee.cli import main
from referee.errors import UserError
from referee.league.config import load_config
from tests.sandboxes import needs_bwrap

from ..commands.test_bot_view import RANDOM, _folders


def _config(top: Path, data: str) -> Path:
    cfg = top / "league.toml"
    cfg.write_text(
        'out = "out"\n'
        f'[[bots]]\nname = "reader"\ncwd = "bots"\ncommand = ["{{python}}", "reader.py", "{RANDOM}"]\n{data}'
        f'[[bots]]\nname = "random"\ncommand = ["{{python}}", "{RANDOM}"]\n'
        '[[variants]]\nname = "happy-families"\nsizes = 2\ndeals = 1\n'
    )
    return cfg


def test_data_is_resolved_from_the_config_and_must_be_a_folder(tmp_path: Path) -> None:
    _reader, data = _folders(tmp_path)
    assert load_config(_config(tmp_path, 'data = ["data"]\n')).bots[0].data == (str(data),)
    with pytest.raises(UserError, match=r"bots\[0\]\.data\[1\]: .*nowhere does not exist .*relative to the config"):
        load_config(_config(tmp_path, 'data = ["data", "nowhere"]\n'))
    with pytest.raises(UserError, match=r"bots\[0\]\.data: expected a list, got a string"):
        load_config(_config(tmp_path, 'data = "data"\n'))


@needs_bwrap
def test_a_league_bot_reads_its_data_folder_and_without_it_the_error_names_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _reader, data = _folders(tmp_path)
    assert main(["run", str(_config(tmp_path, "")), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and f'data = ["{data}"]' in err, err
    assert main(["run", str(_config(tmp_path, 'data = ["data"]\n')), "--quiet"]) == 0
    with sqlite3.connect(tmp_path / "out" / "ledger.sqlite") as db:
        assert db.execute("SELECT count(*) FROM games").fetchone()[0] == 2
