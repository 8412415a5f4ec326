"""The Python bot SDK: framing, session loop, state tracking, legal-move helpers.

State tracking is checked against the real rules engines: a GameView fed only
the events a seat receives must agree with the engine's own view of that seat
at every decision.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from protocol.sdk import Ask, Bot, GameView
from referee.rules import event_for_seat, get_variant, kind_of

ROOT = Path(__file__).resolve().parents[2]

CUSTOM_STOCK = {
    "name": "three-gen",
    "families": ["X", "Y", "Z", "W", "V"],
    "members": ["1", "2", "3", "4", "5", "6"],
    "ask": "card",
    "miss": "next",
    "please": True,
    "stock": 5,
    "players": [2, 6],
}
CUSTOM_FAMILY = {
    "name": "tens",
    "families": ["10", "1", "2"],
    "members": ["a", "b", "c"],
    "ask": "family",
    "miss": "asked",
    "please": False,
    "stock": 2,
    "players": [2, 4],
}
VARIANTS: list[Any] = [
    "happy-families",
    "happy-families-jaques",
    "authors",
    "kwartet",
    "chickens",
    "go-fish",
    CUSTOM_STOCK,
    CUSTOM_FAMILY,
]


class Act:
    """A decoded reply as the engine expects it (attribute access, missing = None)."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.target = d.get("target")
        self.card = d.get("card")
        self.family = d.get("family")
        self.please = d.get("please", False)


class Recorder(Bot):
    """The SDK's default decisions (random legal), with every reply captured."""

    name = "Recorder"


def _feed(bot: Bot, msg: dict[str, Any], out: io.BytesIO) -> dict[str, Any] | None:
    """Hand one referee message to the bot; return its reply, if any."""
    pos = out.tell()
    bot._out = out
    bot._handle(json.loads(json.dumps(msg)))
    out.seek(pos)
    data = out.read()
    return json.loads(data) if data else None


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v if isinstance(v, str) else v["name"])
def test_view_tracks_engine_state(variant: Any) -> None:
    rules = get_variant(variant)
    n = 3 if variant is CUSTOM_FAMILY else 4
    for seed in (1, 2):
        game = rules.new_game(n, seed=seed)
        bots = [Recorder(seed=seed * 10 + s) for s in range(n)]
        outs = [io.BytesIO() for _ in range(n)]
        for s in range(n):
            _feed(
                bots[s],
                {
                    "type": "start",
                    "game": "g",
                    "variant": rules.name,
                    "rules": rules.to_wire(),
                    "seat": s,
                    "seats": [f"p{i}" for i in range(n)],
                    "dealer": 0,
                    "hand": game.hand(s),
                    "clock": {"move_ms": 1000},
                },
                outs[s],
            )

        def emit(events: list[dict[str, Any]], bots: list[Recorder], outs: list[io.BytesIO]) -> None:
            for e in events:
                for s in range(n):
                    _feed(bots[s], {"type": "event", "game": "g", "seq": 0, **event_for_seat(e, s)}, outs[s])

        emit(game.initial_events(), bots, outs)
        tid = 0
        while not game.terminal:
            decide = game.decision()
            replies = {}
            for s in game.pending():
                truth = game.view(s)
                view = bots[s].view
                assert view is not None
                if kind_of(rules).style == "ask":
                    # tracked from events alone, before the turn refreshes anything
                    assert view.hand == truth["hand"], (seed, s)
                    assert view.counts == truth["counts"]
                    assert view.laid == truth["laid"]
                    view.hand = list(truth["hand"])
                    view.counts = list(truth["counts"])
                    assert sorted(view.compute_ask_options()) == sorted(truth["options"])
                else:
                    for key in ("hand", "counts", "laid", "centre", "scores", "round"):
                        assert getattr(view, key) == truth[key], (key, seed, s)
                tid += 1
                reply = _feed(
                    bots[s],
                    {"type": "turn", "game": "g", "id": tid, "decide": decide, "clock": {"left_ms": 900}, **truth},
                    outs[s],
                )
                assert reply is not None and reply["id"] == tid and reply["type"] == decide
                replies[s] = reply
            for s, reply in replies.items():
                emit(game.apply(s, Act(reply)), bots, outs)  # raises IllegalAction if the SDK chose badly
        for b in bots:
            assert b.view is not None and len(b.view.history) > 0
            v = b.view
            if kind_of(rules).style == "ask":
                asks = [e for e in v.history if e["kind"] == "ask"]
                assert v.asks == asks and len(v.misses) + sum(1 for e in asks if e["cards"] or e["rude"]) == len(asks)
                assert sum(len(e["cards"]) for e in asks) == len(v.moves)
                assert all(card in v.deck() and src != dst for card, src, dst in v.moves)
                own = [e for e in v.draws if e["seat"] == v.seat]
                assert all("card" in e for e in own) and not any("card" in e for e in v.draws if e["seat"] != v.seat)
            else:
                assert v.reveals and all(len(e["plays"]) == n for e in v.reveals) and v.takes
            _feed(
                b,
                {"type": "end", "game": "g", "scores": game.scores(), "ranks": game.ranks(), "reason": "complete"},
                io.BytesIO(),
            )
            assert b.view is None


