"""Frames documents built by hand for the viewer tests (the frames format, version 1: docs/ARCHITECTURE.md, view).

``build_*`` return the document and the full state after every step. Each step is written as the
FULL state after it; :class:`Frames` turns the states into the
format's patches (frame 0 complete, later frames only what changed, hands per seat), so the tests
also exercise the page's patch semantics.
"""

from __future__ import annotations

import copy
from typing import Any

NOBLES = ["jack-black", "jack-red", "queen", "king", "ace"]
CHICKENS_HAND = ["robber", "pickpocket", "police", *NOBLES]


class Frames:
    def __init__(self, game: str) -> None:
        self.game = game
        self.frames: list[dict[str, Any]] = []
        self.states: list[dict[str, Any]] = []

    def add(self, kind: str, text: str, state: dict[str, Any], **fields: Any) -> None:
        state = copy.deepcopy(state)
        if not self.states:
            patch = copy.deepcopy(state)
        else:
            prev = self.states[-1]
            patch = {}
            for key, value in state.items():
                if key == "hands":
                    changed = {s: h for s, h in value.items() if prev["hands"].get(s) != h}
                    if changed:
                        patch["hands"] = changed
                elif prev.get(key) != value:
                    patch[key] = value
        frame: dict[str, Any] = {
            "i": len(self.frames),
            "hand": 1,
            "game": self.game,
            "kind": kind,
            "text": text,
            "actor": None,
            "target": None,
            "ask": None,
            "please": None,
            "hit": None,
            "rude": None,
            "cards": None,
            "fallback": False,
            "think_ms": None,
            "fault": None,
            "retry": None,
            "end": None,
        }
        frame.update(fields)
        frame["state"] = patch
        self.frames.append(frame)
        self.states.append(state)


def ask_game() -> dict[str, Any]:
    return build_ask_game()[0]


def chickens_game() -> dict[str, Any]:
    return build_chickens_game()[0]


