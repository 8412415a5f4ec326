"""Fixes from the league acceptance audit: the start check before the night,
clock/seed/match checks, renaming, head-to-head CSV and Markdown escaping, the
first progress line and the memory warning. Real bot subprocesses throughout."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest

from referee.errors import UserError
from referee.league.config import load_config
from referee.league.ledger import GameRow, Ledger
from referee.league.standings import compute, head_to_head_csv, to_markdown

from .conftest import HAND_BOT, bots_toml, cli

VARIANT = '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'


def _games(out: Path) -> int:
    if not (out / "ledger.sqlite").exists():
        return 0
    with Ledger.in_dir(out, create=False) as ledger:
        return ledger.count()


# -- 1. the start check -----------------------------------------------------------


def test_a_missing_bot_script_stops_the_run_before_any_game(tmp_path: Path, make_config) -> None:
    cfg = make_config(
        'seed = 1\nout = "out"\n'
        + bots_toml(["a"])
        + '[[bots]]\nname = "ghost"\ncommand = ["{python}", "no_such_bot.py"]\n'
        + '[[bots]]\nname = "phantom"\ncommand = ["{python}", "no_such_bot_either.py"]\n'
        + VARIANT
    )
    res = cli("run", str(cfg), "--progress-every", "0")
    assert res.returncode == 2, res.stderr
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 2  # one per failing bot, each naming it and why
    assert "bot 'ghost' (bots[1]) could not start" in errors[0] and "can't open file" in errors[0]
    assert "exit status 2" in errors[0]
    assert "bot 'phantom' (bots[2]) could not start" in errors[1] and "no_such_bot_either.py" in errors[1]
    assert "nothing was played or recorded" in res.stderr and 'broken_bot = "forfeit"' in res.stderr
    assert "Traceback" not in res.stderr and "warning:" not in res.stderr
    assert not res.stdout.startswith("[")  # no game was played
    out = tmp_path / "out"
    assert _games(out) == 0
    with Ledger.in_dir(out, create=False) as ledger:
        assert ledger.config() is None  # nothing written before the check passed
    # correcting the config just works: not refused as "a different config"
    cfg.write_text(
        cfg.read_text().replace("no_such_bot.py", str(HAND_BOT)).replace("no_such_bot_either.py", str(HAND_BOT))
    )
    res = cli("run", str(cfg), "--quiet")
    assert res.returncode == 0, res.stderr
    assert _games(tmp_path / "out") == 3


def test_broken_bot_forfeit_keeps_the_night_going(tmp_path: Path, make_config) -> None:
    cfg = make_config(
        'seed = 1\nout = "out"\n[faults]\nbroken_bot = "forfeit"\n'
        + bots_toml(["a", "b"])
        + '[[bots]]\nname = "ghost"\ncommand = ["{python}", "no_such_bot.py"]\n'
        + VARIANT.replace("deals = 1", "deals = 2")
    )
    res = cli("run", str(cfg), "--quiet")
    assert res.returncode == 0, res.stderr
    assert res.stderr.count("warning: bot 'ghost'") == 1 and "forfeits its games" in res.stderr
    with Ledger.in_dir(tmp_path / "out", create=False) as ledger:
        rows = list(ledger.rows())
    assert len(rows) == 6
    for row in rows:
        seat = row.bots.index("ghost")
        assert row.forfeits == [seat] and [f["fault"] for f in row.faults] == ["crash"]
        assert "can't open file" in row.faults[0]["detail"]
    # switching the policy does not change any result: the league resumes (nothing left to play)
    cfg.write_text(cfg.read_text().replace('broken_bot = "forfeit"', 'broken_bot = "stop"'))
    again = cli("run", str(cfg), "--quiet")
    assert again.returncode == 0, again.stderr


def test_a_resumed_league_with_a_broken_bot_records_nothing_more(tmp_path: Path, make_config) -> None:
    moved = tmp_path / "c" / "moved_bot.py"  # a folder of its own (not the config's: refused)
    moved.parent.mkdir()
    moved.write_text(HAND_BOT.read_text())
    cfg = make_config(
        'seed = 1\nout = "out"\n'
        + bots_toml(["a", "b"])
        + f'[[bots]]\nname = "c"\ncommand = ["{{python}}", "{moved}"]\n'
        + VARIANT
    )
    assert cli("run", str(cfg), "--quiet").returncode == 0
    out = tmp_path / "out"
    with sqlite3.connect(out / "ledger.sqlite") as db:
        db.execute("DELETE FROM games WHERE rowid IN (SELECT rowid FROM games LIMIT 1)")
    moved.unlink()  # the bot's file disappears between the runs
    res = cli("run", str(cfg), "--quiet")
    assert res.returncode == 2 and "bot 'c' (bots[2]) could not start" in res.stderr
    assert _games(out) == 2
    moved.write_text(HAND_BOT.read_text())
    assert cli("run", str(cfg), "--quiet").returncode == 0 and _games(out) == 3


def test_broken_bot_must_be_stop_or_forfeit(tmp_path: Path, make_config) -> None:
    cfg = make_config('[faults]\nbroken_bot = "skip"\n' + bots_toml(["a", "b", "c"]) + VARIANT)
    with pytest.raises(UserError, match=r"faults\.broken_bot: invalid value 'skip'; expected one of: stop, forfeit"):
        load_config(cfg)


# -- 2. 3. 4. config checks -----------------------------------------------------------


@pytest.mark.parametrize(
    "head, bot_clock, expected",
    [
        ('[clock]\nmode = "cpu"\nwall_ceiling_ms = 0\n', None, r"clock\.wall_ceiling_ms: must be at least 1"),
        (
            "[clock]\nmove_ms = 500\nwall_ceiling_ms = 400\n",
            None,
            r"clock\.wall_ceiling_ms: 400 is below clock\.move_ms \(500\)",
        ),
        ("", "{ wall_ceiling_ms = 0 }", r"bots\[0\]\.clock\.wall_ceiling_ms: must be at least 1"),
        (
            "",
            "{ move_ms = 900, wall_ceiling_ms = 800 }",
            r"bots\[0\]\.clock\.wall_ceiling_ms: 800 is below bots\[0\]\.clock\.move_ms \(900\)",
        ),
        (
            "[clock]\nwall_ceiling_ms = 2000\n",
            "{ move_ms = 3000 }",
            r"bots\[0\]\.clock\.move_ms: 3000 is above the league's clock\.wall_ceiling_ms \(2000\)",
        ),
    ],
)
def test_wall_ceiling_is_checked(make_config, head: str, bot_clock: str | None, expected: str) -> None:
    bots = bots_toml(["a", "b", "c"])
    if bot_clock:
        bots = bots.replace('name = "a"\n', f'name = "a"\nclock = {bot_clock}\n', 1)
    cfg = make_config("seed = 1\n" + head + bots + VARIANT)
    with pytest.raises(UserError, match=expected):
        load_config(cfg)


def test_good_wall_ceilings_are_accepted(make_config) -> None:
    bots = bots_toml(["a", "b", "c"]).replace(
        'name = "a"\n', 'name = "a"\nclock = { move_ms = 3000, wall_ceiling_ms = 3000 }\n', 1
    )
    load_config(make_config('[clock]\nmode = "cpu"\nmove_ms = 100\nwall_ceiling_ms = 100\n' + bots + VARIANT))


@pytest.mark.parametrize("seed", [-5, -1])
def test_a_negative_seed_is_refused(make_config, seed: int) -> None:
    cfg = make_config(f"seed = {seed}\n" + bots_toml(["a", "b", "c"]) + VARIANT)
    with pytest.raises(UserError, match=r"x?\.toml: seed: must be a whole number from 0 to 2\*\*64 - 1"):
        load_config(cfg)
    res = cli("plan", str(cfg))
    assert res.returncode == 2 and "seed: must be" in res.stderr and "Traceback" not in res.stderr


def test_a_stored_negative_seed_gives_a_clear_message(tmp_path: Path, make_config) -> None:
    cfg = make_config('seed = 5\nout = "out"\n' + bots_toml(["a", "b", "c"]) + VARIANT)
    assert cli("run", str(cfg), "--quiet").returncode == 0
    db_path = tmp_path / "out" / "ledger.sqlite"
    with sqlite3.connect(db_path) as db:  # as an older referee would have stored it
        stored = json.loads(db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
        stored["seed"] = -5
        db.execute("UPDATE meta SET value = ? WHERE key = 'config'", (json.dumps(stored),))
    res = cli("run", str(cfg), "--quiet")
    assert res.returncode == 2 and "seed: was -5, now 5" in res.stderr and "Traceback" not in res.stderr
    merged = cli("merge", str(tmp_path / "out"), "--into", str(tmp_path / "merged"))
    assert merged.returncode == 2 and "seed: must be a whole number" in merged.stderr
    assert "Traceback" not in merged.stderr


@pytest.mark.parametrize(
    "match, expected",
    [
        (
            '{ kind = "fixed", hands = 2, target = 9 }',
            r"variants\[0\]\.match\.target: does not apply to a fixed match: remove it; a fixed match takes hands "
            r"\(the number of hands played\) and max_hands",
        ),
        (
            '{ kind = "race", target = 9, hands = 2 }',
            r"variants\[0\]\.match\.hands: does not apply to a race match: remove it; a race match takes target",
        ),
        (
            '{ kind = "fixed", hands = 2, max_hands = 0 }',
            r"variants\[0\]\.match\.max_hands: must be at least 1 \(hands in all, tie-break hands included\)",
        ),
        ('{ kind = "single", hands = 2 }', r"variants\[0\]\.match\.hands: does not apply to a single match"),
    ],
)
def test_match_keys_that_do_not_apply_are_mistakes(make_config, match: str, expected: str) -> None:
    cfg = make_config(bots_toml(["a", "b", "c"]) + VARIANT + f"match = {match}\n")
    with pytest.raises(UserError, match=expected):
        load_config(cfg)


def test_a_fixed_match_takes_max_hands_for_its_tie_breaks(make_config) -> None:
    cfg = make_config(bots_toml(["a", "b", "c"]) + VARIANT + 'match = { kind = "fixed", hands = 2, max_hands = 9 }\n')
    match = load_config(cfg).variants[0].match
    assert (match.kind, match.hands, match.max_hands) == ("fixed", 2, 9)


# -- 5. renaming ----------------------------------------------------------------------


def test_renaming_a_league_resumes_and_titles_use_the_new_name(tmp_path: Path, make_config) -> None:
    body = 'seed = 1\nout = "out"\n' + bots_toml(["a", "b", "c"]) + VARIANT.replace("deals = 1", "deals = 2")
    cfg = make_config(body)
    assert cli("run", str(cfg), "--quiet").returncode == 0
    with sqlite3.connect(tmp_path / "out" / "ledger.sqlite") as db:
        db.execute("DELETE FROM games WHERE rowid IN (SELECT rowid FROM games LIMIT 2)")
    cfg.write_text('name = "renamed"\n' + body)
    res = cli("run", str(cfg), "--quiet")
    assert res.returncode == 0, res.stderr
    out = tmp_path / "out"
    assert _games(out) == 6
    assert (out / "standings.md").read_text().startswith("# Standings: renamed")
    assert json.loads((out / "standings.json").read_text())["league"] == "renamed"
    again = cli("standings", str(out), "--json")
    assert json.loads(again.stdout)["league"] == "renamed"


# -- 6. head to head CSV, Markdown escaping -----------------------------------------------


def _row(gid: str, bots: list[str], scores: list[float]) -> GameRow:
    ranks = [1 + sum(o > s for o in scores) for s in scores]
    best = max(scores)
    win = [1.0 / scores.count(best) if s == best else 0.0 for s in scores]
    return GameRow(
        game_id=gid,
        variant="kwartet",
        size=len(bots),
        table=0,
        deal=0,
        rotation=0,
        seed=1,
        bots=bots,
        scores=scores,
        ranks=ranks,
        win_shares=win,
        forfeits=[],
        faults=[],
        think=[{"count": 1, "mean_ms": 1.0, "max_ms": 1.0}] * len(bots),
        log_path=None,
        reason="complete",
        wall_ms=1.0,
    )


def test_head_to_head_csv_and_escaped_markdown(tmp_path: Path, make_config) -> None:
    evil = "pipe|<b>bold</b>"
    st = compute([_row("g1", [evil, "b", "c"], [3, 2, 1]), _row("g2", ["b", evil, "c"], [3, 1, 2])], "x|<i>y</i>")
    rows = list(csv.DictReader(io.StringIO(head_to_head_csv(st))))
    cell = {(r["scope"], r["bot"], r["opponent"]): (int(r["above"]), int(r["met"])) for r in rows}
    assert cell[("overall", evil, "b")] == (1, 2) and cell[("overall", "b", evil)] == (1, 2)
    assert cell[("overall", "c", evil)] == (1, 2) and cell[("kwartet", "b", "c")] == (2, 2)
    md = to_markdown(st)
    assert "<b>" not in md and "<i>" not in md and "pipe\\|&lt;b&gt;bold&lt;/b&gt;" in md
    for section in md.split("\n## ")[1:]:  # every row has its table header's columns (overall has no mean score)
        table = [ln for ln in section.splitlines() if ln.startswith("| #") or ln[2:3].isdigit()]
        assert len({ln.replace("\\|", "").count("|") for ln in table}) == 1
    # and a real run writes head_to_head.csv next to standings.csv
    cfg = make_config('seed = 1\nout = "out"\n' + bots_toml(["a", "b", "c"]) + VARIANT)
    assert cli("run", str(cfg), "--quiet").returncode == 0
    written = list(csv.DictReader((tmp_path / "out" / "head_to_head.csv").open()))
    assert {r["scope"] for r in written} == {"overall", "kwartet"}
    assert all(int(r["met"]) == 3 for r in written) and len(written) == 2 * 6


# -- 7. the first progress line ---------------------------------------------------------


def test_the_first_progress_line_comes_when_the_night_starts(make_config) -> None:
    cfg = make_config(
        'seed = 1\nconcurrency = 1\nout = "out"\n'
        + bots_toml(["a", "b", "c"])
        + VARIANT.replace("deals = 1", "deals = 2")
    )
    res = cli("run", str(cfg), "--progress-every", "3600")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "starting: 6 games to play, 0 of 6 already in the ledger, 1 table at once"
    progress = [ln for ln in lines if ln.startswith("[")]
    assert progress == [progress[-1]] and progress[-1].startswith("[6/6]")  # the interval holds; the end is shown
    each = cli("run", str(cfg), "--progress-every", "0", "--new-out")
    lines = each.stdout.splitlines()
    assert lines[0].startswith("starting: 6 games to play") and [ln[:5] for ln in lines[1:7]] == [
        f"[{i}/6]" for i in range(1, 7)
    ]


# -- 8. the memory warning ---------------------------------------------------------------


def test_a_warning_when_the_memory_limits_exceed_the_machine(make_config) -> None:
    import os

    phys_mib = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20
    cfg = make_config(
        f'seed = 1\nconcurrency = 2\nout = "out"\n[limits]\nmemory_mb = {phys_mib // 4}\n'
        + bots_toml(["a", "b", "c"])
        + VARIANT
    )  # 2 tables x 3 seats x 1/4 of the memory
    res = cli("run", str(cfg), "--quiet")
    assert res.returncode == 0, res.stderr
    warnings = [ln for ln in res.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1
    assert "2 tables at once x 3 seats" in warnings[0] and "Lower `concurrency`" in warnings[0]
    assert "memory_mb" in warnings[0]
    quiet = make_config('seed = 1\nconcurrency = 1\nout = "out2"\n' + bots_toml(["a", "b", "c"]) + VARIANT, "ok.toml")
    res = cli("run", str(quiet), "--quiet")
    assert res.returncode == 0 and "warning:" not in res.stderr