def test_legal_asks_without_options_match_the_engine() -> None:
    for variant in ("happy-families-jaques", "authors", CUSTOM_FAMILY):
        rules = get_variant(variant)
        game = rules.new_game(3, seed=7)
        seat = game.pending()[0]
        truth = game.view(seat)
        view = GameView(
            rules=rules.to_wire(),
            seat=seat,
            seats=["a", "b", "c"],
            hand=truth["hand"],
            counts=truth["counts"],
            laid=truth["laid"],
        )
        legal = {(a.target, a.card, a.family) for a in game.legal_actions(seat) if a.please or not rules.please}
        mine = {(a.target, a.card, a.family) for a in view.legal_asks()}
        assert mine == legal
        one = view.random_ask(random.Random(1))
        assert (one.target, one.card, one.family) in legal


def test_family_of_with_multi_character_names() -> None:
    view = GameView(rules={"families": ["10", "1"], "members": ["0", "S"]})
    assert view.family_of("100") == "10"
    assert view.family_of("10") == "1"
    assert view.family_of("1S") == "1"
    with pytest.raises(KeyError):
        view.family_of("ZZ")


class Crashy(Bot):
    name = "Crashy"
    version = "2"

    def ask(self, view: GameView) -> Ask:
        print("debug from ask")  # must land on stderr, not on the protocol stream
        raise RuntimeError("boom")


def test_session_loop_handshake_ids_errors_and_bye(capsys: pytest.CaptureFixture[str]) -> None:
    rules = get_variant("kwartet").to_wire()
    lines = [
        {"type": "hello", "protocol": 1, "name": "alice"},
        {
            "type": "start",
            "game": "g1",
            "variant": "kwartet",
            "rules": rules,
            "seat": 0,
            "seats": ["a", "b", "c"],
            "dealer": 2,
            "hand": ["7S", "7H"],
            "clock": {"move_ms": 100},
        },
        "not json at all",
        {
            "type": "turn",
            "game": "g1",
            "id": 41,
            "decide": "ask",
            "hand": ["7S", "7H"],
            "counts": [2, 3, 0],
            "laid": [[], [], []],
            "clock": {"left_ms": 50},
        },
        {"type": "error", "game": "g1", "id": 41, "fault": "illegal", "detail": "you asked badly"},
        {"type": "mystery"},
        {"type": "end", "game": "g1", "scores": [1, 0, 0], "ranks": [1, 2, 2], "reason": "complete"},
        {"type": "bye"},
        {"type": "turn", "game": "g2", "id": 42, "decide": "ask", "hand": [], "counts": [], "laid": [], "clock": {}},
    ]
    data = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines).encode()
    out = io.BytesIO()
    assert Crashy().run(io.BytesIO(data), out) == 0
    replies = [json.loads(x) for x in out.getvalue().splitlines()]
    assert replies[0] == {"type": "hello", "protocol": 1, "name": "Crashy", "version": "2"}
    assert len(replies) == 2  # nothing after bye
    ask = replies[1]
    assert ask["id"] == 41 and ask["target"] == 1 and ask["card"] in {"7D", "7C"}
    assert "please" not in ask  # kwartet has no politeness rule
    err = capsys.readouterr().err
    assert "debug from ask" in err and "boom" in err and "you asked badly" in err
    assert "not json" in err and "mystery" in err


