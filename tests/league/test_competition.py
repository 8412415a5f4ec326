"""The competition preset: ``[competition] strict = true`` (implied by ``require_sandbox = true``)
turns on what a host needs and refuses, with one ``error:`` line naming the key, what undoes it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from referee.league.config import COMPETITION, load_config
from referee.runtime.limits import parse_limits

from .conftest import REPO, cli, processes_with

REMEMBERER = REPO / "tests" / "hostile" / "bots" / "rememberer.py"
TRACKER = REPO / "sample_bots" / "tracker_bot.py"


def _config(top: str = "", bot_keys: str = "", head: str = "[competition]\nstrict = true\n") -> str:
    bots = "".join(f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "bot.py"]\n' for n in "abc")
    return f'{top}out = "out"\n{head}{bots}{bot_keys}[[variants]]\nname = "kwartet"\nsizes = 3\n'


def test_the_preset_turns_on_bwrap_only_no_network_no_writable_folder_and_a_secret_seed(make_config) -> None:
    for head in ("[competition]\nstrict = true\n", "[limits]\nrequire_sandbox = true\n"):
        league = load_config(make_config(_config(head=head)))
        assert league.strict and league.secret and league.seed is None  # drawn at the first run
        for b in league.bots:
            lim = parse_limits(b.limits)
            assert lim.require_sandbox and not lim.network and not lim.writable and lim.sandbox
    # strict = false keeps require_sandbox alone: no preset, a fixed seed allowed
    league = load_config(
        make_config(_config("seed = 4\n", head="[limits]\nrequire_sandbox = true\n[competition]\nstrict = false\n"))
    )
    assert not league.strict and league.seed == 4 and parse_limits(league.bots[0].limits).network
    assert not load_config(make_config(_config(head=""))).strict


@pytest.mark.parametrize(
    ("top", "bot_keys", "key"),
    [
        ("seed = 5\n", "", "seed"),
        ('reuse = "table"\n', "", "reuse"),
        ("", "limits = { writable = true }\n", "bots[2].limits.writable"),
        ("", 'limits = { sandbox = "basic" }\n', "bots[2].limits.sandbox"),
        ("", 'limits = { sandbox = "none" }\n', "bots[2].limits.sandbox"),
        ("", "limits = { network = true }\n", "bots[2].limits.network"),
        ("", "limits = { require_sandbox = false }\n", "bots[2].limits.require_sandbox"),
    ],
)
def test_what_undoes_the_preset_is_refused_naming_the_key(make_config, top: str, bot_keys: str, key: str) -> None:
    cfg = make_config(_config(top, bot_keys))
    res = cli("plan", str(cfg))
    assert res.returncode == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {cfg}: {key}: ") and "competition preset" in lines[0]
    assert "Traceback" not in res.stderr


def test_the_league_limits_are_refused_too_and_plan_prints_the_preset(make_config) -> None:
    cfg = make_config(_config(head="[competition]\nstrict = true\n[limits]\nnetwork = true\n"))
    res = cli("plan", str(cfg))
    assert res.returncode == 2 and res.stderr.startswith(f"error: {cfg}: limits.network: network = true is refused")
    ok = make_config(_config(), "ok.toml")
    res = cli("plan", str(ok))
    assert res.returncode == 0, res.stderr
    assert "competition preset ([competition] strict = true) turns on:" in res.stdout
    assert all(line[:40] in res.stdout.replace("\n   ", " ") for line in COMPETITION)
    data = json.loads(cli("plan", str(ok), "--json").stdout)
    assert data["competition"] == list(COMPETITION)


def test_nothing_a_bot_writes_outlives_its_process_in_a_competition(make_config, tmp_path: Path) -> None:
    # the rememberer writes what it saw to every place it can (its folder, HOME, TMPDIR, /tmp,
    # /var/tmp, /dev/shm, its script's folder) and reads it back in its next process; with a
    # writable folder (no competition) its memory outlives the process, under the preset it does not
    folder = tmp_path / "bot"
    folder.mkdir()
    tag = f"competition-{tmp_path.name}"
    bots = "".join(
        f'[[bots]]\nname = "{n}"\ncwd = "bot"\nlimits = {{ {{limits}} }}\n'
        f'command = ["{sys.executable}", "{REMEMBERER}", "{TRACKER}", "{tag}"]\n'
        for n in "abc"
    )
    body = "[clock]\nstartup_ms = 20000\n" + bots + '[[variants]]\nname = "kwartet"\nsizes = 3\n'
    memory = folder / "rememberer-memory.json"
    open_night = make_config(
        'seed = 3\nout = "open"\nreuse = "game"\n' + body.replace("{limits}", "writable = true"), "open.toml"
    )
    assert cli("run", str(open_night), "--quiet").returncode == 0
    assert memory.exists()  # the control: it does write where it can
    memory.unlink()
    strict = make_config(
        'out = "strict"\nreuse = "game"\n[competition]\nstrict = true\n' + body.replace("{limits}", ""), "s.toml"
    )
    res = cli("run", str(strict), "--quiet")
    assert res.returncode == 0, res.stderr
    assert not memory.exists() and not any(folder.iterdir())
    for place in ("/tmp", "/var/tmp", "/dev/shm", str(REMEMBERER.parent), str(REPO)):
        assert not (Path(place) / "rememberer-memory.json").exists(), place
    assert not processes_with(tag)


def test_a_night_started_before_the_preset_resumes_with_strict_false(make_config) -> None:
    # a night with require_sandbox = true and a fixed seed (accepted before the preset) keeps its
    # stored config: the same config with [competition] strict = false has the same canonical form
    from referee.league.config import canonical_form, decode_config

    old = _config("seed = 4\n", head="[limits]\nrequire_sandbox = true\n")
    with pytest.raises(Exception, match="seed: a fixed seed"):
        load_config(make_config(old))
    now = load_config(
        make_config(
            _config("seed = 4\n", head="[limits]\nrequire_sandbox = true\n[competition]\nstrict = false\n"), "now.toml"
        )
    )
    assert canonical_form(decode_config(old.encode(), "old.toml")) == now.canonical()
    strict = load_config(make_config(_config(), "strict.toml"))
    assert strict.canonical()["competition"] == {"strict": True}  # cannot be switched off mid-night
