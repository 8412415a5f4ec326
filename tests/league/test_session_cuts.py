"""Duplicate play that memory cannot beat: in session mode no bot process
plays the same deal twice (referee.league.work.session_order), whatever it
remembers, and a remembering bot does no better than its honest copy."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from referee.league import schedule as sched
from referee.league.config import load_config
from referee.league.runner import _batches
from referee.league.work import UnitMaker, session_order
from referee.runtime.gamelog import read_log_bytes

from .conftest import REFEREE, REPO, cli, processes_with

REMEMBERER = REPO / "tests" / "hostile" / "bots" / "rememberer.py"
TRACKER = REPO / "sample_bots" / "tracker_bot.py"


def _segments(unit) -> list[list]:
    out: list[list] = []
    for i, g in enumerate(unit.games):
        if i == 0 or i in unit.fresh:
            out.append([])
        out[-1].append(g)
    return out


CONFIG = (
    'seed = 3\nout = "out"\n'
    + "".join(f'[[bots]]\nname = "{n}"\ncommand = ["x"]\n' for n in "abcd")
    + '[[variants]]\nname = "kwartet"\nsizes = [3, 4]\ndeals = 6\n'
)


def test_a_session_plays_each_deal_at_most_once(make_config) -> None:
    league = load_config(make_config(CONFIG))
    maker = UnitMaker(league)
    for shares in (1, 2, 3, 5):
        done = {"kwartet-4p-t0000-d001-r2", "kwartet-3p-t0001-d000-r0"} if shares == 3 else set()
        units = [b.unit for b in _batches(league, maker, done, shares, frozenset())]
        played = [g.game_id for u in units for g in u.games]
        assert sorted(played) == sorted(g.game_id for g in sched.games(league) if g.game_id not in done)
        for unit in units:
            for seg in _segments(unit):
                seeds = [g.seed for g in seg]
                assert len(seeds) == len(set(seeds)), (shares, unit.table, [g.game_id for g in seg])
            # the fewest fresh sets: as many as the unit plays its most played deal
            plays = max(sum(1 for h in unit.games if h.seed == g.seed) for g in unit.games)
            assert len(_segments(unit)) == plays
    # a whole table in one unit: its rotations in turn, each over every deal in order
    table = next(sched.tables(league))
    ordered, cuts = session_order(list(sched.table_games(league, table)))
    assert [g.game_id[-7:] for g in ordered[:7]] == [f"d00{d}-r0" for d in range(6)] + ["d000-r1"]
    assert cuts == {6, 12}
    # per-game mode keeps the schedule's order (every game has fresh processes anyway), and so does
    # reuse = "table" (one process per position for the whole unit: trusted bots only)
    for reuse, mode in (("game", "game"), ("table", "session")):
        other = load_config(make_config(CONFIG.replace('out = "out"', f'out = "out"\nreuse = "{reuse}"'), "o.toml"))
        table = next(sched.tables(other))
        unit = UnitMaker(other).unit(table, list(sched.table_games(other, table)))
        assert not unit.fresh and unit.reuse == mode
        assert [g.game_id for g in unit.games] == [g.game_id for g in sched.table_games(other, table)]
        assert [len(b.unit.games) for b in _batches(other, UnitMaker(other), set(), 2, frozenset())][:2] == [9, 9]


def _shares(ledger: Path) -> dict[str, float]:
    won: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    with sqlite3.connect(ledger) as db:
        for bots, shares in db.execute("select bots, win_shares from games"):
            for b, w in zip(json.loads(bots), json.loads(shares), strict=True):
                won[b][0] += w
                won[b][1] += 1
    return {b: w / n for b, (w, n) in won.items()}


def test_a_remembering_bot_does_no_better_than_its_honest_copy(make_config, tmp_path: Path) -> None:
    # The rememberer keeps, per deal, where every card it saw was at the start, in its
    # process and in a file wherever it can write; with one process per lineup position
    # for a whole table it wins ~3/4 of a night like this (docs/SECURITY.md)
    tag = f"memory-{tmp_path.name}"
    bots = "".join(
        f'[[bots]]\nname = "{name}"\ncwd = "{REPO}"\n'
        f'command = ["{sys.executable}", "{REMEMBERER}", "{TRACKER}", {honest}"{tag}"]\n'
        for name, honest in (
            ("remembers", ""),
            ("honest-a", '"--honest", '),
            ("honest-b", '"--honest", '),
            ("honest-c", '"--honest", '),
        )
    )
    cfg = make_config(
        'name = "memory"\nseed = 11\nout = "out"\nreuse = "session"\n[clock]\nmove_ms = 3000\nstartup_ms = 20000\n'
        + bots
        + '[[variants]]\nname = "kwartet"\nsizes = 4\ndeals = 8\n'
    )
    proc = cli("run", str(cfg))
    assert proc.returncode == 0, proc.stderr
    share = _shares(tmp_path / "out" / "ledger.sqlite")
    honest = sum(share[b] for b in ("honest-a", "honest-b", "honest-c")) / 3
    # 32 games: a win share's standard error is ~0.08; the leak gave 0.75
    assert share["remembers"] < honest + 0.25, share
    # and it never met a deal it had seen: it says so on stderr, which every game log copies
    tails = [
        json.loads(line)["stderr"]["tail"]
        for log in (tmp_path / "out" / "games").glob("*.jsonl*")
        for line in read_log_bytes(log.read_bytes()).splitlines()
        if b'"stderr"' in line[:12]
    ]
    assert len(tails) == 32 * 4 and not any("rememberer: recognised" in t for t in tails)
    assert not processes_with(tag)


def test_kill_and_resume_give_the_same_ledger_and_it_verifies(make_config, tmp_path: Path) -> None:
    # the seeded bot plays a game the same whatever its process played before, so a night
    # played through and one killed (SIGKILL) and resumed must hold the same results
    seeded = REPO / "tests" / "bots" / "seeded_bot.py"
    tag = f"resume-{tmp_path.name}"
    body = "".join(f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{seeded}", "{tag}"]\n' for n in "abcd")
    body += '[[variants]]\nname = "kwartet"\nsizes = 4\ndeals = 4\n'
    whole = make_config(f'seed = 9\nout = "whole"\nconcurrency = 2\n{body}', "whole.toml")
    cut = make_config(f'seed = 9\nout = "cut"\nconcurrency = 2\n{body}', "cut.toml")
    assert cli("run", str(whole), "--quiet").returncode == 0
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [*REFEREE, "run", str(cut), "--progress-every", "0"], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    seen = 0
    for _line in proc.stdout:  # one line per finished game
        seen += 1
        if seen >= 6:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert cli("run", str(cut), "--quiet").returncode == 0

    def rows(out: str) -> list[tuple]:
        with sqlite3.connect(tmp_path / out / "ledger.sqlite") as db:
            return sorted(db.execute("select game_id, bots, seed, scores, ranks, win_shares, reason from games"))

    assert len(rows("whole")) == 16 and rows("cut") == rows("whole")
    check = cli("verify", str(tmp_path / "cut"))
    assert check.returncode == 0, check.stdout + check.stderr
    assert not processes_with(tag)
