"""A bot's junk cannot fill a game log: a timed-out bot that floods megabytes of
stale lines gets at most STALE_LOG_LINES / STALE_LOG_BYTES of them logged per game,
the rest counted in its stderr record; the log still replays (referee replay)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import trio

from referee.cli import main
from referee.core.machine import STALE_LOG_BYTES, STALE_LOG_LINES
from referee.runtime.gamelog import read_log_bytes

from .conftest import ZOO, assert_no_survivors, new_tag
from .test_zoo_games import play_with


def test_a_stale_line_flood_is_counted_not_logged(tmp_path: Path) -> None:
    result, tag = trio.run(lambda: play_with("staleflood", ("100000",), None, 0, tmp_path))
    trio.run(assert_no_survivors, tag)
    assert {f.fault for f in result.faults if f.seat == 1} == {"timeout", "stale"}
    log = Path(result.log_path)
    records = [json.loads(line) for line in read_log_bytes(log.read_bytes()).splitlines()]
    stale = [r["input"] for r in records if r.get("input", {}).get("type") == "stale_line"]  # log version 3
    assert all(s["seat"] == 1 for s in stale) and 1 <= len(stale) <= STALE_LOG_LINES
    assert sum(len(base64.b64decode(s["line"])) for s in stale) <= STALE_LOG_BYTES
    err = next(r["stderr"] for r in records if "stderr" in r and r["stderr"]["seat"] == 1)
    dropped = err["stale_dropped"]
    assert dropped["lines"] > 0 and dropped["bytes"] >= dropped["lines"] * 20  # it read, counted, did not log
    assert len(read_log_bytes(log.read_bytes())) < 512 * 1024  # a flood of up to 8 MB: the log stays small
    assert all("stale_dropped" not in r["stderr"] for r in records if "stderr" in r and r["stderr"]["seat"] != 1)
    assert main(["replay", str(log)]) == 0  # and the game is still proven


def test_a_bots_stderr_in_the_logs_of_a_night_is_capped(tmp_path: Path) -> None:
    # the stderr flooder writes ~200 KB to stderr every turn, so every game log would copy a full
    # 64 KiB tail of it; with a budget of 150 KB for the night its tails stop at the budget, then
    # each game keeps 1 KiB and says how much it left out (the other bots' tails are untouched)
    from referee.league import schedule as sched
    from referee.league.config import load_config
    from referee.league.local import LocalExecutor
    from referee.league.work import UnitMaker
    from referee.runtime.game import OVER_BUDGET_TAIL

    flood = ZOO / "stderrflood.py"
    legal = ZOO / "legal.py"
    tag = new_tag("budget")
    cfg = tmp_path / "night.toml"
    cfg.write_text(
        'seed = 2\nout = "out"\n[clock]\nmove_ms = 3000\nstartup_ms = 20000\n'
        f'[[bots]]\nname = "flood"\ncommand = ["{{python}}", "{flood}", "{tag}", "200"]\n'
        + "".join(f'[[bots]]\nname = "{n}"\ncommand = ["{{python}}", "{legal}", "{tag}"]\n' for n in "bc")
        + '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 2\n'
    )
    league = load_config(cfg)
    table = next(sched.tables(league))
    unit = UnitMaker(league).unit(table, list(sched.table_games(league, table)))
    executor = LocalExecutor(tmp_path / "logs", log_budget=150_000)
    (tmp_path / "logs").mkdir()
    done: list = []
    trio.run(executor.play, unit, done.append)
    assert len(done) == 6 and not any(d.result.faults for d in done)
    tails = []
    for d in done:
        records = [json.loads(line) for line in read_log_bytes(Path(d.result.log_path).read_bytes()).splitlines()]
        tails.append({r["stderr"]["bot"]: r["stderr"]["tail"] for r in records if "stderr" in r})
    flood_bytes = [len(t["flood"].encode()) for t in tails]
    assert flood_bytes[0] > 60_000  # the first game: its whole tail
    over = [t["flood"] for t in tails if "log budget for the night is spent" in t["flood"]]
    assert over and all(len(t) < OVER_BUDGET_TAIL + 200 for t in over)
    assert sum(flood_bytes) <= 150_000 + len(done) * (OVER_BUDGET_TAIL + 200)
    assert all("budget" not in t[n] for t in tails for n in "bc")
    trio.run(assert_no_survivors, tag)
