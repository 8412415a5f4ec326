"""The game log as a format: version 1 logs (written by the previous referee) still
replay; logs are reproducible record for record; a log that reaches its size cap
says so and replays up to there."""

from __future__ import annotations

import json
import re
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.cli import main
from referee.core.records import LOG_VERSION, record_type
from referee.runtime import BotSpec, FaultPolicy
from referee.runtime.replay import load_log, replay

from .helpers import BOTS, RANDOM_BOT, bot, log_records, play

DATA = Path(__file__).parent / "data"
PY = sys.executable


@pytest.fixture(scope="module")
def v1_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Logs written by the referee before the hand machine (log version 1): faults of every
    kind, retries, a simultaneous chickens decision with refused replies, stale lines, a
    match, an invalid UTF-8 line and lines over the length limit."""
    d = tmp_path_factory.mktemp("v1")
    with tarfile.open(DATA / "v1-logs.tar.gz") as tar:
        tar.extractall(d, filter="data")
    return {p.stem: p for p in sorted(d.glob("*.jsonl"))}


def test_version_1_logs_still_replay(v1_logs, capsys):
    assert set(v1_logs) == {"v1-chickens", "v1-kwartet", "v1-late", "v1-match"}
    kinds: set[str] = set()
    for name, path in v1_logs.items():
        assert json.loads(path.read_text().splitlines()[0])["log_version"] == 1
        report = replay(path)
        assert report.ok, (name, report.mismatches)
        kinds |= {f["fault"] for f in report.faults}
    assert kinds == {"crash", "illegal", "malformed", "stale", "timeout"}


@pytest.fixture(scope="module")
def v2_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Logs written by the referee before the typed input stream (log version 2, main at b50ad56,
    written by data/make_v2_logs.py): faults of every kind, retries, lines too long, stale lines, a
    bot dead at the start, a bank, a cpu clock, simultaneous chickens plays, matches."""
    d = tmp_path_factory.mktemp("v2")
    with tarfile.open(DATA / "v2-logs.tar.gz") as tar:
        tar.extractall(d, filter="data")
    return {p.stem: p for p in sorted(d.glob("*.jsonl"))}


def test_version_2_logs_still_replay(v2_logs):
    assert len(v2_logs) == 6
    kinds: set[str] = set()
    records: set[str] = set()
    retried: set[str] = set()
    for name, path in v2_logs.items():
        assert json.loads(path.read_text().splitlines()[0])["log_version"] == 2
        report = replay(path)
        assert report.ok, (name, report.mismatches)
        kinds |= {f["fault"] for f in report.faults}
        recs = log_records(path)[1:]
        records |= {record_type(r)[0] for r in recs}  # type: ignore[index]
        retried |= {r["retry"]["fault"] for r in recs if "retry" in r}
    assert kinds == {"crash", "illegal", "stale", "timeout"} and retried == {"illegal", "malformed"}
    assert {"in", "bad", "retry"} <= records and "input" not in records


def test_a_forged_version_2_log_is_caught(v2_logs, tmp_path, capsys):
    lines = v2_logs["v2-kwartet"].read_text().splitlines()
    i = next(k for k, x in enumerate(lines) if '"long":true' in x)  # a line too long: its record is the input
    rec = json.loads(lines[i])
    rec["from"] = (rec["from"] + 1) % 4
    forged = tmp_path / "forged.jsonl"
    forged.write_text("\n".join(lines[:i] + [json.dumps(rec)] + lines[i + 1 :]) + "\n")
    assert main(["replay", "-q", str(forged)]) == 1
    assert f"line {i + 1}: " in capsys.readouterr().out


def test_a_forged_version_1_log_is_caught(v1_logs, tmp_path, capsys):
    lines = v1_logs["v1-kwartet"].read_text().splitlines()
    i = next(k for k, x in enumerate(lines) if '"fallback":true' in x)
    rec = json.loads(lines[i])
    rec["act"]["action"]["target"] = (rec["act"]["action"]["target"] + 1) % 4
    forged = tmp_path / "forged.jsonl"
    forged.write_text("\n".join(lines[:i] + [json.dumps(rec)] + lines[i + 1 :]) + "\n")
    assert main(["replay", "-q", str(forged)]) == 1
    assert f"line {i + 1}: the fallback" in capsys.readouterr().out


def _comparable(path: str | Path) -> list[Any]:
    """A log without what is measured (times, think times, the start date)."""

    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in ("t", "ms", "wall_ms", "think_ms", "started")}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return [strip(r) for r in log_records(path)]


async def test_a_chickens_log_is_the_same_record_for_record_in_two_runs(tmp_path):
    """Simultaneous plays reach the referee in any order; the log records them in seat order,
    so two runs of the same game with deterministic bots give the same log."""
    logs = []
    for run in range(2):
        specs = [
            bot("t", BOTS / "instant_bot.py", BOT_SEED="3"),
            BotSpec("r", [PY, str(RANDOM_BOT.parent / "tracker_bot.py"), "7"]),
            bot("i", "illegal_bot.py", BOT_THEN_LEGAL="1"),
            bot("u", "instant_bot.py", BOT_SEED="4"),
        ]
        result, report = await play(
            specs, "chickens", seed=21, log_dir=tmp_path / f"run{run}", game_id="g-1", policy=FaultPolicy(retries=1)
        )
        assert report.ok, report.mismatches
        assert any("retry" in r for r in log_records(result.log_path))
        logs.append(_comparable(result.log_path))
    assert len(logs[0]) == len(logs[1])
    for a, b in zip(*logs, strict=True):
        assert a == b


