"""Config errors name the key path; unknown keys suggest the closest valid key."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from referee.cli import main
from referee.core.spec import ClockSpec
from referee.errors import UserError
from referee.league.config import diff_canonical, load_config
from referee.rules import VARIANTS

BOTS = """
[[bots]]
name = "a"
command = ["{python}", "bot.py"]
[[bots]]
name = "b"
command = "python3 bot.py"
[[bots]]
name = "c"
command = ["{python}", "bot.py"]
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "x.toml"
    p.write_text(textwrap.dedent(text))
    return p


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            '[[bots]]\nname = "a"\ncommand = 3\n[[bots]]\nname="b"\ncommand="x"\n[[bots]]\nname="c"\ncommand=["x", 1]\n',  # noqa: E501
            "bots[0].command: expected a string or a list of strings, got an integer",
        ),
        (
            BOTS + '[[variants]]\nname = "kwartet"\ndeels = 2\n',
            "variants[0]: unknown key 'deels' (did you mean 'deals'?)",
        ),
        (
            'reuse = "sesion"\n' + BOTS,
            "reuse: invalid value 'sesion'; expected one of: session, game, table (did you mean 'session'?)",
        ),
        ("sead = 3\n" + BOTS, "unknown key 'sead' (did you mean 'seed'?)"),
        (BOTS + '[[variants]]\nname = "kwartt"\n', "variants[0].name: unknown variant 'kwartt'"),
        (
            BOTS + '[[variants]]\nname = "kwartet"\nsizes = 5\n',
            'variants[0].sizes: table size 5 needs 5 bots but the config has 3; set fill = "repeat"',
        ),
        (
            BOTS + '[[variants]]\nname = "kwartet"\nsizes = 9\n',
            "variants[0].sizes: table size 9 is outside kwartet's 3..6 players",
        ),
        (
            BOTS + '[[variants]]\nname = "kwartet"\nmatch = { kind = "race" }\n',
            "variants[0].match.target: a race match needs target",
        ),
        (
            BOTS + '[[variants]]\nname = "odd"\nrules = { base = "kwartet", colour = 2 }\n',
            "variants[0].rules: unknown variant parameter",
        ),
        (BOTS + '[clock]\nmove_ms = "fast"\n', "clock.move_ms: expected an integer, got a string"),
        (
            BOTS.replace('name = "b"', 'name = "a"') + '[[variants]]\nname = "kwartet"\n',
            "bots[1].name: duplicate bot name 'a'",
        ),
        ('[[bots]]\ncommand = "x"\n', "bots[0]: missing required key 'name'"),
        (
            BOTS + "seed = 4\n",
            "bots[2]: unknown key 'seed' ('seed' is a top-level key: in TOML, put top-level keys before",
        ),
        ("seed = [\n", "not valid TOML"),
        (
            BOTS + 'limits = { cpu_secs = 5 }\n[[variants]]\nname = "kwartet"\n',
            "bots[2].limits: unknown key 'cpu_secs' (did you mean 'cpu_seconds'?)",
        ),
        (
            BOTS + 'env = { LEVEL = 3 }\n[[variants]]\nname = "kwartet"\n',
            "bots[2].env.LEVEL: expected a string, got an integer",
        ),
        (
            BOTS.replace('command = "python3 bot.py"', "command = []") + '[[variants]]\nname = "kwartet"\n',
            "bots[1].command: the command is empty",
        ),
        (BOTS + '[[variants]]\nname = "huge"\nrules = { members = 1000000000 }\n', "at most 26 members"),
        (
            BOTS + '[[variants]]\nname = "odd"\nrules = { base = "kwartet", stall = 0 }\n',
            "variants[0].rules: variant 'odd': 'stall' must be a whole number of asks, at least 1 (default 100), not 0",
        ),
        (
            BOTS + '[[variants]]\nname = "odd"\nrules = { name = "odd", please = "yes" }\n',
            "variants[0].rules: variant 'odd': 'please' must be true or false, not 'yes'",
        ),
    ],
)
def test_config_errors_name_the_key_path(tmp_path: Path, text: str, expected: str) -> None:
    p = write(tmp_path, text)
    with pytest.raises(UserError) as info:
        load_config(p)
    assert str(info.value).startswith(f"{p}: ")
    assert expected in str(info.value)


