"""SITE.toml: the league part through the league's loader, the [site] table strictly, clear errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from referee.errors import UserError
from referee.site.config import load_site, parse_bind
from tests.site.conftest import SITE_TOML, write_site


def test_a_site_loads_with_its_league_and_settings(site_path: Path) -> None:
    site = load_site(site_path)
    assert site.settings.title == "Test league" and site.settings.promote == "sprt"
    assert site.house_bots == ["house-random", "house-random-2"]
    assert site.data == site_path.parent / "site-data" and site.league_out == site.data / "league"
    pool = site.pool_dict([{"name": "a-v1", "command": "./bot", "cwd": "/x"}])
    assert [b["name"] for b in pool["bots"]] == ["house-random", "house-random-2", "a-v1"]
    assert pool["out"] == str(site.league_out) and all(Path(b["cwd"]).is_absolute() for b in pool["bots"])


@pytest.mark.parametrize(
    "extra, words",
    [
        ('promote = "vote"\n', "site.promote: invalid value 'vote'; expected one of: sprt, host"),
        ("titel = 1\n", "site: unknown key 'titel' (did you mean 'title'?)"),
        ('session_hours = "long"\n', "site.session_hours: expected"),
        ("max_files = 0\n", "site.max_files: 0 is out of range"),
        ('sprt = "zero"\n', "site.sprt: 'zero': expected ELO0,ELO1"),
        ('bind = "everywhere"\n', "site.bind: expected HOST:PORT"),
    ],
)
def test_site_mistakes_are_named(tmp_path: Path, extra: str, words: str) -> None:
    with pytest.raises(UserError, match=re.escape(words)):
        load_site(write_site(tmp_path, extra))


def test_league_mistakes_use_the_league_loader(tmp_path: Path) -> None:
    text = SITE_TOML.replace('name = "kwartet"', 'name = "kwartte"')
    with pytest.raises(UserError, match="variants\\[0\\]"):
        load_site(write_site(tmp_path, text=text))
    with pytest.raises(UserError, match="reuse"):
        load_site(write_site(tmp_path, text='reuse = "never"\n' + SITE_TOML))
    with pytest.raises(UserError, match="site.data"):
        load_site(write_site(tmp_path, text='out = "x"\n' + SITE_TOML))
    with pytest.raises(UserError, match="no such site file"):
        load_site(tmp_path / "missing.toml")


def test_bind() -> None:
    assert parse_bind("0.0.0.0:80", "--bind") == ("0.0.0.0", 80)
    assert parse_bind("[::1]:8000", "--bind") == ("::1", 8000)
    with pytest.raises(UserError, match="--bind: expected HOST:PORT"):
        parse_bind("localhost:99999", "--bind")


def test_host_command_errors(site_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from referee.cli import main

    assert main(["host", str(site_path), "add-entrant"]) == 2
    assert "needs NAME" in capsys.readouterr().err
    assert main(["host", str(site_path), "add-entrant", "al ice"]) == 2
    assert "letters, digits" in capsys.readouterr().err
    assert main(["host", str(site_path), "add-entrant", "alice"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("rt_")
    assert main(["host", str(site_path), "add-entrant", "alice"]) == 2
    assert "exists already" in capsys.readouterr().err
    assert main(["host", str(site_path), "promote", "7"]) == 2
    assert "no version 7" in capsys.readouterr().err
    assert main(["host", str(site_path), "--bind", "nowhere"]) == 2
    assert "--bind: expected HOST:PORT" in capsys.readouterr().err


def test_the_example_site_loads() -> None:
    from tests.site.conftest import ROOT

    site = load_site(ROOT / "tournaments" / "site" / "site.toml")
    assert site.house_bots == ["house-random", "house-tracker"] and site.settings.promote == "sprt"
    assert site.data == ROOT / "tournaments" / "site" / "out"