def build_ask_game() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A 3-seat custom ask game on a suited deck with a stock of 2 and the politeness rule: a hit,
    a laid family, a miss with a draw, a timeout fault and fallback moves, a forgiven illegal reply,
    rude asks and a stalled end."""
    g = "g-000042"
    fr = Frames(g)
    s: dict[str, Any] = {
        "hands": {"0": ["7S", "7H", "7D", "8S"], "1": ["7C", "9S", "9H"], "2": ["8H", "8D", "9D"]},
        "counts": [4, 3, 3],
        "laid": [[], [], []],
        "scores": [0, 0, 0],
        "turn": 0,
        "waiting": [0],
        "stock": 2,
        "dealer": 2,
        "faulted": [],
        "in_hand": [True, True, True],
    }
    fr.add("start", "hand 1: cards dealt, carol deals, alice starts", s, actor=None)
    # 1: alice asks bob for 7C: hit
    s["hands"]["0"] = ["7S", "7H", "7D", "7C", "8S"]
    s["hands"]["1"] = ["9S", "9H"]
    s["counts"] = [5, 2, 3]
    fr.add(
        "ask",
        "alice asks bob for 7C, please: hit",
        s,
        actor=0,
        target=1,
        ask={"card": "7C"},
        please=True,
        hit=True,
        rude=False,
        cards=["7C"],
        think_ms=12.5,
    )
    # 2: alice lays the sevens
    s["hands"]["0"] = ["8S"]
    s["counts"] = [1, 2, 3]
    s["laid"] = [["7"], [], []]
    s["scores"] = [1, 0, 0]
    fr.add("laid", "alice lays family 7", s, actor=0, cards=["7S", "7H", "7D", "7C"])
    # 3: alice asks carol for 8C: miss
    s["waiting"] = [0]
    fr.add(
        "ask",
        "alice asks carol for 8C, please: miss",
        s,
        actor=0,
        target=2,
        ask={"card": "8C"},
        please=True,
        hit=False,
        rude=False,
        think_ms=3.25,
    )
    # 4: alice draws 8C; the turn goes to carol
    s["hands"]["0"] = ["8S", "8C"]
    s["counts"] = [2, 2, 3]
    s["stock"] = 1
    s["turn"] = 2
    s["waiting"] = [2]
    fr.add("draw", "alice draws from the stock", s, actor=0, cards=["8C"])
    # 5: carol times out
    s["faulted"] = [2]
    fr.add(
        "fault",
        "carol faulted: timeout",
        s,
        actor=2,
        fault={"fault": "timeout", "detail": "no reply within 1000 ms (move limit)"},
    )
    # 6: the fallback asks alice for 8S: hit
    s["hands"]["0"] = ["8C"]
    s["hands"]["2"] = ["8S", "8H", "8D", "9D"]
    s["counts"] = [1, 2, 4]
    fr.add(
        "ask",
        "carol asks alice for 8S, please: hit (fallback)",
        s,
        actor=2,
        target=0,
        ask={"card": "8S"},
        please=True,
        hit=True,
        rude=False,
        cards=["8S"],
        fallback=True,
    )
    # 7: and for 8C: hit, alice has no cards left
    s["hands"]["0"] = []
    s["hands"]["2"] = ["8S", "8H", "8D", "8C", "9D"]
    s["counts"] = [0, 2, 5]
    fr.add(
        "ask",
        "carol asks alice for 8C, please: hit (fallback)",
        s,
        actor=2,
        target=0,
        ask={"card": "8C"},
        please=True,
        hit=True,
        rude=False,
        cards=["8C"],
        fallback=True,
    )
    # 8: carol lays the eights
    s["hands"]["2"] = ["9D"]
    s["counts"] = [0, 2, 1]
    s["laid"] = [["7"], [], ["8"]]
    s["scores"] = [1, 0, 1]
    fr.add("laid", "carol lays family 8", s, actor=2, cards=["8S", "8H", "8D", "8C"])
    # 9: carol asks bob for 9C: miss
    fr.add(
        "ask",
        "carol asks bob for 9C, please: miss (fallback)",
        s,
        actor=2,
        target=1,
        ask={"card": "9C"},
        please=True,
        hit=False,
        rude=False,
        fallback=True,
    )
    # 10: carol draws 9C (the last stock card); bob's turn
    s["hands"]["2"] = ["9D", "9C"]
    s["counts"] = [0, 2, 2]
    s["stock"] = 0
    s["turn"] = 1
    s["waiting"] = [1]
    fr.add("draw", "carol draws from the stock (fallback)", s, actor=2, cards=["9C"], fallback=True)
    # 11: bob's illegal ask is forgiven once
    fr.add(
        "retry",
        "bob's reply was illegal and is forgiven (1 retry left)",
        s,
        actor=1,
        retry={"fault": "illegal", "detail": "family 7 is laid: it cannot be asked for", "left": 1},
        think_ms=0.75,
    )
    # 12: bob asks carol for 9D without please: rude, nothing moves, carol's turn
    s["turn"] = 2
    s["waiting"] = [2]
    fr.add(
        "ask",
        "bob asks carol for 9D: rude ask, nothing moves",
        s,
        actor=1,
        target=2,
        ask={"card": "9D"},
        please=False,
        hit=False,
        rude=True,
        think_ms=1.5,
    )
    # 13: carol (fallback) asks bob for 9S without please: rude
    s["turn"] = 1
    s["waiting"] = [1]
    fr.add(
        "ask",
        "carol asks bob for 9S: rude ask, nothing moves (fallback)",
        s,
        actor=2,
        target=1,
        ask={"card": "9S"},
        please=False,
        hit=False,
        rude=True,
        fallback=True,
    )
    # 14: the hand stalls
    s["turn"] = None
    s["waiting"] = []
    end = {"scores": [1, 0, 1], "ranks": [1, 3, 1], "reason": "stalled", "detail": "2 asks in a row moved no card"}
    fr.add("end", "the hand stalls: 2 asks in a row moved no card", s, end=end)
    return {
        "format": "card-referee-frames",
        "version": 1,
        "game": g,
        "variant": "suited-stock",
        "kind": "ask",
        "rules": {
            "game": "ask",
            "name": "suited-stock",
            "families": ["7", "8", "9"],
            "members": ["S", "H", "D", "C"],
            "ask": "card",
            "miss": "asked",
            "please": True,
            "stock": 2,
            "first": "left",
            "players": [3, 3],
        },
        "players": 3,
        "seats": [
            {"seat": 0, "bot": "alice", "hello": {"name": "SmartBot", "version": "0.3"}},
            {"seat": 1, "bot": "bob", "hello": {"name": "rnd", "version": "1.0"}},
            {"seat": 2, "bot": "carol", "hello": None},
        ],
        "match": None,
        "result": {
            "scores": [1, 0, 1],
            "ranks": [1, 2, 3],
            "win_shares": [1.0, 0.0, 0.0],
            "forfeits": [2],
            "reason": "stalled",
            "detail": "2 asks in a row moved no card",
        },
        "verified": True,
        "frames": fr.frames,
    }, fr.states


def build_chickens_game() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A 3-seat chickens game cut short after round 1's first two turns: hidden plays, reveals,
    robber takes, police takes, the round's end."""
    g = "g-000043"
    fr = Frames(g)
    full = {str(s): list(CHICKENS_HAND) for s in range(3)}
    s: dict[str, Any] = {
        "hands": copy.deepcopy(full),
        "counts": [8, 8, 8],
        "laid": [[], [], []],
        "scores": [0, 0, 0],
        "turn": None,
        "waiting": [0, 1, 2],
        "centre": [],
        "played": [False, False, False],
        "round": 1,
        "leader": 0,
        "commissioner": 2,
        "faulted": [],
        "in_hand": [True, True, True],
    }
    fr.add("start", "round 1: every seat holds the same 8 cards", s)

    def play(seat: int, card: str, think: float) -> None:
        s["hands"][str(seat)] = [c for c in s["hands"][str(seat)] if c != card]
        s["counts"][seat] -= 1
        s["played"][seat] = True
        s["waiting"] = [w for w in s["waiting"] if w != seat]
        fr.add("play", f"{['ann', 'ben', 'kara'][seat]} plays a card", s, actor=seat, cards=[card], think_ms=think)

    play(0, "robber", 4.5)
    play(1, "queen", 2.0)
    play(2, "ace", 7.75)
    s["centre"] = ["queen", "ace"]
    s["played"] = [False, False, False]
    s["turn"] = 0
    s["waiting"] = [0]
    fr.add("reveal", "revealed: ann robber, ben queen, kara ace", s, cards=["robber", "queen", "ace"])
    s["centre"] = ["queen"]
    s["laid"] = [["ace"], [], []]
    s["scores"] = [4, 0, 0]
    fr.add("take", "ann takes ace (+4)", s, actor=0, cards=["ace"], think_ms=1.25)
    s["centre"] = []
    s["laid"] = [["ace", "queen"], [], []]
    s["scores"] = [6, 0, 0]
    s["turn"] = None
    s["waiting"] = [0, 1, 2]
    fr.add("take", "ann takes queen (+2)", s, actor=0, cards=["queen"], think_ms=1.0)
    play(0, "police", 3.0)
    play(1, "pickpocket", 2.5)
    play(2, "jack-black", 5.0)
    s["centre"] = ["jack-black"]
    s["played"] = [False, False, False]
    s["turn"] = 0
    s["waiting"] = [0]
    fr.add(
        "reveal",
        "revealed: ann police, ben pickpocket, kara jack-black",
        s,
        cards=["police", "pickpocket", "jack-black"],
    )
    s["centre"] = []
    s["laid"] = [["ace", "queen", "jack-black"], [], []]
    s["scores"] = [5, 0, 0]
    s["turn"] = None
    s["waiting"] = []
    fr.add("take", "ann takes jack-black (-1)", s, actor=0, cards=["jack-black"], think_ms=0.5)
    s["round"] = 2
    s["leader"] = 1
    s["commissioner"] = 0
    s["laid"] = [[], [], []]
    s["hands"] = copy.deepcopy(full)
    s["counts"] = [8, 8, 8]
    s["waiting"] = [0, 1, 2]
    fr.add("round", "round 1 is over: ann 5, ben 0, kara 0", s)
    s["waiting"] = []
    end = {"scores": [5, 0, 0], "ranks": [1, 2, 2], "reason": "aborted", "detail": "the test stops after round 1"}
    fr.add("end", "the game is aborted: the test stops after round 1", s, end=end)
    return {
        "format": "card-referee-frames",
        "version": 1,
        "game": g,
        "variant": "chickens",
        "kind": "chickens",
        "rules": {
            "game": "chickens",
            "name": "chickens",
            "rounds": 3,
            "cards": {
                "robber": 0,
                "pickpocket": 0,
                "police": 0,
                "jack-black": -1,
                "jack-red": 1,
                "queen": 2,
                "king": 2,
                "ace": 4,
            },
            "nobles": NOBLES,
            "players": [3, 6],
        },
        "players": 3,
        "seats": [
            {"seat": 0, "bot": "ann", "hello": {"name": "hen", "version": "2"}},
            {"seat": 1, "bot": "ben", "hello": {"name": "rooster", "version": "0.1"}},
            {"seat": 2, "bot": "kara", "hello": {"name": "chick", "version": "9"}},
        ],
        "match": None,
        "result": {
            "scores": [5, 0, 0],
            "ranks": [1, 2, 2],
            "win_shares": [1.0, 0.0, 0.0],
            "forfeits": [],
            "reason": "aborted",
            "detail": "the test stops after round 1",
        },
        "verified": False,
        "frames": fr.frames,
    }, fr.states


