"""Chickens rules engine: hand-built turns for every resolution case, the
seed-004 worked examples, markers, game length, and properties over seeds and
table sizes (docs/RULES.md part B)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.rules import IllegalAction, Play, Rng, RulesError, Take, derive, get_variant
from referee.rules.base import Deal
from referee.rules.chickens import CARD_VALUES, CARDS, NOBLES, ChickensGame, ChickensRules

RULES = ChickensRules()


def new(n: int) -> ChickensGame:
    return RULES.new_game(n)


def play_turn(g: ChickensGame, cards: list[str], order: list[int] | None = None) -> list[dict[str, Any]]:
    """Every seat plays ``cards[seat]`` (in ``order``); returns the events of the turn's plays."""
    assert g.decision() == "play"
    assert g.pending() == tuple(range(g.n))
    events: list[dict[str, Any]] = []
    order = list(range(g.n)) if order is None else order
    for k, seat in enumerate(order):
        out = g.apply(seat, Play(cards[seat]))
        if k < g.n - 1:
            assert out == [], "a hidden play must not produce events"
        events += out
    return events


def take(g: ChickensGame, seat: int, card: str) -> list[dict[str, Any]]:
    assert g.decision() == "take"
    assert g.pending() == (seat,)
    return g.apply(seat, Take(card))


def finish_round(g: ChickensGame) -> list[dict[str, Any]]:
    """Play the rest of the current round with the first legal action of each seat."""
    events: list[dict[str, Any]] = []
    r = g.round
    while not g.terminal and g.round == r:
        for s in g.pending():
            events += g.apply(s, g.legal_actions(s)[0])
    return events


# ---------------------------------------------------------------- resolution cases


def test_police_beat_robber_and_take_everything() -> None:
    g = new(4)  # leader 0, commissioner 3
    ev = play_turn(g, ["robber", "police", "queen", "ace"])
    assert ev == [{"kind": "reveal", "plays": ["robber", "police", "queen", "ace"], "centre": ["queen", "ace"]}]
    assert g.pending() == (1,) and g.decision() == "take"
    assert g.view(1)["options"] == ["queen", "ace"]
    assert take(g, 1, "ace") == [{"kind": "take", "seat": 1, "card": "ace", "centre": ["queen"]}]
    assert take(g, 1, "queen") == [{"kind": "take", "seat": 1, "card": "queen", "centre": []}]
    assert g.scores() == [0, 6, 0, 0]
    assert g.decision() == "play" and g.turn == 2
    assert g.view(0)["laid"] == [[], ["ace", "queen"], [], []]


def test_police_alone_take_nothing_and_nobles_stay() -> None:
    g = new(4)
    ev = play_turn(g, ["police", "king", "jack-black", "ace"])
    assert ev == [
        {"kind": "reveal", "plays": ["police", "king", "jack-black", "ace"], "centre": ["jack-black", "king", "ace"]}
    ]
    assert g.decision() == "play" and g.pending() == (0, 1, 2, 3) and g.turn == 2
    assert g.view(2)["centre"] == ["jack-black", "king", "ace"]
    # next turn a lone robber takes the leftovers and the new ones
    ev = play_turn(g, ["queen", "robber", "queen", "jack-red"])
    assert ev[0]["centre"] == ["jack-black", "jack-red", "queen", "queen", "king", "ace"]
    for card in ["ace", "king", "queen", "queen", "jack-red"]:
        take(g, 1, card)
    last = take(g, 1, "jack-black")
    assert last == [{"kind": "take", "seat": 1, "card": "jack-black", "centre": []}]
    assert g.scores() == [0, 10, 0, 0]


def test_two_robbers_and_a_pickpocket_take_in_order_from_the_leader() -> None:
    g = new(5)
    finish_round(g)
    assert (g.round, g.leader, g.commissioner) == (2, 1, 0)
    before = g.scores()
    play_turn(g, ["jack-black", "jack-red", "queen", "king", "ace"])  # nobody takes: five nobles stay
    assert g.decision() == "play"
    # robbers at 3 and 0, pickpocket at 2, from leader 1: 3, 0, then 2, then 3, 0, 3, ...
    ev = play_turn(g, ["robber", "queen", "pickpocket", "robber", "king"])
    assert ev[0]["centre"] == ["jack-black", "jack-red", "queen", "queen", "king", "king", "ace"]
    takers = []
    while g.decision() == "take":
        (seat,) = g.pending()
        takers.append(seat)
        g.apply(seat, Take(g.view(seat)["options"][-1]))
    assert takers == [3, 0, 2, 3, 0, 3, 0]
    gained = [a - b for a, b in zip(g.scores(), before, strict=True)]
    assert gained == [2 + 1, 0, 2, 4 + 2 + 2 - 1, 0]


