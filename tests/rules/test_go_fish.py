"""The Go Fish engine's own rules: parameters, deals, illegal asks, the stalemate rule, views (pure, fast;
tests/rules/test_go_fish_oracle.py compares whole games with pyspiel)."""

from __future__ import annotations

import msgspec
import pytest

from referee.rules import Ask, Deal, IllegalAction, RulesError, get_variant
from referee.rules.go_fish import GoFishRules, GoFishRulesWire


def test_the_preset_has_openspiels_default_parameters():
    rules = get_variant("go-fish")
    assert len(rules.deck) == 52 and rules.deck[:2] == ("2S", "2H") and rules.deck[-1] == "AC"
    assert (rules.min_players, rules.max_players) == (2, 10)
    assert rules.hand_size(2) == 7 and rules.hand_size(3) == 5 and rules.hand_size(10) == 5
    assert rules.ask_after_empty_draw and not rules.end_on_first_out and rules.most_books_wins
    wire = rules.to_wire()
    msgspec.convert(wire, GoFishRulesWire)
    assert wire["ask"] == "family" and wire["initial_cards"] is None


def test_a_config_names_the_parameters_and_gets_clear_errors():
    rules = get_variant({"game": "go-fish", "name": "short", "families": 6, "members": 3, "players": [2, 3]})
    assert rules.families == ("2", "3", "4", "5", "6", "7") and rules.members == ("S", "H", "D")
    assert get_variant(rules.to_wire()) == rules
    with pytest.raises(RulesError, match="Go Fish variant 'x'.*initial_cards"):
        get_variant({"game": "go-fish", "name": "x", "initial_cards": "seven"})
    with pytest.raises(RulesError, match="unknown field `colour`"):
        get_variant({"game": "go-fish", "name": "x", "colour": "red"})
    with pytest.raises(RulesError, match="2 players with 7 cards each need 14 cards, the deck has 12"):
        get_variant({"game": "go-fish", "name": "x", "families": 4, "members": 3, "players": [2, 4]})
    with pytest.raises(RulesError, match="needs end_on_first_out = true"):
        get_variant({"game": "go-fish", "name": "x", "most_books_wins": False})
    with pytest.raises(RulesError, match="belongs to a built-in variant"):
        get_variant({"game": "go-fish", "name": "go-fish", "stall": 5})
    with pytest.raises(RulesError, match="2 <= min <= max <= 10"):
        get_variant({"game": "go-fish", "name": "x", "players": [2, 11]})


def _small() -> GoFishRules:
    return GoFishRules(name="small", families=("A", "B", "C"), members=("1", "2"), max_players=3, initial_cards=2)


def test_a_hit_keeps_the_turn_a_miss_fishes_and_books_are_laid():
    rules = _small()
    deal = Deal(dealer=1, hands=(("A1", "B1"), ("A2", "C1")), stock=("B2", "C2"))
    g = rules.new_game(2, deal=deal)
    assert g.initial_events() == [{"kind": "deal", "counts": [2, 2], "laid": [[], []], "first": 0}]
    assert g.view(0)["options"] == ["A", "B"] and g.view(0)["targets"] == [1] and g.view(1)["options"] == []
    events = g.apply(0, Ask(target=1, family="A"))  # hit: A2 moves, the book A is laid
    assert events[0]["cards"] == ["A2"] and events[1] == {"kind": "laid", "seat": 0, "family": "A"}
    assert events[0]["next"] == 0 and g.scores() == [1, 0]
    events = g.apply(0, Ask(target=1, family="B"))  # miss: fish B2, the rank asked for: ask again
    assert [e["kind"] for e in events] == ["ask", "draw", "laid", "draw"] and events[1]["card"] == "B2"
    # seat 0 has no cards now: it draws C2 from the stock (ask_after_empty_draw) and asks again
    assert events[-1] == {"kind": "draw", "seat": 0, "card": "C2"} and events[0]["next"] == 0
    events = g.apply(0, Ask(target=1, family="C"))
    assert g.terminal and g.scores() == [3, 0] and g.end_reason == "complete" and events[0]["next"] is None


def test_illegal_asks_say_why():
    g = _small().new_game(2, deal=Deal(dealer=1, hands=(("A1", "B1"), ("A2", "C1")), stock=("B2", "C2")))
    for action, why in [
        (Ask(target=0, family="A"), "cannot ask yourself"),
        (Ask(target=5, family="A"), "there is no seat 5"),
        (Ask(target=1, family="C"), "you hold no card of rank C"),
        (Ask(target=1, family="Z"), "unknown rank 'Z'"),
        (Ask(target=1, card="A2"), "ask for a rank: name a 'family'"),
    ]:
        with pytest.raises(IllegalAction, match=why):
            g.apply(0, action)
    with pytest.raises(IllegalAction, match="not your turn: seat 0"):
        g.apply(1, Ask(target=0, family="A"))


def test_a_bad_deal_is_refused():
    rules = _small()
    with pytest.raises(RulesError, match="appears twice"):
        rules.new_game(2, deal=Deal(dealer=0, hands=(("A1", "A1"), ("A2", "C1")), stock=("B2", "C2")))
    with pytest.raises(RulesError, match="missing"):
        rules.new_game(2, deal=Deal(dealer=0, hands=(("A1",), ("A2", "C1")), stock=("B2", "C2")))
    with pytest.raises(RulesError, match="not a seat"):
        rules.new_game(2, deal=Deal(dealer=2, hands=(("A1", "B1"), ("A2", "C1")), stock=("B2", "C2")))


def test_the_stalemate_rule_ends_a_hand_of_misses():
    rules = GoFishRules(name="s", families=("A", "B", "C"), members=("1", "2"), max_players=3, stall=2, initial_cards=2)
    # no stock: seat 0 asks 1 for B (1 has none), 1 asks 2 for C, 2 misses too: stalled after 2
    g = rules.new_game(3, deal=Deal(dealer=2, hands=(("A1", "B1"), ("A2", "C1"), ("B2", "C2")), stock=()))
    g.apply(0, Ask(target=1, family="B"))
    assert g.pending() == (1,)
    g.apply(1, Ask(target=0, family="C"))
    assert g.terminal and g.end_reason == "stalled" and g.scores() == [0, 0, 0]


def test_first_out_scoring():
    rules = GoFishRules(
        name="f",
        families=("A", "B", "C"),
        members=("1", "2"),
        max_players=2,
        initial_cards=2,
        end_on_first_out=True,
        most_books_wins=False,
    )
    g = rules.new_game(2, deal=Deal(dealer=1, hands=(("A1", "B1"), ("A2", "B2")), stock=("C1", "C2")))
    g.apply(0, Ask(target=1, family="A"))
    g.apply(0, Ask(target=1, family="B"))  # seat 0 goes out: the game ends, it wins
    assert g.terminal and g.scores() == [1, 0]


def test_a_seeded_game_is_reproducible_and_random_play_ends():
    rules = get_variant("go-fish")
    for n in (2, 3, 6, 10):
        a, b = rules.new_game(n, seed=11), rules.new_game(n, seed=11)
        assert [a.hand(s) for s in range(n)] == [b.hand(s) for s in range(n)]
        assert all(len(a.dealt_hand(s)) == rules.hand_size(n) for s in range(n))
        rng = a.fallback_rng()
        while a.pending():
            seat = a.pending()[0]
            a.apply(seat, a.random_action(seat, rng))
        assert sum(a.scores()) == 13 and a.end_reason == "complete"
