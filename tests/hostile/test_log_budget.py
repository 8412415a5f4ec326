"""A bot's junk cannot fill a game log: a timed-out bot that floods megabytes of
stale lines gets at most STALE_LOG_LINES / STALE_LOG_BYTES of them logged per game,
the rest counted in its stderr record; the log still replays (referee replay)."""

from __future__ import annotations

import json
from pathlib import Path

import trio

from referee.cli import main
from referee.core.machine import STALE_LOG_BYTES, STALE_LOG_LINES
from referee.runtime.gamelog import read_log_bytes

from .conftest import assert_no_survivors
from .test_zoo_games import play_with


def test_a_stale_line_flood_is_counted_not_logged(tmp_path: Path) -> None:
    result, tag = trio.run(lambda: play_with("staleflood", ("100000",), None, 0, tmp_path))
    trio.run(assert_no_survivors, tag)
    assert {f.fault for f in result.faults if f.seat == 1} == {"timeout", "stale"}
    log = Path(result.log_path)
    records = [json.loads(line) for line in read_log_bytes(log.read_bytes()).splitlines()]
    stale = [r for r in records if r.get("from") == 1 and ("in" in r or "bad" in r)]
    assert 1 <= len(stale) <= STALE_LOG_LINES
    assert sum(len(json.dumps(r["in"])) for r in stale if "in" in r) <= STALE_LOG_BYTES
    err = next(r["stderr"] for r in records if "stderr" in r and r["stderr"]["seat"] == 1)
    dropped = err["stale_dropped"]
    assert dropped["lines"] > 0 and dropped["bytes"] >= dropped["lines"] * 20  # it read, counted, did not log
    assert len(read_log_bytes(log.read_bytes())) < 512 * 1024  # a flood of up to 8 MB: the log stays small
    assert all("stale_dropped" not in r["stderr"] for r in records if "stderr" in r and r["stderr"]["seat"] != 1)
    assert main(["replay", str(log)]) == 0  # and the game is still proven