def test_pickpockets_alone_take_one_each_and_the_rest_stays() -> None:
    g = new(5)  # leader 0
    play_turn(g, ["ace", "king", "queen", "jack-red", "jack-black"])
    ev = play_turn(g, ["jack-black", "pickpocket", "jack-red", "pickpocket", "queen"])
    assert ev[0]["centre"] == ["jack-black", "jack-black", "jack-red", "jack-red", "queen", "queen", "king", "ace"]
    assert take(g, 1, "ace")[0]["centre"] == [
        "jack-black",
        "jack-black",
        "jack-red",
        "jack-red",
        "queen",
        "queen",
        "king",
    ]
    ev = take(g, 3, "king")
    assert ev == [
        {
            "kind": "take",
            "seat": 3,
            "card": "king",
            "centre": ["jack-black", "jack-black", "jack-red", "jack-red", "queen", "queen"],
        }
    ]
    assert g.decision() == "play" and g.turn == 3
    assert g.centre() == ["jack-black", "jack-black", "jack-red", "jack-red", "queen", "queen"]
    assert g.scores() == [0, 4, 0, 2, 0]


def test_lone_robber_takes_everything_including_jack_black_004() -> None:
    """Seed 004: one robber, no police, no pickpockets: the robber takes the whole centre."""
    g = new(3)
    play_turn(g, ["robber", "jack-black", "ace"])
    assert take(g, 0, "ace")[0]["centre"] == ["jack-black"]
    # the last noble is still a decision, with one option, and it must be taken
    assert g.pending() == (0,) and g.legal_actions(0) == [Take("jack-black")]
    assert g.view(0)["options"] == ["jack-black"]
    take(g, 0, "jack-black")
    assert g.scores() == [3, 0, 0]


def test_police_with_robber_004() -> None:
    """Seed 004: police with a robber: the robber gets nothing, the police take the centre."""
    g = new(3)  # commissioner 2
    play_turn(g, ["robber", "king", "police"])
    take(g, 2, "king")
    assert g.scores() == [0, 0, 2] and g.decision() == "play"


def test_several_police_take_round_and_round_from_the_commissioner() -> None:
    g = new(6)  # leader 0, commissioner 5
    play_turn(g, ["jack-black", "jack-red", "queen", "king", "ace", "queen"])
    # police at 2 and 5 (the commissioner), a pickpocket at 0: order 5, 2, 5, 2, ...
    ev = play_turn(g, ["pickpocket", "ace", "police", "jack-red", "queen", "police"])
    assert len(ev[0]["centre"]) == 9
    takers = []
    while g.decision() == "take":
        (seat,) = g.pending()
        takers.append(seat)
        g.apply(seat, g.legal_actions(seat)[0])
    assert takers == [5, 2, 5, 2, 5, 2, 5, 2, 5]
    assert g.centre() == []


def test_police_order_starts_at_first_police_clockwise_from_commissioner() -> None:
    g = new(6)  # commissioner 5; police at 1 and 3: order 1, 3, 1
    play_turn(g, ["robber", "police", "ace", "police", "king", "queen"])
    takers = []
    while g.decision() == "take":
        (seat,) = g.pending()
        takers.append(seat)
        g.apply(seat, g.legal_actions(seat)[0])
    assert takers == [1, 3, 1]


def test_no_takers_at_all_keeps_every_noble() -> None:
    g = new(3)
    ev = play_turn(g, ["ace", "queen", "king"], order=[2, 0, 1])
    assert ev == [{"kind": "reveal", "plays": ["ace", "queen", "king"], "centre": ["queen", "king", "ace"]}]
    assert g.decision() == "play"


def test_takers_with_an_empty_centre_are_skipped() -> None:
    g = new(3)
    ev = play_turn(g, ["robber", "pickpocket", "robber"])
    assert len(ev) == 1 and g.decision() == "play" and g.turn == 2


def test_leftover_nobles_are_discarded_after_turn_eight() -> None:
    g = new(3)
    for t in range(7):
        # nobles first, then robber/pickpocket/police together (police win, centre emptied)...
        cards = [CARDS[(t + 3) % 8]] * 3
        play_turn(g, cards)
        while g.decision() == "take":
            (s,) = g.pending()
            g.apply(s, g.legal_actions(s)[0])
    assert g.turn == 8
    hands = [g.hand(s) for s in range(3)]
    assert all(len(h) == 1 for h in hands)
    # the 8th play is still a decision with exactly one option
    assert g.pending() == (0, 1, 2) and all(g.view(s)["options"] == g.hand(s) for s in range(3))
    assert g.legal_actions(0) == [Play(hands[0][0])]