def test_a_stalled_end_is_an_ordinary_end_and_the_session_goes_on() -> None:
    rules = get_variant("kwartet").to_wire()
    assert rules["stall"] == 100
    ended: list[dict] = []

    class Recorder(Bot):
        def on_end(self, view: GameView, result: dict) -> None:
            ended.append(result)

    start = {
        "type": "start",
        "game": "g1",
        "variant": "kwartet",
        "rules": rules,
        "seat": 0,
        "seats": ["a", "b", "c"],
        "dealer": 2,
        "hand": ["7S", "7H"],
        "clock": {"move_ms": 100},
    }
    turn = {
        "type": "turn",
        "game": "g2",
        "id": 7,
        "decide": "ask",
        "hand": ["7S", "7H"],
        "counts": [2, 3, 3],
        "laid": [[], [], []],
        "clock": {"left_ms": 50},
    }
    lines = [
        {"type": "hello", "protocol": 1, "name": "x"},
        start,
        {"type": "end", "game": "g1", "scores": [1, 0, 2], "ranks": [2, 3, 1], "reason": "stalled"},
        {**start, "game": "g2"},
        turn,
        {"type": "bye"},
    ]
    out = io.BytesIO()
    data = "".join(json.dumps(x) + "\n" for x in lines).encode()
    assert Recorder().run(io.BytesIO(data), out) == 0
    assert [e["reason"] for e in ended] == ["stalled"]
    replies = [json.loads(x) for x in out.getvalue().splitlines()]
    assert replies[-1]["type"] == "ask" and replies[-1]["id"] == 7  # the next game is played


def test_polite_variant_sends_please_and_rude_is_possible() -> None:
    rules = get_variant("happy-families-jaques").to_wire()

    class Rude(Bot):
        def ask(self, view: GameView) -> Ask:
            a = view.random_ask(self.rng)
            return Ask(a.target, card=a.card, please=False)

    for cls, expect in ((Bot, True), (Rude, False)):
        bot = cls()
        out = io.BytesIO()
        _feed(
            bot,
            {
                "type": "start",
                "game": "g",
                "variant": "x",
                "rules": rules,
                "seat": 1,
                "seats": ["a", "b"],
                "dealer": 0,
                "hand": ["A1"],
                "clock": {"move_ms": 1},
            },
            out,
        )
        reply = _feed(
            bot,
            {
                "type": "turn",
                "game": "g",
                "id": 3,
                "decide": "ask",
                "hand": ["A1"],
                "counts": [5, 1],
                "laid": [[], []],
                "clock": {},
            },
            out,
        )
        assert reply == {"type": "ask", "id": 3, "target": 0, "card": reply["card"], "please": expect}
        assert reply["card"] in {"A2", "A3", "A4"}


def test_eof_ends_the_loop() -> None:
    out = io.BytesIO()
    assert Bot().run(io.BytesIO(b'{"type":"hello","protocol":1,"name":"r"}\n'), out) == 0
    assert json.loads(out.getvalue())["type"] == "hello"


def test_sample_runs_from_any_directory_without_msgspec(tmp_path: Path) -> None:
    """`python sample_bots/random_bot.py` works from another cwd, and with msgspec not importable
    (the SDK needs nothing outside the standard library)."""
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "msgspec.py").write_text("raise ImportError('msgspec hidden for this test')\n")
    env = dict(os.environ, PYTHONPATH=str(blocker))
    feed = json.dumps({"type": "hello", "protocol": 1, "name": "x"}) + "\n" + json.dumps({"type": "bye"}) + "\n"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "sample_bots" / "random_bot.py")],
        input=feed,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"type": "hello", "protocol": 1, "name": "RandomBot", "version": "1.0"}


