"""The stalemate rule (RULES.md rule 10): ``stall`` asks in a row that move no card end the hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import ASK_PRESETS, Ask, AskRules, Deal, RulesError, get_variant
from referee.rules.ask import DEFAULT_STALL


def ask(target: int, card: str | None = None, family: str | None = None, please: bool = False) -> Ask:
    return Ask(target, card, family, please)


# kwartet, 3 seats, dealer 2 (short hand), so seat 0 starts. Seats 0 and 1 can miss each other forever:
# seat 0 holds 7S 7H (7D 7C are at seat 2), seat 1 holds 8S 8H (8D 8C are at seat 2); the other
# ranks are spread so that nobody holds a whole family.
_KW_REST = [f"{r}{s}" for r in ("9", "10", "J", "Q", "K", "A") for s in "SHDC"]
KW_DEAL = Deal(
    dealer=2,
    hands=(
        ("7S", "7H", *_KW_REST[0::3], "AS"),
        ("8S", "8H", *_KW_REST[1::3], "AC"),
        ("7D", "7C", "8D", "8C", *[c for c in _KW_REST[2::3] if c not in ("AS", "AC")]),
    ),
)


def kwartet(stall: int | None = None) -> AskRules:
    if stall is None:
        return ASK_PRESETS["kwartet"]
    return AskRules.from_params({"name": f"kwartet-stall-{stall}", "base": "kwartet", "stall": stall})


def miss_in_circles(g, k: int) -> list[dict]:
    """k misses, seat 0 and seat 1 asking each other for cards the other does not hold."""
    events = []
    for _ in range(k):
        seat = g.pending()[0]
        assert seat in (0, 1)
        events += g.apply(seat, ask(1, "7D") if seat == 0 else ask(0, "8D"))
    return events


# --------------------------------------------------------------------------- the parameter


def test_default_stall_is_100_and_is_on_the_wire() -> None:
    assert DEFAULT_STALL == 100
    for r in ASK_PRESETS.values():
        assert r.stall == 100 and r.to_wire()["stall"] == 100
    custom = AskRules.from_params({"name": "patient", "base": "kwartet", "stall": 7})
    assert custom.stall == 7 and custom.to_wire()["stall"] == 7
    assert AskRules.from_params(custom.to_wire()) == custom
    assert get_variant({"base": "kwartet", "stall": 7}).name == "custom"  # differs from its base
    assert get_variant({"base": "kwartet", "stall": 100}).name == "kwartet"


@pytest.mark.parametrize(
    ("stall", "message"),
    [
        (
            0,
            (
                "variant 'x': 'stall' must be a whole number of asks, at least 1 (default 100), not 0: the hand ends "
                "after that many asks in a row that move no card"
            ),
        ),
        (-5, "'stall' must be a whole number of asks, at least 1 (default 100), not -5"),
        (2.5, "variant 'x': 'stall' must be a whole number of asks, at least 1 (default 100), not 2.5"),
        (True, "'stall' must be a whole number of asks, at least 1 (default 100), not True"),
        ("100", "'stall' must be a whole number of asks, at least 1 (default 100), not '100'"),
    ],
)
def test_bad_stall_values_are_rules_errors(stall: object, message: str) -> None:
    with pytest.raises(RulesError) as info:
        AskRules.from_params({"name": "x", "stall": stall})
    assert message in str(info.value)


def test_a_preset_name_with_another_stall_is_refused() -> None:
    with pytest.raises(RulesError, match="belongs to a built-in variant"):
        AskRules.from_params({"name": "kwartet", "base": "kwartet", "stall": 5})


# --------------------------------------------------------------------------- the count


def test_exactly_stall_misses_end_the_hand() -> None:
    g = kwartet().new_game(3, deal=KW_DEAL)
    events = miss_in_circles(g, 99)  # seat 0, 1, 0, 1...
    assert g.idle == 99 and g.pending() and not g.terminal and events[-1]["next"] is not None
    last = miss_in_circles(g, 1)
    assert last[-1]["kind"] == "ask" and last[-1]["cards"] == [] and last[-1]["next"] is None
    assert g.pending() == () and g.terminal and g.turn is None
    assert g.end_reason == "stalled" and g.idle == 100
    assert g.scores() == [0, 0, 0] and g.ranks() == [1, 1, 1]
    assert g.legal_actions(0) == [] and g.legal_actions(1) == []
    with pytest.raises(Exception, match="the game is over"):
        g.apply(0, ask(1, "7D"))


def test_scores_are_the_families_laid_when_it_stalls() -> None:
    g = kwartet(3).new_game(3, deal=KW_DEAL)
    assert g.apply(0, ask(2, "7D"))[0]["cards"] == ["7D"]  # hit: seat 0 keeps the turn
    events = g.apply(0, ask(2, "7C"))
    assert events[1] == {"kind": "laid", "seat": 0, "family": "7"} and g.idle == 0
    g.apply(0, ask(1, "9D"))  # seat 2 holds 9D: a miss, the turn goes to seat 1
    g.apply(1, ask(0, "8D"))  # a miss
    assert g.idle == 2 and g.pending() == (0,)
    events = g.apply(0, ask(1, "9D"))
    assert events[0]["next"] is None and g.terminal and g.end_reason == "stalled"
    assert g.scores() == [1, 0, 0] and g.ranks() == [1, 2, 2]


def test_a_hit_resets_the_count() -> None:
    g = kwartet(5).new_game(3, deal=KW_DEAL)
    miss_in_circles(g, 3)
    assert g.idle == 3 and g.pending() == (1,)
    assert g.apply(1, ask(2, "8C"))[0]["cards"] == ["8C"]  # a hit
    assert g.idle == 0
    g.apply(1, ask(0, "8D"))  # a miss: the turn goes to seat 0
    assert g.idle == 1
    miss_in_circles(g, 3)
    assert g.idle == 4 and not g.terminal
    miss_in_circles(g, 1)
    assert g.terminal and g.end_reason == "stalled"


def test_rude_asks_count_as_asks_that_move_no_card() -> None:
    jq = AskRules.from_params({"name": "jq3", "base": "happy-families-jaques", "stall": 3})
    rest = [f"{f}{m}" for f in "CDEFGHIJK" for m in "1234"]
    deal = Deal(0, (("A1", "A2", *rest[:18]), ("A3", "A4", "B1", "B2", "B3", "B4", *rest[18:])))
    g = jq.new_game(2, deal=deal)
    wants = {0: "A3", 1: "A1"}  # what each seat asks the other for (the other holds it)
    first = g.pending()[0]
    other = 1 - first
    ev = g.apply(first, ask(other, wants[first], please=False))  # rude: nothing moves, the turn goes over
    assert ev[0]["rude"] and ev[0]["cards"] == [] and g.idle == 1
    g.apply(other, ask(first, wants[other], please=False))
    assert g.idle == 2 and g.pending() == (first,)
    ev = g.apply(first, ask(other, wants[first], please=True))  # polite: a hit
    assert ev[0]["cards"] == [wants[first]] and g.idle == 0
    g.apply(first, ask(other, "A4" if first == 0 else "A2", please=False))
    g.apply(other, ask(first, wants[other], please=False))
    assert g.idle == 2 and not g.terminal
    ev = g.apply(first, ask(other, "A4" if first == 0 else "A2", please=False))
    assert ev[0]["next"] is None and g.end_reason == "stalled"


def test_a_draw_from_the_stock_counts_as_a_moved_card() -> None:
    r = AskRules.from_params({"name": "stocky", "families": 3, "members": 3, "stock": 3, "stall": 2})
    # seat 0 holds A1 B1, seat 1 holds A2 B2 C1 C3; every miss draws from the stock
    g = r.new_game(2, deal=Deal(1, (("A1", "B1"), ("A2", "B2", "C1", "C3")), ("B3", "C2", "A3")))
    assert g.pending() == (0,)
    events = g.apply(0, ask(1, "A3"))  # a miss; seat 0 draws B3
    assert [e["kind"] for e in events] == ["ask", "draw"] and g.idle == 0 and not g.terminal
    seat = g.pending()[0]
    events = g.apply(seat, ask(0, "C2"))  # a miss; seat 1 draws C2
    assert [e["kind"] for e in events][:2] == ["ask", "draw"] and g.idle == 0 and not g.terminal


def test_misses_after_the_stock_runs_out_count_again() -> None:
    r = AskRules.from_params({"name": "stocky1", "families": 3, "members": 3, "stock": 1, "stall": 2})
    g = r.new_game(3, deal=Deal(2, (("A1", "B1", "C1"), ("A2", "B2", "C2"), ("B3", "C3")), ("A3",)))
    assert g.pending() == (0,)
    events = g.apply(0, ask(1, "A3"))  # a miss; seat 0 draws A3, the last stock card: no count
    assert [e["kind"] for e in events] == ["ask", "draw"] and g.stock_size() == 0 and g.idle == 0
    g.apply(1, ask(0, "B3"))  # seat 2 holds B3: a miss, counted now that the stock is empty
    assert g.idle == 1 and g.pending() == (0,)
    events = g.apply(0, ask(1, "C3"))
    assert events[0]["next"] is None and g.end_reason == "stalled" and g.scores() == [0, 0, 0]


def test_clone_keeps_the_count() -> None:
    g = kwartet(10).new_game(3, deal=KW_DEAL)
    miss_in_circles(g, 6)
    c = g.clone()
    assert c.idle == 6
    miss_in_circles(c, 4)
    assert c.terminal and not g.terminal and g.idle == 6


def test_chickens_always_ends_complete() -> None:
    g = get_variant("chickens").new_game(3, seed=5)
    rng = g.fallback_rng()
    while not g.terminal:
        for seat in g.pending():
            g.apply(seat, g.random_action(seat, rng))
    assert g.end_reason == "complete"


def test_a_complete_game_says_complete() -> None:
    g = kwartet().new_game(4, seed=3)
    rng = g.fallback_rng()
    while not g.terminal:
        s = g.pending()[0]
        g.apply(s, g.random_action(s, rng))
    assert g.end_reason == "complete" and sum(g.scores()) == 8


# --------------------------------------------------------------------------- properties

_BASES = [
    {"base": "happy-families"},
    {"base": "happy-families-jaques"},
    {"base": "authors"},
    {"base": "kwartet"},
    {"families": 4, "members": 5, "stock": 6, "players": [2, 4]},
    {"base": "authors", "stock": 5, "please": True, "players": [2, 5]},
]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(_BASES), st.integers(1, 12), st.integers(0, 5), st.integers(0, 2**64 - 1))
def test_the_hand_ends_exactly_when_stall_asks_in_a_row_move_nothing(
    base: dict,
    stall: int,
    extra: int,
    seed: int,
) -> None:
    rules = AskRules.from_params({**base, "name": "prop", "stall": stall})
    n = rules.min_players + extra % (rules.max_players - rules.min_players + 1)
    g = rules.new_game(n, seed=seed)
    rng = g.fallback_rng()
    idle = 0  # counted from the public events alone
    while not g.terminal:
        seat = g.pending()[0]
        events = g.apply(seat, g.random_action(seat, rng))
        moved = bool(events[0]["cards"]) or any(e["kind"] == "draw" for e in events)
        idle = 0 if moved else idle + 1
        assert g.idle == idle
        if idle == stall:
            assert events[0]["next"] is None and g.pending() == () and g.end_reason == "stalled"
        else:
            assert idle < stall
    laid = sum(g.scores())
    if g.end_reason == "stalled":
        assert idle == stall and laid < len(rules.families)
    else:
        assert laid == len(rules.families) and idle < stall


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.integers(0, 2**64 - 1))
def test_stalled_games_replay_to_the_same_events(stall: int, seed: int) -> None:
    rules = AskRules.from_params({"name": "prop-replay", "base": "happy-families-jaques", "stall": stall})
    g = rules.new_game(3, seed=seed)
    rng = g.fallback_rng()
    actions, events = [], g.initial_events()
    while not g.terminal:
        seat = g.pending()[0]
        a = g.random_action(seat, rng)
        actions.append((seat, a))
        events += g.apply(seat, a)
    again = rules.new_game(3, seed=seed)
    replayed = again.initial_events()
    for seat, a in actions:
        replayed += again.apply(seat, a)
    assert replayed == events and again.terminal and again.end_reason == g.end_reason