def test_markers_move_left_each_round_and_game_has_n_rounds() -> None:
    for n in (3, 4, 6):
        g = new(n)
        events = g.initial_events()
        while not g.terminal:
            events += finish_round(g)
        rounds = [e for e in events if e["kind"] == "round"]
        assert [e["round"] for e in rounds] == list(range(1, n + 1))
        assert [e["leader"] for e in rounds] == list(range(n))
        assert [e["commissioner"] for e in rounds] == [(r - 1) % n for r in range(n)]
        assert sum(1 for e in events if e["kind"] == "reveal") == 8 * n
        assert g.pending() == () and g.decision() == ""


def test_round_event_carries_scores_so_far() -> None:
    g = new(3)
    assert g.initial_events() == [{"kind": "round", "round": 1, "leader": 0, "commissioner": 2, "scores": [0, 0, 0]}]
    play_turn(g, ["robber", "ace", "king"])
    take(g, 0, "ace")
    take(g, 0, "king")
    ev = finish_round(g)
    assert ev[-1]["kind"] == "round" and ev[-1]["round"] == 2
    assert ev[-1]["scores"] == g.scores() and ev[-1]["scores"][0] >= 6


# ---------------------------------------------------------------- illegal actions


def test_illegal_actions_in_bot_author_words() -> None:
    g = new(4)
    play_turn(g, ["police", "robber", "queen", "ace"])
    with pytest.raises(IllegalAction, match="it is not your decision: seat 0 is taking"):
        g.apply(2, Take("ace"))
    with pytest.raises(IllegalAction, match="king is not in the centre"):
        g.apply(0, Take("king"))
    with pytest.raises(IllegalAction, match="robber is not a noble"):
        g.apply(0, Take("robber"))
    with pytest.raises(IllegalAction, match="not a chickens card"):
        g.apply(0, Take("joker"))
    g.apply(0, Take("queen"))
    g.apply(0, Take("ace"))
    with pytest.raises(IllegalAction, match="you already played police this round"):
        g.apply(0, Play("police"))
    g.apply(1, Play("ace"))
    with pytest.raises(IllegalAction, match="you already played this turn; wait for the reveal"):
        g.apply(1, Play("king"))
    with pytest.raises(IllegalAction, match="there is no seat 4"):
        g.apply(4, Play("king"))
    with pytest.raises(IllegalAction, match="needs a card name"):
        g.apply(2, object())
    with pytest.raises(IllegalAction, match="wait for the reveal"):
        g.random_action(1, Rng(1))


def test_game_over_rejects_actions() -> None:
    g = new(3)
    while not g.terminal:
        finish_round(g)
    assert g.legal_actions(0) == []
    with pytest.raises(IllegalAction, match="game is over"):
        g.apply(0, Play("ace"))


def test_view_contents_and_hidden_plays() -> None:
    g = new(3)
    g.apply(0, Play("ace"))
    v0, v1 = g.view(0), g.view(1)
    # a hidden play stays in its owner's hand until the reveal and is never shown to others
    assert v0["hand"] == list(CARDS) and v0["options"] == []
    assert v1["options"] == list(CARDS)
    assert v1["counts"] == [8, 8, 8] and v1["centre"] == [] and v1["round"] == 1
    assert v1["scores"] == [0, 0, 0] and v1["laid"] == [[], [], []]
    assert "ace" not in str({k: v for k, v in v1.items() if k not in ("hand", "options")})
    g.apply(2, Play("robber"))
    g.apply(1, Play("jack-red"))
    assert g.view(2)["options"] == ["jack-red", "ace"]
    assert g.view(0)["options"] == [] and g.view(0)["counts"] == [7, 7, 7]
    assert g.view(0)["hand"] == [c for c in CARDS if c != "ace"]


# ---------------------------------------------------------------- rules record


def test_rules_record_wire_form_round_trip() -> None:
    wire = RULES.to_wire()
    assert wire == {
        "game": "chickens",
        "name": "chickens",
        "rounds": None,
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
        "nobles": ["jack-black", "jack-red", "queen", "king", "ace"],
        "players": [3, 6],
    }
    assert ChickensRules.from_params(wire) == RULES
    assert ChickensRules.from_params({"game": "chickens"}) == RULES
    assert get_variant(wire) == RULES and get_variant("chickens") == RULES
    assert get_variant({"game": "chickens"}) == RULES
    assert (RULES.name, RULES.kind, RULES.min_players, RULES.max_players) == ("chickens", "chickens", 3, 6)
    named = ChickensRules.from_params({"game": "chickens", "name": "hens"})
    assert named.name == "hens" and get_variant(named.to_wire()) == named
    assert list(CARD_VALUES) == list(CARDS) and NOBLES == CARDS[3:]