def test_sdk_copied_next_to_a_bot(tmp_path: Path) -> None:
    """The documented way to use the SDK outside this repository: copy sdk.py."""
    (tmp_path / "sdk.py").write_text((ROOT / "protocol" / "sdk.py").read_text())
    (tmp_path / "bot.py").write_text(
        "import sys\nfrom sdk import Bot\n\nclass B(Bot):\n    name = 'Copied'\n\nsys.exit(B(1).run())\n"
    )
    rules = get_variant("authors").to_wire()
    feed = "".join(
        json.dumps(m) + "\n"
        for m in [
            {"type": "hello", "protocol": 1, "name": "x"},
            {
                "type": "start",
                "game": "g",
                "variant": "authors",
                "rules": rules,
                "seat": 0,
                "seats": ["a", "b", "c"],
                "dealer": 2,
                "hand": ["2S", "2H", "9C"],
                "clock": {"move_ms": 1000},
            },
            {
                "type": "turn",
                "game": "g",
                "id": 9,
                "decide": "ask",
                "hand": ["2S", "2H", "9C"],
                "counts": [3, 4, 0],
                "laid": [[], [], []],
                "options": ["2", "9"],
                "targets": [1],
                "clock": {"left_ms": 1000},
            },
            {"type": "bye"},
        ]
    )
    proc = subprocess.run(
        [sys.executable, "bot.py"], input=feed, capture_output=True, text=True, cwd=tmp_path, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    hello, ask = [json.loads(x) for x in proc.stdout.splitlines()]
    assert hello["name"] == "Copied"
    assert ask["id"] == 9 and ask["target"] == 1 and ask["family"] in {"2", "9"} and "card" not in ask


def test_the_sdk_imports_little() -> None:
    """A bot pays for its imports at every start (twice per table rotation in a league, once per
    game in per-game mode): importing the SDK brings in neither msgspec nor the standard modules
    that cost most to import (dataclasses and traceback each pull in inspect; typing, about 3 ms of
    CPU, is for annotations only)."""
    probe = "import sys; import protocol.sdk; print(' '.join(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stdout.split())
    assert "protocol.sdk" in loaded
    costly = {"msgspec", "dataclasses", "traceback", "inspect", "typing", "typing_extensions"}
    assert not loaded & costly, sorted(loaded & costly)


def test_the_records_behave_as_before() -> None:
    """Ask and GameView are plain classes now (no dataclasses import): equal by value, Ask frozen
    and hashable, a GameView's list and dict defaults fresh per view, unknown fields refused."""
    a = Ask(target=2, card="A3")
    assert a == Ask(2, "A3") and a != Ask(2, family="A") and len({a, Ask(2, "A3")}) == 1
    assert repr(a) == "Ask(target=2, card='A3', family=None, please=True)"
    with pytest.raises(AttributeError):
        a.card = "B1"  # type: ignore[misc]
    v, w = GameView(game="g1"), GameView(game="g1")
    assert v == w and v.hand is not w.hand and v.rules == {} and v.decide is None
    v.hand.append("A1")
    assert v != w and w.hand == []
    with pytest.raises(TypeError, match="hand_size"):
        GameView(hand_size=3)


def test_json_moves_to_msgspec_as_a_second_game_starts() -> None:
    """A process that plays one game (per-game mode: ``end`` then ``bye``) reads and writes it with
    the json module and never imports msgspec; one that starts a second game switches to msgspec
    (installed here) there, before that game's first turn; both write the same replies."""
    probe = """
import io, json, sys
import protocol.sdk as sdk
def start(g):
    return {"type": "start", "game": g, "variant": "kwartet", "seat": 0, "seats": ["a", "b", "c"],
            "rules": {"game": "kwartet"}, "dealer": 0, "hand": ["7S"], "clock": {}}
turn = {"type": "turn", "game": "GAME", "id": 1, "decide": "ask", "targets": [1], "options": ["8S"]}
def session(games):
    lines = [{"type": "hello", "protocol": 1, "name": "r"}]
    for g in games:
        lines += [start(g), dict(turn, game=g), {"type": "end", "game": g}]
    out = io.BytesIO()
    sdk.Bot(seed=1).run(io.BytesIO(b"".join(json.dumps(m).encode() + b"\\n" for m in lines + [{"type": "bye"}])), out)
    return out.getvalue().splitlines()
one = session(["g1"])
print("msgspec" in sys.modules, sdk._loads is not sdk._json_loads)
two = session(["g1", "g2"])
print("msgspec" in sys.modules, sdk._loads is not sdk._json_loads)
assert two[:2] == one[:2] and two[2] == one[1].replace(b'"g1"', b'"g2"'), (one, two)
"""
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False", "True", "True"], proc.stderr
