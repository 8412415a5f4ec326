"""Compact logs: a league night writes its game logs zstandard-compressed by default
(``[output] compress = "none"`` turns it off), and every reader takes both forms:
replay, standings, merge and report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.cli import main
from referee.league.ledger import Ledger
from referee.runtime.gamelog import is_zstd, read_log_bytes

from .conftest import bots_toml

KWARTET_NIGHT = (
    'seed = 11\nout = "OUT"\nconcurrency = 2\nOUTPUT'
    + bots_toml(["a", "b", "c", "d"])
    + '[[variants]]\nname = "kwartet"\nsizes = SIZES\ndeals = DEALS\n'
)


def _config(out: str, output: str = "", sizes: str = "4", deals: int = 2) -> str:
    return (
        KWARTET_NIGHT.replace("OUT", out, 1)
        .replace("OUTPUT", output, 1)
        .replace("SIZES", sizes)
        .replace("DEALS", str(deals))
    )


def _night(
    make_config,
    out: str,
    output: str = "",
    name: str = "league.toml",
    shard: str | None = None,
    sizes: str = "4",
    deals: int = 2,
) -> Path:
    cfg = make_config(_config(out, output, sizes, deals), name=name)
    args = ["run", str(cfg), "--quiet"] + (["--shard", shard] if shard else [])
    assert main(args) == 0
    return cfg.parent / out


def _logs(out: Path) -> list[Path]:
    return sorted(p for p in (out / "games").iterdir() if ".jsonl" in p.name)


def test_a_kwartet_night_writes_compact_logs_that_replay(make_config, capsys: pytest.CaptureFixture[str]) -> None:
    out = _night(make_config, "zst")
    logs = _logs(out)
    assert logs and all(p.name.endswith(".jsonl.zst") and is_zstd(p.read_bytes()) for p in logs)
    with Ledger.in_dir(out, create=False) as ledger:
        rows = list(ledger.rows())
    assert len(rows) == len(logs) and all(r.log_path == f"games/{r.game_id}.jsonl.zst" for r in rows)
    sizes = [p.stat().st_size for p in logs]
    assert sum(sizes) / len(sizes) <= 10_000, sizes  # the target: at most 10 KB per 4-seat kwartet game
    plain = [len(read_log_bytes(p.read_bytes())) for p in logs]
    assert sum(plain) > 4 * sum(sizes)  # and it is the compression that makes it so
    assert main(["replay", "-q", str(logs[0])]) == 0
    capsys.readouterr()
    assert main(["standings", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads((out / "standings.json").read_text())


def test_compress_none_writes_plain_logs_and_may_change_on_resume(make_config) -> None:
    out = _night(make_config, "plain", '[output]\ncompress = "none"\n')
    logs = _logs(out)
    assert logs and all(p.name.endswith(".jsonl") and not is_zstd(p.read_bytes()) for p in logs)
    # the output form is not part of the results: the same night with compression resumes (nothing to play)
    cfg = make_config(_config("plain"), name="league.toml")
    assert main(["run", str(cfg), "--quiet"]) == 0
    assert _logs(out) == logs


def test_merge_standings_and_report_read_both_forms(
    make_config, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 5 tables (3 and 4 seats), one deal each: 16 games in two shards; reuse = "table": one process per
    # seat for a whole table (session mode starts a fresh set for every rotation of the deal)
    table = 'reuse = "table"\n'
    one = _night(make_config, "s1", table, shard="1/2", sizes="[3, 4]", deals=1)  # compressed
    plain = table + '[output]\ncompress = "none"\n'
    two = _night(make_config, "s2", plain, name="two.toml", shard="2/2", sizes="[3, 4]", deals=1)  # plain
    assert all(p.name.endswith(".zst") for p in _logs(one)) and all(p.suffix == ".jsonl" for p in _logs(two))
    merged = tmp_path / "merged"
    assert main(["merge", str(one), str(two), "--into", str(merged), "-q"]) == 0
    names = sorted(p.name for p in _logs(merged))
    assert names == sorted(p.name for p in _logs(one) + _logs(two))
    with Ledger.in_dir(merged, create=False) as ledger:
        for row in ledger.rows():  # each row points at its copy, in the form it came in
            assert row.log_path is not None
            footer = json.loads(read_log_bytes((merged / row.log_path).read_bytes()).splitlines()[-1])["footer"]
            assert footer["scores"] == row.scores
    capsys.readouterr()
    assert main(["standings", str(merged), "--json"]) == 0
    merged_st = json.loads(capsys.readouterr().out)
    assert merged_st == json.loads((merged / "standings.json").read_text())
    assert merged_st["scopes"]["overall"]["games"] == len(names)
    (merged / "report.html").unlink()
    assert main(["report", str(merged)]) == 0 and (merged / "report.html").stat().st_size > 0
