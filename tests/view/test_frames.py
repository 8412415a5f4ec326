"""Viewer frames come from the replay core: every step of real games, the state
derived from the events equal to the engine's at every action's end."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.cli import main
from referee.errors import UserError
from referee.view.frames import FORMAT, frames_from_log

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"
PY = sys.executable
RANDOM = f"{PY} {ROOT / 'sample_bots' / 'random_bot.py'}"


def materialize(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every frame's full state (the patches applied forward, as the page does)."""
    out: list[dict[str, Any]] = []
    state: dict[str, Any] = {}
    for f in frames:
        patch = f["state"]
        state = {**state, **{k: v for k, v in patch.items() if k != "hands"}}
        hands = dict(state.get("hands_map", {}))
        hands.update(patch.get("hands", {}))
        state["hands_map"] = hands
        out.append(dict(state, hands=[hands[str(i)] for i in range(len(hands))]))
    return out


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("frames")
    stock = d / "stocky.json"
    stock.write_text(
        json.dumps(
            {
                "name": "stocky",
                "families": ["A", "B", "C", "D", "E", "F"],
                "members": ["1", "2", "3", "4"],
                "ask": "card",
                "miss": "asked",
                "stock": 6,
                "players": [2, 4],
            }
        )
    )
    games = {
        "stock": [str(stock), "--seed", "14", "--bot", f"a={RANDOM}", "--bot", f"b={RANDOM}", "--bot", f"c={RANDOM}"],
        "faults": [
            "kwartet",
            "--seed",
            "11",
            "--retries",
            "1",
            "--bot",
            f"a={RANDOM}",
            "--bot",
            f"b={PY} {BOTS / 'crash_bot.py'}",
            "--bot",
            f"c={RANDOM}",
            "--bot",
            f"d=env BOT_THEN_LEGAL=1 {PY} {BOTS / 'illegal_bot.py'}",
        ],
        "chickens": [
            "chickens",
            "--seed",
            "12",
            "--retries",
            "1",
            "--bot",
            f"a={RANDOM}",
            "--bot",
            f"b={PY} {BOTS / 'crash_bot.py'}",
            "--bot",
            f"c={RANDOM}",
        ],
        "match": [
            "authors",
            "--seed",
            "13",
            "--match",
            "fixed:2",
            "--bot",
            f"a={RANDOM}",
            "--bot",
            f"b={RANDOM}",
            "--bot",
            f"c={RANDOM}",
        ],
    }
    famstock = d / "famstock.json"  # a custom variant that asks for families, with a stock
    famstock.write_text(
        json.dumps(
            {
                "name": "famstock",
                "families": ["A", "B", "C", "D", "E"],
                "members": ["1", "2", "3"],
                "ask": "family",
                "miss": "asked",
                "stock": 4,
                "players": [2, 4],
            }
        )
    )
    three = ["--bot", f"a={RANDOM}", "--bot", f"b={RANDOM}", "--bot", f"c={RANDOM}"]
    games["famstock"] = [str(famstock), "--seed", "5", *three]
    for variant in ("happy-families", "happy-families-jaques", "go-fish"):
        games[variant] = [variant, "--seed", "5", *three]
    out = {}
    for name, args in games.items():
        assert main(["play", *args, "--game-id", name, "--log", str(d), "--grace-ms", "100"]) == 0
        out[name] = d / f"{name}.jsonl"
    return out


def test_frames_of_real_games_agree_with_the_replay_core(logs):
    for name, path in logs.items():
        data = frames_from_log(path)
        assert data["format"] == FORMAT and data["version"] == 1
        assert data["verified"], (name, data["mismatch"])
        frames = data["frames"]
        assert [f["i"] for f in frames] == list(range(len(frames)))
        states = materialize(frames)
        footer = json.loads(path.read_text().splitlines()[-1])["footer"]
        assert data["result"]["scores"] == footer["scores"]
        ends = [f for f in frames if f["kind"] == "end"]
        assert ends and ends[-1]["end"]["reason"] == footer["reason"]
        if data["match"] is None:
            assert states[-1]["scores"] == footer["scores"], name
        for st in states:  # every seat's hand size matches its cards
            for h, c in zip(st["hands"], st["counts"], strict=True):
                assert (h is None and c is None) or len(h) == c


def test_every_kind_of_step_has_its_frame(logs):
    kinds = {name: {f["kind"] for f in frames_from_log(p)["frames"]} for name, p in logs.items()}
    assert {"start", "ask", "laid", "draw", "end"} <= kinds["stock"]
    assert {"fault", "retry", "ask"} <= kinds["faults"]
    assert {"play", "reveal", "take", "round", "fault"} <= kinds["chickens"]
    data = frames_from_log(logs["match"])
    # two fixed hands, then tie-break hands if the unseeded random bots tie
    hands = [f["game"] for f in data["frames"] if f["kind"] == "start"]
    assert hands[:2] == ["match.h1", "match.h2"] and all(re.fullmatch(r"match\.h\d+", h) for h in hands), hands
    asks = [f for f in frames_from_log(logs["faults"])["frames"] if f["kind"] == "ask"]
    assert any(f["hit"] for f in asks) and any(f["hit"] is False for f in asks)
    assert any(f["fallback"] for f in asks) and any(f["think_ms"] is not None for f in asks)
    assert all(f["actor"] is not None and f["target"] is not None and f["ask"] for f in asks)