async def test_a_log_that_reaches_its_size_cap_says_so_and_replays_up_to_there(tmp_path, capsys):
    specs = [bot(f"i{i}", "instant_bot.py", BOT_SEED=str(i + 1)) for i in range(4)]
    result, report = await play(
        specs, "happy-families", seed=5, log_dir=tmp_path, game_id="g-capped", policy=FaultPolicy(max_log_bytes=65536)
    )
    assert result.log_capped and result.reason == "complete"
    recs = log_records(result.log_path)
    assert recs[0]["log_version"] == LOG_VERSION
    capped = [r for r in recs if "capped" in r]
    assert len(capped) == 1 and 65536 <= capped[0]["capped"]["bytes"] < 65536 * 2 + 4096
    assert recs[-1]["footer"]["log_capped"] is True and recs[-1]["footer"]["scores"] == result.scores
    assert [r["stderr"]["seat"] for r in recs if "stderr" in r] == [0, 1, 2, 3]
    assert (await trio.Path(result.log_path).stat()).st_size < 65536 * 2 + 8192
    assert report.ok and report.capped, report.mismatches
    assert main(["replay", "-q", str(result.log_path)]) == 0
    assert "verified up to the log's size cap" in capsys.readouterr().out
    # a game that fits is not capped
    result, report = await play(specs, "happy-families", seed=5, log_dir=tmp_path, game_id="g-small")
    assert not result.log_capped and "log_capped" not in log_records(result.log_path)[-1]["footer"]


def test_every_record_the_writer_writes_decodes_as_its_struct(tmp_path):
    """The frequent records are formatted by hand; load_log decodes every line strictly
    with the one definition of each record (referee.core.records)."""
    d = tmp_path / "logs"
    bad = f"{PY} {BOTS / 'badutf8_bot.py'}"
    assert (
        main(
            [
                "play",
                "kwartet",
                "--seed",
                "3",
                "--retries",
                "1",
                "--bot",
                f"a={PY} {RANDOM_BOT}",
                "--bot",
                f"b={bad}",
                "--bot",
                f"c={PY} {BOTS / 'illegal_bot.py'}",
                "--log",
                str(d),
                "--game-id",
                "rec",
                "--grace-ms",
                "100",
            ]
        )
        == 0
    )
    records = load_log(d / "rec.jsonl")
    kinds = {record_type(raw)[0] for _, _, raw in records[1:]}  # type: ignore[index]
    assert {"hand", "out", "act", "fault", "hand_end", "stderr", "footer"} <= kinds
    assert {"in", "bad"} & kinds and "retry" in kinds
    bads = [raw for _, _, raw in records if "bad" in raw]
    assert bads and all(type(b["line"]) is int for b in bads)
    assert any("raw" in b for b in bads)  # an invalid UTF-8 line is kept exactly (base64) besides its text
    assert re.search(r"not valid UTF-8", json.dumps([raw for _, _, raw in records if "fault" in raw or "retry" in raw]))


async def test_compressed_logs_are_small_and_replay_like_plain_ones(tmp_path, capsys):
    import gzip

    from referee.rules import get_variant
    from referee.runtime import ClockSpec, GameSpec, play_game, start_bots
    from referee.view.frames import frames_from_log

    specs = [bot(f"i{i}", "instant_bot.py", BOT_SEED=str(i + 1)) for i in range(4)]
    plain, _ = await play(specs, "kwartet", seed=9, log_dir=tmp_path / "plain", game_id="g-9")
    async with trio.open_nursery() as n:
        sessions = await start_bots(specs, ClockSpec(), n)
        try:
            packed = await play_game(
                GameSpec("g-9", get_variant("kwartet"), 4, seed=9, clock=ClockSpec(move_ms=2000)),
                sessions,
                tmp_path / "packed",
                compress=True,
            )
        finally:
            for s in sessions:
                await s.close()
    assert packed.log_path.endswith("g-9.jsonl.zst")
    zst, txt = Path(packed.log_path), Path(plain.log_path)
    packed_data, plain_data = await trio.Path(zst).read_bytes(), await trio.Path(txt).read_bytes()
    assert packed_data[:4] == b"\x28\xb5\x2f\xfd" and len(packed_data) * 5 < len(plain_data)
    assert _comparable(zst) == _comparable(txt)
    assert replay(zst).ok and frames_from_log(zst)["verified"]
    gz = tmp_path / "g-9.jsonl.gz"
    gz.write_bytes(gzip.compress(plain_data))
    assert replay(gz).ok
    cut = tmp_path / "cut.jsonl.zst"
    cut.write_bytes(packed_data[: len(packed_data) // 2])
    assert main(["replay", "-q", str(cut)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and ("cut off" in err or "truncated" in err or "not JSON" in err), err