def test_cli_prints_error_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, BOTS + '[[variants]]\nname = "kwartet"\nsizez = 3\n')
    assert main(["plan", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {p}: variants[0]: unknown key 'sizez' (did you mean 'sizes'?)")
    assert "Traceback" not in err


def test_paths_and_placeholders_resolve_against_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    p = write(
        tmp_path,
        """
        out = "results"
        [[bots]]
        name = "a"
        command = ["{python}", "{config_dir}/bot.py"]
        cwd = "bots"
        env = { LEVEL = "3" }
        [[bots]]
        name = "b"
        command = "{python} bot.py"
        [[bots]]
        name = "c"
        command = "x"
        [[variants]]
        name = "kwartet"
    """,
    )
    league = load_config(p)
    import sys

    assert league.bots[0].command == [sys.executable, f"{tmp_path}/bot.py"]
    assert league.bots[0].cwd == str(tmp_path / "bots")
    assert league.bots[0].env is not None and league.bots[0].env["LEVEL"] == "3"
    assert league.bots[1].cwd == str(tmp_path)
    assert league.bots[1].env is None
    assert league.out == tmp_path / "results"
    assert league.variants[0].sizes == (3,)  # 3 bots, no fill: only 3-seat tables
    assert load_config(p, out="elsewhere").out == Path("elsewhere").resolve()


def test_canonical_diff_names_changed_keys() -> None:
    old = {"seed": 1, "bots": [{"name": "a", "command": ["x"]}], "clock": {"move_ms": 1000}}
    new = {"seed": 2, "bots": [{"name": "a", "command": ["y"]}, {"name": "b"}], "clock": {"move_ms": 1000}}
    lines = diff_canonical(old, new)
    assert "seed: was 1, now 2" in lines
    assert 'bots[0].command: was ["x"], now ["y"]' in lines
    assert any(line.startswith("bots[1]: added") for line in lines)


def test_per_bot_move_limits_are_accepted(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        BOTS.replace('name = "b"', 'name = "b"\nclock = { move_ms = 3000 }') + '[[variants]]\nname = "kwartet"\n',
    )
    league = load_config(p)
    assert league.bots[1].clock == ClockSpec(move_ms=3000) and league.bots[0].clock is None
    assert league.clock == ClockSpec()


def test_a_file_where_the_output_folder_goes_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = write(tmp_path, 'out = "o"\n' + BOTS + '[[variants]]\nname = "kwartet"\n')
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "games").write_text("not a folder")
    assert main(["run", str(p), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "o/games is a file, but the league needs a folder there" in err


def test_every_type_mistake_is_reported_at_once(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        """\
        sead = 3
        reuse = "sesion"
        [[bots]]
        name = "a"
        comand = "x"
        [[bots]]
        name = 5
        command = "y"
        [[variants]]
        name = "kwartet"
        deels = 2
        [faults]
        retries = "no"
        """,
    )
    with pytest.raises(UserError) as info:
        load_config(p)
    lines = str(info.value).splitlines()
    assert lines[0] == f"{p}: 6 mistakes:"
    assert [line.split(":")[0].strip() for line in lines[1:]] == [
        "unknown key 'sead' (did you mean 'seed'?); valid keys here",
        "reuse",
        "bots[0]",
        "bots[1].name",
        "variants[0]",
        "faults.retries",
    ]
    assert "bots[0]: unknown key 'comand' (did you mean 'command'?)" in lines[3]
    assert lines[4] == "  bots[1].name: expected a string, got an integer"
    assert lines[6] == "  faults.retries: expected an integer, got a string"


def test_every_checked_mistake_is_reported_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(
        tmp_path,
        """\
        concurrency = 0
        [clock]
        move_ms = 0
        [faults]
        retries = -1
        max_decisions = 0
        [[bots]]
        name = "a"
        command = "x"
        [[bots]]
        name = "a"
        command = "y"
        cwd = "nowhere"
        [[variants]]
        name = "kwartt"
        [[variants]]
        name = "authors"
        sizes = [2]
        deals = 0
        """,
    )
    assert main(["plan", str(p)]) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert lines[0] == f"error: {p}: 9 mistakes:"
    assert lines[1:] == [
        "  concurrency: must be at least 1",
        "  clock.move_ms: must be at least 1 (milliseconds)",
        "  faults.retries: must be 0 or more",
        "  faults.max_decisions: must be at least 1 (a hand still running after that many decisions is aborted), "
        "or left out for the automatic cap",
        "  bots[1].name: duplicate bot name 'a' (also bots[0]); names must be unique",
        f"  bots[1].cwd: directory {tmp_path / 'nowhere'} does not exist (paths are relative to the config file)",
        f"  variants[0].name: unknown variant 'kwartt'; the presets are {', '.join(VARIANTS)} "
        "(or define a custom ask variant with its parameters); did you mean 'kwartet'?",
        "  variants[1].deals: must be at least 1",
        "  variants[1].sizes: table size 2 is outside authors's 3..6 players",
    ]


def test_one_mistake_is_still_one_line(tmp_path: Path) -> None:
    p = write(tmp_path, BOTS + '[[variants]]\nname = "kwartet"\ndeals = 0\n')
    with pytest.raises(UserError) as info:
        load_config(p)
    assert str(info.value) == f"{p}: variants[0].deals: must be at least 1"


def test_a_misspelled_variant_is_said_with_the_type_mistakes(tmp_path: Path) -> None:
    cfg = tmp_path / "league.toml"
    cfg.write_text(
        textwrap.dedent(
            """
            name = "x"
            [[bots]]
            name = "a"
            command = 5
            [[bots]]
            name = "b"
            command = "python3 b.py"
            [[variants]]
            name = "kwartett"
            [[variants]]
            name = "chickens"
            sizes = "three"
            """
        )
    )
    with pytest.raises(UserError) as info:
        load_config(cfg)
    text = str(info.value)
    assert text.startswith(f"{cfg}: 3 mistakes:\n"), text
    assert "bots[0].command" in text and "variants[1].sizes" in text
    assert "variants[0].name: unknown variant 'kwartett'" in text and "did you mean 'kwartet'?" in text


def test_the_runtime_shapes_are_resolved_once_in_config(tmp_path: Path) -> None:
    from referee.core.spec import FaultPolicy, max_decisions_for
    from referee.rules.match import MatchFormat

    p = write(
        tmp_path,
        "[faults]\nretries = 2\n"
        + BOTS
        + '[[variants]]\nname = "kwartet"\nsizes = [3]\nmatch = { kind = "race", target = 10 }\n',
    )
    (v,) = load_config(p).variants
    assert v.match == MatchFormat(kind="race", target=10, max_hands=50)
    assert v.policy(3) == FaultPolicy(retries=2, max_line=65536, max_decisions=max_decisions_for(v.rules, 3))
