"""One plan of a night for every command: growth, a secret seed and the ladder, in every combination.

``referee plan``, ``run``, ``verify``, ``standings``, the report, the live page and ``ladder`` all
ask :class:`referee.league.night.NightPlan`; these nights are real (instant bots, real subprocesses).
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from referee.cli import main
from referee.league.ladder import open_ladder, play_ladder
from referee.league.ledger import Ledger
from referee.league.night import NightPlan
from referee.league.summary import notes, summarize
from referee.view.night import write_outputs
from referee.view.serve import LeagueState

from .conftest import REPO

INSTANT = REPO / "tests" / "bots" / "instant_bot.py"


def _config(path: Path, names: list[str], *, seed: str = "5", kind: str = "balanced") -> Path:
    """5 bots at 3 seats, 2 tables each: 4 tables of 3 games; each 2 bots added: 4 tables more."""
    bots = "".join(
        f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{INSTANT}"]\nenv = {{ BOT_SEED = "{ord(n)}" }}\n'
        for n in names
    )
    schedule = f'[schedule]\nkind = "{kind}"\nseats_per_bot = 2\n' if kind != "round-robin" else ""
    # reuse = "table": one process per seat for a whole table (3 starts, not 9: deals = 1 gives every
    # game of a table the same deal, which session mode plays with fresh processes); what is checked
    # here is the plan, the counts and verify, not how bots are reused (test_session_cuts)
    path.write_text(
        f'seed = {seed}\nout = "out"\nconcurrency = 2\nreuse = "table"\n[clock]\nmove_ms = 5000\n{schedule}{bots}'
        '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'
    )
    return path


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


def _summary(out: Path) -> tuple[Any, list[str]]:
    with Ledger.in_dir(out, create=False) as ledger:
        s = summarize(out, ledger)
    return s, notes(s)


def _live(out: Path) -> dict[str, Any]:
    return LeagueState(out).status()


def _verified(capsys: pytest.CaptureFixture[str], out: Path) -> str:
    rc, text, err = _cli(capsys, "verify", str(out))
    assert rc == 0, text + err
    return text


def test_a_grown_night_verifies_and_its_report_and_live_page_count_the_top_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = _config(tmp_path / "night.toml", list("abcde"))
    out = tmp_path / "out"
    assert _cli(capsys, "run", str(cfg), "--quiet")[0] == 0
    assert "12 of 12 planned games in the ledger" in _verified(capsys, out)
    _config(cfg, list("abcdefg"))
    # the growth recorded, the top-up not played yet: its games are planned, none played
    from referee.league.config import load_config
    from referee.league.outdir import open_night

    league, ledger, growth = open_night(load_config(cfg))
    with ledger:
        assert growth is not None and growth.new_games == 12
        ledger.commit_staged()
    s, lines = _summary(out)
    assert (s.played, s.planned, s.complete) == (12, 24, False)
    assert any(n.startswith("INCOMPLETE: 12 of 24 planned games played") for n in lines)
    live = _live(out)
    assert (live["done"], live["planned"], live["complete"]) == (12, 24, False)
    rc, text, _ = _cli(capsys, "report", str(out))
    page = (out / "report.html").read_text()
    assert "12 played of 24 planned" in page and 'data-testid="complete"' not in page
    assert 'data-testid="incomplete"' in page
    assert "12 of 24 planned games in the ledger" in _verified(capsys, out)
    # the top-up played: played = planned, and only now Complete
    assert _cli(capsys, "run", str(cfg), "--quiet")[0] == 0
    assert "all 24 games replay" in _verified(capsys, out)
    page = (out / "report.html").read_text()
    assert "24 played of 24 planned" in page and "Complete: all 24 planned games were played." in page
    s, lines = _summary(out)
    assert (s.played, s.planned, s.complete) == (24, 24, True) and not any("INCOMPLETE" in n for n in lines)
    live = LeagueState(out).status()
    assert (live["done"], live["planned"], live["complete"]) == (24, 24, True)
    rc, text, _ = _cli(capsys, "plan", str(cfg), "--json")
    assert rc == 0 and json.loads(text)["games"] == 24


def test_a_secret_night_plans_grows_and_ladders_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = _config(tmp_path / "night.toml", list("abcde"), seed='"secret"')
    out = tmp_path / "out"
    # before the night: the counts, no coverage (the tables are drawn from a seed not drawn yet), no seed
    rc, text, err = _cli(capsys, "plan", str(cfg))
    assert rc == 0, err
    assert "seed secret" in text and "coverage: the tables are drawn from the secret seed" in text
    assert "coverage of kwartet" not in text
    rc, text, _ = _cli(capsys, "plan", str(cfg), "--json")
    data = json.loads(text)
    assert rc == 0 and data["games"] == 12 and "coverage" not in data and "coverage_note" in data
    assert _cli(capsys, "run", str(cfg), "--quiet")[0] == 0
    with Ledger.in_dir(out, create=False) as ledger:
        seed = ledger.get_meta("secret_seed")
    assert seed is not None
    # after: who meets whom (drawn from the ledger's seed), and still no seed printed
    rc, text, err = _cli(capsys, "plan", str(cfg))
    assert rc == 0 and "coverage of kwartet at 3 seats" in text and seed not in text + err
    # growth of a secret night: the top-up is drawn from a secret of its own, drawn by the run that
    # plays it (so the plan shows its coverage after that run), verify passes
    _config(cfg, list("abcdefg"), seed='"secret"')
    rc, text, err = _cli(capsys, "plan", str(cfg))
    assert rc == 0, err
    assert "coverage of top-up 1: its tables are drawn from a secret of its own" in text and seed not in text
    rc, text, _ = _cli(capsys, "plan", str(cfg), "--json")
    assert rc == 0 and "top-up 1" in json.loads(text)["coverage_note"] and len(json.loads(text)["coverage"]) == 1
    rc, _, err = _cli(capsys, "run", str(cfg), "--quiet")
    assert rc == 0 and "2 bots added: 12 new games (f, g)" in err
    rc, text, err = _cli(capsys, "plan", str(cfg))
    assert rc == 0 and "top-up 1 (tables t0004-t0007: f, g added)" in text and seed not in text + err
    text = _verified(capsys, out)
    assert "24 of 24 planned games" in text and seed not in text
    # the seed is shown once every planned game is played
    assert _summary(out)[0].seed == int(seed)
    # the ladder on the same secret night: plays with the ledger's seed, and verify checks its games
    rc, text, err = _cli(capsys, "ladder", str(cfg), "--tables", "1", "--quiet")
    assert rc == 0, err
    text = _verified(capsys, out)
    assert "24 of 24 planned games in the ledger, 3 ladder games" in text and seed not in text


def test_a_secret_ladder_from_scratch_keeps_its_seed_hidden(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _config(tmp_path / "night.toml", list("abcd"), seed='"secret"', kind="round-robin")
    out = tmp_path / "out"
    rc, text, err = _cli(capsys, "ladder", str(cfg), "--tables", "5", "--quiet")
    assert rc == 0, err
    with Ledger.in_dir(out, create=False) as ledger:
        seed = ledger.get_meta("secret_seed")
        ids = [r.game_id for r in ledger.rows()]
    assert seed is not None and len(ids) == 15 and all("-L" in i for i in ids)
    s, lines = _summary(out)
    # a ladder: no planned game played, so neither INCOMPLETE nor Complete, and the seed stays secret
    # (more ladder games than planned ones must not reveal it: only every planned game played does)
    assert (s.played, s.ladder, s.complete, s.incomplete, s.seed) == (0, 15, False, False, "secret")
    assert any(n.startswith("15 ladder games") for n in lines)
    standings = json.loads((out / "standings.json").read_text())
    assert standings["seed"] == "secret" and seed not in json.dumps(standings)
    page = (out / "report.html").read_text()
    assert "0 played of 12 planned, 15 ladder games" in page and 'data-testid="complete"' not in page
    assert "0 of 12 planned games in the ledger, 15 ladder games" in _verified(capsys, out)


def _sql(out: Path, statement: str) -> None:
    db = sqlite3.connect(out / "ledger.sqlite")
    with db:
        db.execute(statement)
    db.close()


def test_verify_checks_ladder_games_against_the_ladder_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = _config(tmp_path / "night.toml", list("abcd"), kind="round-robin")
    out = tmp_path / "out"
    assert _cli(capsys, "run", str(cfg), "--quiet")[0] == 0
    ladder = open_ladder(str(cfg), outputs=write_outputs)
    with ladder.ledger:
        play_ladder(ladder, tables=2)
    text = _verified(capsys, out)
    assert re.search(r"all 18 games replay .*; 12 of 12 planned games in the ledger, 6 ladder games", text)
    s, _ = _summary(out)
    assert (s.played, s.planned, s.ladder, s.complete) == (12, 12, 6, True)
    # the live page counts the planned games played, the ladder's apart (it said 18 done of 12)
    live = LeagueState(out).status()
    assert (live["done"], live["planned"], live["ladder"], live["complete"]) == (12, 12, 6, True)
    assert sum(v["done"] for v in live["variants"].values()) == 12
    with Ledger.in_dir(out, create=False) as ledger:
        night = NightPlan.of_ledger(ledger)
        rows = [r for r in ledger.rows() if "-L" in r.game_id]
        assert set(night.ladder(ledger.rows())) == {r.game_id for r in rows}
    # a ladder row whose seating is not its table's, one with another seed, one of a table never recorded
    seated = {r.game_id: r.bots for r in rows}
    bots = json.dumps(list(reversed(seated["kwartet-3p-L000000-d000-r1"])))
    _sql(out, f"UPDATE games SET bots = '{bots}' WHERE game_id = 'kwartet-3p-L000000-d000-r1'")
    _sql(out, "UPDATE games SET seed = 12 WHERE game_id = 'kwartet-3p-L000001-d000-r2'")
    _sql(out, "UPDATE games SET game_id = 'kwartet-3p-L000009-d000-r5' WHERE game_id = 'kwartet-3p-L000001-d000-r0'")
    rc, text, _ = _cli(capsys, "verify", str(out), "--most", "0")
    assert rc == 1, text
    wrong = list(reversed(seated["kwartet-3p-L000000-d000-r1"]))
    assert f"row not in the schedule: kwartet-3p-L000000-d000-r1: its bots is {wrong!r} in the ledger" in text
    assert "at the ladder table its first game records" in text
    assert "row not in the schedule: kwartet-3p-L000001-d000-r2: its seed is 12 in the ledger" in text
    assert "row not in the schedule: kwartet-3p-L000009-d000-r5: no ladder table" in text
    assert "FAILED: 3 problems (3 rows not in the schedule); 15 of 18 games verified; 12 of 12 planned" in text


# --------------------------------------------------------------------------
# the schedule kinds, directly (no bots)


def _league(tmp_path: Path, kind: str, names: list[str], roster: list[str], grown_from: int) -> Any:
    import dataclasses

    from referee.league.config import Epoch, load_config

    cfg = tmp_path / f"{kind}.toml"
    schedule = {
        "round-robin": "",
        "balanced": '[schedule]\nkind = "balanced"\nseats_per_bot = 3\n',
        "gauntlet": '[schedule]\nkind = "gauntlet"\nseats_per_bot = 3\nchallengers = ["b1", "b5"]\n',
    }[kind]
    bots = "".join(f'[[bots]]\nname = "{n}"\ncommand = ["python3", "bot.py"]\n' for n in names)
    cfg.write_text(
        f'seed = 7\nout = "out"\n{schedule}{bots}[[variants]]\nname = "kwartet"\nsizes = [3, 4]\ndeals = 2\n'
    )
    league = load_config(cfg)
    epochs = (Epoch(bots=tuple(roster[:grown_from])), Epoch(bots=tuple(names), added=tuple(roster[grown_from:])))
    return dataclasses.replace(league, roster=tuple(roster), epochs=epochs if kind != "round-robin" else ())


@pytest.mark.parametrize("kind", ["round-robin", "balanced", "gauntlet"])
@pytest.mark.parametrize("night", ["grown", "withdrawn"])
def test_every_kind_plans_the_games_it_makes(tmp_path: Path, kind: str, night: str) -> None:
    """The plan's counts are the games the schedule makes, a table made on its own is the one the
    schedule lists, and NightPlan holds exactly the schedule's ids (a grown night, one with a bot
    withdrawn after it grew)."""
    from referee.league import schedule as sched

    roster = [f"b{i}" for i in range(8)]
    names = [n for n in roster if n != "b3"] if night == "withdrawn" else roster
    league = _league(tmp_path, kind, names, roster, 5)
    assert sched.kind_of(league.variants[0]) is sched.KINDS[kind]
    games = list(sched.games(league))
    assert sched.total_games(league) == len(games) > 0
    assert len({g.game_id for g in games}) == len(games)
    for t in sched.tables(league):
        assert sched.table_at(league, t.variant, t.size, t.index) == t
    withdrawn = set(league.withdrawn)
    assert all(not withdrawn.intersection(league.bots[i].name for i in g.seats) for g in games)
    night_plan = NightPlan(league)
    assert night_plan.total() == len(games)
    made = {g.game_id for g in games}
    offsets = sched.table_offsets(league)
    every = {
        f"kwartet-{s}p-t{t:04d}-d{d:03d}-r{r}"
        for s in (3, 4)
        for t in range(offsets[("kwartet", s)][1] + 2)
        for d in range(3)
        for r in range(s + 1)
    }
    held = {i for i in every if night_plan.holds(i)}
    assert made <= held  # the withdrawn bots' tables are held too (the games they played are the night's)
    if not withdrawn:
        assert held == made