def match_game() -> dict[str, Any]:
    """The tie-break hand of a 4-seat happy-families race match: carol sits out (no hand, no count),
    bob's hand runs empty."""
    g = "g-000044"
    fr = Frames(g)
    s: dict[str, Any] = {
        "hands": {"0": ["A1", "A2"], "1": ["A3"], "2": None, "3": ["A4", "B1"]},
        "counts": [2, 1, None, 2],
        "laid": [[], [], [], []],
        "scores": [3, 3, 1, 3],
        "turn": 0,
        "waiting": [0],
        "stock": 0,
        "dealer": 1,
        "faulted": [],
        "in_hand": [True, True, False, True],
    }
    fr.add("start", "hand 3 (tie-break): alice, bob and dave play", s, hand=3, game=f"{g}.h3")
    s["hands"]["0"] = ["A1", "A2", "A3"]
    s["hands"]["1"] = []
    s["counts"] = [3, 0, None, 2]
    fr.add(
        "ask",
        "alice asks bob for A3: hit",
        s,
        hand=3,
        game=f"{g}.h3",
        actor=0,
        target=1,
        ask={"card": "A3"},
        please=False,
        hit=True,
        rude=False,
        cards=["A3"],
        think_ms=150.25,
    )
    s["hands"]["3"] = ["B1"]
    s["hands"]["0"] = ["A1", "A2", "A3", "A4"]
    s["counts"] = [4, 0, None, 1]
    fr.add(
        "ask",
        "alice asks dave for A4: hit",
        s,
        hand=3,
        game=f"{g}.h3",
        actor=0,
        target=3,
        ask={"card": "A4"},
        please=True,
        hit=True,
        rude=False,
        cards=["A4"],
        think_ms=99.5,
    )
    s["hands"]["0"] = []
    s["counts"] = [0, 0, None, 1]
    s["laid"] = [["A"], [], [], []]
    s["scores"] = [4, 3, 1, 3]
    s["turn"] = None
    s["waiting"] = []
    fr.add("laid", "alice lays family A", s, hand=3, game=f"{g}.h3", actor=0, cards=["A1", "A2", "A3", "A4"])
    end = {"scores": [4, 3, 1, 3], "ranks": [1, 2, 4, 2], "reason": "complete", "detail": None}
    fr.add("end", "the match ends: alice wins the tie-break", s, hand=3, game=f"{g}.h3", end=end)
    return {
        "format": "card-referee-frames",
        "version": 1,
        "game": g,
        "variant": "happy-families",
        "kind": "ask",
        "rules": {
            "game": "ask",
            "name": "happy-families",
            "families": list("ABCDEFGHIJK"),
            "members": ["1", "2", "3", "4"],
            "ask": "card",
            "miss": "asked",
            "please": False,
            "stock": 0,
            "first": "left",
            "players": [2, 6],
        },
        "players": 4,
        "seats": [{"seat": i, "bot": name, "hello": None} for i, name in enumerate(["alice", "bob", "carol", "dave"])],
        "match": {"kind": "race", "hands": 0, "target": 3, "max_hands": 10},
        "result": {
            "scores": [4, 3, 1, 3],
            "ranks": [1, 2, 4, 2],
            "win_shares": [1.0, 0.0, 0.0, 0.0],
            "forfeits": [],
            "reason": "complete",
            "detail": None,
        },
        "verified": True,
        "frames": fr.frames,
    }