@pytest.mark.parametrize(
    "params, message",
    [
        ({"game": "chickens", "rounds": 2}, "rounds must be null"),
        ({"game": "chickens", "speed": 2}, "unknown chickens parameter"),
        ({"game": "chickens", "cards": {**CARD_VALUES, "ace": 5}}, "cards must be exactly"),
        ({"game": "chickens", "players": [2, 6]}, "players must be"),
        ({"game": "chickens", "nobles": ["ace"]}, "nobles must be"),
        ({"game": "chickens", "name": ""}, "name must be a non-empty string"),
        ({"game": "ask", "name": "chickens"}, 'game must be "chickens"'),
        (["chickens"], "must be a table"),
    ],
)
def test_rules_record_rejects_other_parameters(params: dict[str, Any], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        ChickensRules.from_params(params)


def test_new_game_rejects_deals_and_table_sizes() -> None:
    for n in (0, 2, 7):
        with pytest.raises(RulesError, match="3 to 6 players"):
            RULES.new_game(n)
    with pytest.raises(RulesError, match="no deal"):
        RULES.new_game(3, deal=Deal(dealer=0, hands=((), (), ())))
    with pytest.raises(RulesError, match="seed must be a whole number"):
        RULES.new_game(3, seed="x")  # type: ignore[arg-type]
    g = RULES.new_game(3, seed=5)
    assert g.n == 3 and g.seed == 5
    assert g.fallback_rng().next() == Rng(derive(5, "fallback")).next()
    assert isinstance(RULES.new_game(3).seed, int)


# ---------------------------------------------------------------- properties


def _random_game(n: int, seed: int) -> tuple[list[tuple[int, Any]], list[dict[str, Any]], ChickensGame]:
    g = RULES.new_game(n, seed=seed)
    rng = Rng(seed)
    actions: list[tuple[int, Any]] = []
    events = g.initial_events()
    while not g.terminal:
        pend = list(g.pending())
        # the simultaneous plays arrive in a seed-dependent order
        rng.shuffle(pend)
        for s in pend:
            a = g.random_action(s, rng)
            actions.append((s, a))
            events += g.apply(s, a)
    return actions, events, g


@given(n=st.integers(3, 6), seed=st.integers(0, 2**64 - 1))
def test_random_games_follow_the_rules(n: int, seed: int) -> None:
    actions, events, g = _random_game(n, seed)
    reveals = [e for e in events if e["kind"] == "reveal"]
    assert len(reveals) == 8 * n
    assert [e["round"] for e in events if e["kind"] == "round"] == list(range(1, n + 1))
    for r in range(n):
        per_seat = [Counter(rv["plays"][s] for rv in reveals[8 * r : 8 * r + 8]) for s in range(n)]
        assert all(c == Counter(CARDS) for c in per_seat)
    totals = [0] * n
    for e in events:
        if e["kind"] == "take":
            totals[e["seat"]] += CARD_VALUES[e["card"]]
    assert g.scores() == totals
    assert g.ranks() == [1 + sum(1 for o in totals if o > t) for t in totals]
    # replay from the recorded actions gives identical events
    g2 = RULES.new_game(n, seed=seed)
    replay = g2.initial_events()
    for s, a in actions:
        replay += g2.apply(s, a)
    assert replay == events and g2.terminal


def _snapshot(g: ChickensGame) -> Any:
    return (g.pending(), g.decision(), g.round, g.turn, [g.view(s) for s in range(g.n)])


@given(n=st.integers(3, 6), seed=st.integers(0, 2**32), bad=st.sampled_from([*CARDS, "joker"]), who=st.integers(0, 5))
def test_illegal_actions_change_nothing(n: int, seed: int, bad: str, who: int) -> None:
    g = RULES.new_game(n)
    rng = Rng(seed)
    steps = rng.below(60)
    for _ in range(steps):
        if g.terminal:
            break
        s = g.pending()[0]
        g.apply(s, g.random_action(s, rng))
    seat = who % n
    legal = {a.card for a in g.legal_actions(seat)}
    if bad in legal:
        return
    before = _snapshot(g)
    with pytest.raises(IllegalAction):
        g.apply(seat, Play(bad) if g.decision() == "play" else Take(bad))
    assert _snapshot(g) == before
