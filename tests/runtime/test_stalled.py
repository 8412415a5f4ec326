"""The stalemate rule end to end: real bot processes that ask each other in circles, the ``end``
they get, the log, the result, and replay (which re-derives "stalled" and rejects a forged reason)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import msgspec
import trio

from referee.rules import AskRules
from referee.rules.match import MatchFormat
from referee.runtime import BotSpec, ClockSpec, FaultPolicy, GameSpec, play_game, start_bots
from referee.runtime.replay import replay

from .helpers import ROOT, bot, log_records, play, sent_to

TRACKER = ROOT / "sample_bots" / "tracker_bot.py"


def circle_table() -> list:
    """Issue 10's endless game: two copies of the old WRITING-A-BOT example bot and the tracker
    (seeded, so that its random tie-breaks repeat)."""
    return [
        bot("a", "looping_bot.py"),
        bot("b", "looping_bot.py"),
        BotSpec("t", [sys.executable, str(TRACKER), "1"], env=dict(os.environ)),
    ]


async def test_bots_asking_in_circles_end_stalled_and_scored_as_they_stand(tmp_path: Path) -> None:
    result, report = await play(circle_table(), "kwartet", seed=1, log_dir=tmp_path)
    assert result.reason == "stalled" and result.detail is None
    assert result.faults == [] and result.forfeits == []
    assert report.ok, report.mismatches
    recs = log_records(result.log_path)
    hand_end = [r["hand_end"] for r in recs if "hand_end" in r]
    assert hand_end == [{"game": "g-000001", "scores": result.scores, "ranks": result.ranks, "reason": "stalled"}]
    assert recs[-1]["footer"]["reason"] == "stalled" and recs[-1]["footer"]["detail"] is None
    # every seat was told, and the last 100 asks moved nothing
    for seat in range(3):
        ends = sent_to(result.log_path, seat, "end")
        assert [e["reason"] for e in ends] == ["stalled"] and "detail" not in ends[0]
        assert ends[0]["scores"] == result.scores
    asks = [m for m in sent_to(result.log_path, 0, "event") if m["kind"] == "ask"]
    assert len(asks) >= 100 and all(a["cards"] == [] for a in asks[-100:]) and asks[-1]["next"] is None
    assert len(asks) == 100 or asks[-101]["cards"]  # exactly 100: the ask before them moved a card
    # scores are the families laid: the tracker's and the loopers' own, none for families still in hands
    assert sum(result.scores) < 8
    assert result.win_shares == [
        1 / result.scores.count(max(result.scores)) if s == max(result.scores) else 0.0 for s in result.scores
    ]
    assert (await trio.Path(result.log_path).stat()).st_size < 1_000_000  # not the 92 MB of a 100,000-decision game


async def test_a_custom_stall_is_sent_in_start_and_applied(tmp_path: Path) -> None:
    rules = AskRules.from_params({"name": "impatient", "base": "kwartet", "stall": 7})
    spec = GameSpec("g-impatient", rules, 3, seed=1, clock=ClockSpec(move_ms=2000), policy=FaultPolicy())
    async with trio.open_nursery() as nursery:
        sessions = await start_bots(circle_table(), spec.clock, nursery)
        try:
            result = await play_game(spec, sessions, tmp_path)
        finally:
            for s in sessions:
                await s.close()
    assert result.reason == "stalled"
    assert sent_to(result.log_path, 1, "start")[0]["rules"]["stall"] == 7
    asks = [m for m in sent_to(result.log_path, 0, "event") if m["kind"] == "ask"]
    assert all(a["cards"] == [] for a in asks[-7:]) and (len(asks) == 7 or asks[-8]["cards"])
    report = replay(result.log_path)
    assert report.ok, report.mismatches
    assert report.header["rules"]["stall"] == 7


async def test_a_stalled_hand_of_a_match_is_recorded_and_the_match_goes_on(tmp_path: Path) -> None:
    result, report = await play(
        circle_table(),
        "kwartet",
        seed=1,
        log_dir=tmp_path,
        game_id="g-m",
        match=MatchFormat(kind="fixed", hands=2, max_hands=4),
    )
    assert report.ok, report.mismatches
    recs = log_records(result.log_path)
    ends = [r["hand_end"] for r in recs if "hand_end" in r]
    assert len(ends) >= 2 and "stalled" in [e["reason"] for e in ends]
    assert all(e["reason"] in ("complete", "stalled") for e in ends)
    hands = [r["hand"] for r in recs if "hand" in r]
    totals = [0, 0, 0]
    for h, e in zip(hands, ends, strict=True):
        for i, s in enumerate(h["seats"]):
            totals[s] += e["scores"][i]
    assert result.scores == totals
    assert result.reason == "stalled" and recs[-1]["footer"]["reason"] == "stalled"


async def test_replay_rejects_a_forged_end_reason(tmp_path: Path) -> None:
    result, report = await play(circle_table(), "kwartet", seed=1, log_dir=tmp_path)
    assert report.ok
    lines = (await trio.Path(result.log_path).read_bytes()).splitlines()

    def forged(edit) -> Path:
        out = []
        for line in lines:
            rec = msgspec.json.decode(line)
            out.append(msgspec.json.encode(edit(rec)))
        p = tmp_path / f"forged-{len(list(tmp_path.iterdir()))}.jsonl"
        p.write_bytes(b"\n".join(out) + b"\n")
        return p

    def hand_end_complete(rec):
        if "hand_end" in rec:
            rec["hand_end"]["reason"] = "complete"
        return rec

    def footer_complete(rec):
        if "footer" in rec:
            rec["footer"]["reason"] = "complete"
        return rec

    def end_message_complete(rec):
        for m in rec.get("out", []):
            if m.get("type") == "end":
                m["reason"] = "complete"
        return rec

    for edit, words in (
        (hand_end_complete, "hand_end"),
        (footer_complete, "footer's reason"),
        (end_message_complete, "end"),
    ):
        bad = replay(forged(edit))
        assert not bad.ok and words in bad.mismatches[0], (words, bad.mismatches)
