"""One league night on many machines: ``referee run --shard K/N`` and ``referee merge``.

Real leagues with real bot subprocesses: the same small league is played
unsharded and as three shards (all at once, as separate ``referee run``
processes); the merge must give exactly the unsharded plan and standings.
The bot is the sample random bot with a fixed seed, so a table's games come
out the same whether the table is played in a shard or in the whole league.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from referee.cli import main
from referee.league import schedule as sched
from referee.league.config import load_config
from referee.league.ledger import Ledger
from referee.league.shards import Shard
from referee.league.summary import summarize
from referee.runtime.gamelog import read_log_bytes

from .conftest import REFEREE, REPO

BOT = REPO / "sample_bots" / "random_bot.py"

#: every test here reads the one module-scoped night (five `referee run` processes): on one worker,
#: so that it is played once, not once per worker
pytestmark = pytest.mark.xdist_group("shards")


def _config(seed: int) -> str:
    bots = "".join(f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{BOT}", "42"]\n' for n in "abcd")
    return (
        f'name = "night"\nseed = {seed}\nconcurrency = 2\n'
        # generous clocks: a timeout on a busy machine would change a game's outcome in one run only
        + "[clock]\nmove_ms = 10000\nstartup_ms = 30000\n"
        + bots
        + '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n'
        + '[[variants]]\nname = "happy-families"\nsizes = 2\ndeals = 1\n'
    )


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The league played unsharded (``whole``), as shards 1..3 (``s1``..``s3``), and shard 3/3 of
    the same league with another seed (``other``): five `referee run` processes at once."""
    root = tmp_path_factory.mktemp("night")
    cfg = root / "night.toml"
    cfg.write_text(_config(7))
    other_cfg = root / "other" / "night.toml"  # same file name, so the same league name
    other_cfg.parent.mkdir()
    other_cfg.write_text(_config(8))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    runs = {
        "whole": [str(cfg), "--out", str(root / "whole"), "-q"],
        **{f"s{k}": [str(cfg), "--shard", f"{k}/3", "--out", str(root / f"s{k}")] for k in (1, 2, 3)},
        "other": [str(other_cfg), "--shard", "3/3", "--out", str(root / "other-s3"), "-q"],
    }
    procs = {
        name: subprocess.Popen(
            [*REFEREE, "run", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for name, args in runs.items()
    }
    outputs = {}
    for name, p in procs.items():
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, (name, err)
        outputs[name] = out
    return {"root": root, "cfg": cfg, "league": load_config(cfg), "stdout": outputs}


def _ids(out: Path) -> list[str]:
    with Ledger.in_dir(out, create=False) as ledger:
        return [r.game_id for r in ledger.rows()]


def _without_think_times(st: dict[str, Any]) -> dict[str, Any]:
    """Standings minus the think-time columns: those are measured, so no two runs share them."""
    for scope in st["scopes"].values():
        for row in scope["bots"]:
            row.pop("think_mean_ms")
            row.pop("think_max_ms")
    return st


def test_plan_shards_cover_every_game_once(night: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    league = night["league"]
    total = sched.total_games(league)
    assert total == 4 * 3 + 6 * 2
    counts = []
    for k in (1, 2, 3):
        assert main(["plan", str(night["cfg"]), "--shard", f"{k}/3", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["shard"] == f"{k}/3"
        counts.append((data["tables"], data["games"]))
    assert sum(t for t, _ in counts) == sched.total_tables(league) == 10
    assert sum(g for _, g in counts) == total
    # the shards' games: every planned game exactly once, whole tables only
    owner: dict[str, int] = {}
    for k in (1, 2, 3):
        games = list(sched.games(league, Shard(k, 3)))
        assert len(games) == counts[k - 1][1]
        for g in games:
            assert g.game_id not in owner
            owner[g.game_id] = k
    assert sorted(owner) == sorted(g.game_id for g in sched.games(league))
    by_table: dict[str, set[int]] = {}
    for gid, k in owner.items():
        by_table.setdefault(gid.rsplit("-d", 1)[0], set()).add(k)
    assert all(len(ks) == 1 for ks in by_table.values())
    # a shard of each run holds exactly its plan
    for k in (1, 2, 3):
        assert sorted(_ids(night["root"] / f"s{k}")) == sorted(g for g, s in owner.items() if s == k)
    for bad, words in (
        ("4/3", "1 <= K <= N"),
        ("0/3", "1 <= K <= N"),
        ("x", "expected K/N"),
        ("11/11", "at most 10 shards"),
    ):
        assert main(["plan", str(night["cfg"]), "--shard", bad]) == 2
        assert words in capsys.readouterr().err


def test_three_shards_merge_into_the_unsharded_league(
    night: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = night["root"]
    for k in (1, 2, 3):
        assert f"shard {k}/3:" in night["stdout"][f"s{k}"] and "this shard's only" in night["stdout"][f"s{k}"]
    merged = tmp_path / "merged"
    # a partial set first: merged, with the missing shard and its games reported
    assert main(["merge", str(root / "s1"), str(root / "s2"), "--into", str(merged), "-q"]) == 0
    err = capsys.readouterr().err
    missing = sched.total_games(night["league"], Shard(3, 3))
    assert f"incomplete: {missing} of 24 planned games are missing: missing shard 3/3 ({missing} games)" in err
    with Ledger.in_dir(merged, create=False) as ledger:
        meta = json.loads(ledger.get_meta("merged") or "")
    assert meta == {"of": 3, "shards": [1, 2], "complete": False, "missing_games": missing}
    with Ledger.in_dir(merged, create=False) as ledger:  # the report measures a merge against the whole night
        summary = summarize(merged, ledger)
    assert (summary.played, summary.planned, summary.incomplete) == (24 - missing, 24, True)
    assert main(["standings", str(merged), "--json"]) == 0
    assert "is an incomplete merge (shards 1, 2 of 3" in capsys.readouterr().err
    assert main(["standings", str(root / "s1"), "--json"]) == 0
    assert "holds shard 1/3 only" in capsys.readouterr().err
    # then the rest
    assert main(["merge", str(root / "s3"), "--into", str(merged), "-q"]) == 0
    cap = capsys.readouterr()
    assert "complete: all 24 planned games" in cap.out and "incomplete" not in cap.err
    planned = [g.game_id for g in sched.games(night["league"])]
    ids = _ids(merged)
    assert sorted(ids) == sorted(planned) and len(set(ids)) == len(ids)
    with Ledger.in_dir(merged, create=False) as ledger:
        assert json.loads(ledger.get_meta("merged") or "") == {
            "of": 3,
            "shards": [1, 2, 3],
            "complete": True,
            "missing_games": 0,
        }
        assert ledger.get_meta("shard") is None
        # the bots and the hello each answered at a shard's start check, as the whole night has them
        with Ledger.in_dir(root / "whole", create=False) as whole_ledger:
            assert ledger.get_meta("bots") == whole_ledger.get_meta("bots") is not None
        for row in ledger.rows():  # every log copied, the ledger points at the copy
            assert row.log_path == f"games/{row.game_id}.jsonl.zst"
            last = json.loads(read_log_bytes((merged / row.log_path).read_bytes()).splitlines()[-1])
            assert last["footer"]["scores"] == row.scores
    # the standings are the unsharded league's (ratings in game-id order), and what `standings`/`report` write
    written = (merged / "standings.json").read_text()
    whole = json.loads((root / "whole" / "standings.json").read_text())
    assert _without_think_times(json.loads(written)) == _without_think_times(whole)
    assert main(["standings", str(merged), "--json"]) == 0
    assert capsys.readouterr().out == written
    report = (merged / "report.html").read_text()
    assert main(["report", str(merged)]) == 0
    assert (merged / "report.html").read_text() == report
    # idempotent: the same inputs again change nothing
    rows_before = sqlite3.connect(merged / "ledger.sqlite").execute("SELECT * FROM games ORDER BY game_id").fetchall()
    assert main(["merge", *(str(root / f"s{k}") for k in (1, 2, 3)), "--into", str(merged), "-q"]) == 0
    assert "0 games added, 24 already there" in capsys.readouterr().out
    assert (merged / "standings.json").read_text() == written
    assert (
        sqlite3.connect(merged / "ledger.sqlite").execute("SELECT * FROM games ORDER BY game_id").fetchall()
        == rows_before
    )
    assert sorted(p.name for p in (merged / "games").glob("*.jsonl*")) == sorted(f"{g}.jsonl.zst" for g in planned)


def test_refusals(night: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = night["root"]
    s1, s2, s3, other = (str(root / n) for n in ("s1", "s2", "s3", "other-s3"))
    into = str(tmp_path / "m")

    def refused(*argv: str) -> str:
        assert main(list(argv)) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "Traceback" not in err
        return err

    # resuming a shard's directory with another shard, or none
    err = refused("run", str(night["cfg"]), "--shard", "2/3", "--out", s1, "-q")
    assert "holds shard 1/3 of the league" in err and "--shard 2/3" in err and "Resume it with --shard 1/3" in err
    err = refused("run", str(night["cfg"]), "--out", s1, "-q")
    assert "holds shard 1/3" in err and "whole league (no --shard)" in err
    err = refused("run", str(night["cfg"]), "--shard", "1/3", "--out", str(root / "whole"), "-q")
    assert "holds the whole league (no --shard)" in err
    # different configs: what differs is shown
    err = refused("merge", s1, other, "--into", into)
    assert "different config" in err and "seed: was 7, now 8" in err
    # overlapping inputs: one directory twice, or a game in two inputs
    assert "given twice" in refused("merge", s1, s2, s1 + "/", "--into", into)
    relabelled = tmp_path / "s1-as-2"
    shutil.copytree(s1, relabelled)
    db = sqlite3.connect(relabelled / "ledger.sqlite")
    db.execute("UPDATE meta SET value = '2/3' WHERE key = 'shard'")
    db.commit()
    db.close()
    err = refused("merge", s1, str(relabelled), "--into", into)
    assert "is in both" in err and "overlap" in err
    # not a league output directory; a log left behind when copying
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "not a league output directory" in refused("merge", s1, str(empty), "--into", into)
    nolog = tmp_path / "s3-nolog"
    shutil.copytree(s3, nolog)
    next((nolog / "games").glob("*.jsonl*")).unlink()
    assert "is missing; copy the whole output directory" in refused("merge", s1, str(nolog), "--into", into)
    assert not (tmp_path / "m").exists()  # nothing was written by any refusal
    # DIR already holds a different league, or a shard's own run
    assert main(["merge", s1, "--into", into, "-q"]) == 0
    capsys.readouterr()
    err = refused("merge", other, "--into", into)
    assert "already holds a different league" in err and "seed: was 7, now 8" in err
    assert "holds shard 2/3 played by `referee run`" in refused("merge", s1, "--into", s2)
    assert "shard 1/3 is in both" in refused("merge", into, s1, "--into", str(tmp_path / "m2"))
    # a merged directory is not played into
    assert "merged by `referee merge`" in refused("run", str(night["cfg"]), "--shard", "1/3", "--out", into, "-q")