def test_chickens_frames_show_hidden_plays_then_the_reveal(logs):
    frames = frames_from_log(logs["chickens"])["frames"]
    states = materialize(frames)
    i = next(k for k, f in enumerate(frames) if f["kind"] == "reveal")
    assert all(states[i - 1]["played"]) and not any(states[i]["played"])
    assert states[i]["centre"] == sorted(
        states[i]["centre"], key=["jack-black", "jack-red", "queen", "king", "ace"].index
    )
    take = next(k for k, f in enumerate(frames) if f["kind"] == "take")
    assert frames[take]["cards"][0] in states[take]["laid"][frames[take]["actor"]]


def test_a_broken_log_is_one_user_error(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"log":"card-referee-game"\n')
    with pytest.raises(UserError, match="line 1"):
        frames_from_log(p)
    with pytest.raises(UserError, match="not found"):
        frames_from_log(tmp_path / "missing.jsonl")


def test_who_asks_next_is_said_after_the_lay_an_ask_caused(logs):
    for name in ("stock", "faults", "match"):
        frames = frames_from_log(logs[name])["frames"]
        for a, b in zip(frames, frames[1:], strict=False):
            if a["kind"] == "ask" and b["kind"] in ("laid", "draw") and b.get("actor") == a.get("actor"):
                # the ask's step does not say the turn passed before its lay (or draw) was shown
                assert "asks next" not in a["text"], (a["text"], b["text"])
        assert any(f["kind"] == "laid" and "asks next" in f["text"] for f in frames), name


def test_please_is_not_shown_in_a_variant_without_politeness(logs):
    for name in ("faults", "match", "stock"):  # kwartet, authors and a custom variant: no politeness rule
        for f in frames_from_log(logs[name])["frames"]:
            if f["kind"] == "ask":
                assert " please" not in f["text"] and f["please"] is False, f


def _never_started(tmp_path: Path) -> Any:
    # the broken entries of a host's night (a failed build, a missing program): no process, the fallback
    # plays every seat; their crash is recorded as the hand begins, before the first frame
    import trio

    from referee.rules import get_variant
    from referee.runtime import BotSession, BotSpec, GameSpec, play_game

    sessions = [
        BotSession.never_started(BotSpec(name=n, command=["./missing"], cwd=str(tmp_path)), f"{n} has no program")
        for n in ("x", "y", "z")
    ]
    spec = GameSpec("never-started", get_variant("kwartet"), 3, seed=5)
    return trio.run(play_game, spec, sessions, tmp_path)


def test_a_game_whose_bots_never_started_has_frames_and_a_page(tmp_path):
    result = _never_started(tmp_path)
    assert result.forfeits == [0, 1, 2]
    data = frames_from_log(result.log_path)
    assert data["verified"], data["mismatch"]
    kinds = [f["kind"] for f in data["frames"]]
    assert kinds[:4] == ["start", "fault", "fault", "fault"] and kinds[-1] == "end"
    assert data["frames"][1]["fault"]["fault"] == "crash" and "x has no program" in data["frames"][1]["fault"]["detail"]
    assert any(f["fallback"] for f in data["frames"] if f["kind"] == "ask")
    page = tmp_path / "page.html"
    assert main(["view", str(result.log_path), "-o", str(page)]) == 0
    assert '["F",0,"x","crash",' in page.read_text()  # (the page's script says "x faults (crash): ...")


def test_the_pages_script_expands_the_events_into_the_replays_frames(logs, tmp_path):
    """A version 2 document (the game's events, :mod:`referee.view.events`) expanded by the page's own
    script (``assets/expand.js``, run by node) is the version 1 document of the same game, frame for
    frame: every variant, a custom ask variant with a stock, faults, retries, fallback moves, a match
    of several hands, and a game whose bots never started."""
    import shutil
    import subprocess

    from referee.view.events import events_from_log

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    paths = dict(logs)
    paths["never-started"] = _never_started(tmp_path).log_path
    docs = [events_from_log(p) for p in paths.values()]
    assert all(d["version"] == 2 and d["verified"] for d in docs)
    (tmp_path / "docs.json").write_text(json.dumps(docs))
    expand = ROOT / "referee" / "view" / "assets" / "expand.js"
    run = subprocess.run(
        [node, str(ROOT / "tests" / "view" / "expand_node.js"), str(expand), str(tmp_path / "docs.json")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    for (name, path), got in zip(paths.items(), json.loads(run.stdout), strict=True):
        want = json.loads(json.dumps(frames_from_log(path)))
        assert len(got["frames"]) == len(want["frames"]), name
        for a, b in zip(got["frames"], want["frames"], strict=True):
            assert a == b, (name, b["i"])
        assert got == want, name
