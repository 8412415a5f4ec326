"""``family_points`` (RULES.md: seed 002 lets bigger families score more): what one laid family scores."""

from __future__ import annotations

import pytest

from referee.rules import get_variant
from referee.rules.ask import AskRules
from referee.rules.base import Deal, RulesError
from referee.rules.match import Match, MatchFormat
from referee.rules.rng import Rng

SIX = {"name": "generations", "families": 4, "members": 6, "family_points": 2, "players": [2, 4]}


def _play_out(g):
    """Play a game to its end with the first legal action each time."""
    rng = Rng(7)
    while not g.terminal:
        (seat,) = g.pending()
        g.apply(seat, g.random_action(seat, rng))
    return g


def test_scores_count_points_per_family():
    rules = get_variant(SIX)
    g = _play_out(rules.new_game(3, seed=11))
    assert g.end_reason == "complete"
    laid = [len(x) for x in g.laid()]
    assert sum(laid) == 4 and g.scores() == [2 * k for k in laid]


def test_families_laid_from_the_deal_score_points_too():
    rules = get_variant({"name": "tiny", "families": 2, "members": 2, "family_points": 3, "players": [2, 2]})
    g = rules.new_game(2, deal=Deal(0, (("A1", "A2"), ("B1", "B2"))))
    assert g.terminal and g.scores() == [3, 3]


def test_the_wire_form_names_family_points_only_when_it_is_not_one():
    rules = get_variant(SIX)
    wire = rules.to_wire()
    assert wire["family_points"] == 2
    assert AskRules.from_record(wire) == rules and get_variant(wire) == rules
    assert "family_points" not in get_variant("kwartet").to_wire()  # the presets' wire form is unchanged
    assert AskRules.from_record(get_variant("kwartet").to_wire()).family_points == 1


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_a_bad_family_points_value_is_a_clear_error(bad):
    with pytest.raises(RulesError, match="'family_points' must be a whole number"):
        get_variant({**SIX, "family_points": bad})


def test_a_preset_with_other_points_is_custom():
    assert get_variant({"base": "kwartet", "family_points": 2}).name == "custom"
    with pytest.raises(RulesError, match="belongs to a built-in variant"):
        get_variant({"name": "kwartet", "base": "kwartet", "family_points": 2})


def test_a_race_match_reaches_its_target_in_points():
    rules = get_variant(SIX)
    match = Match(rules, 2, MatchFormat(kind="race", target=10), seed=3)
    hands = 0
    while (hand := match.next_hand()) is not None:
        g = _play_out(match.new_game(hand))
        match.record(g.scores())
        hands += 1
    totals = match.scores()
    assert max(totals) >= 10 and all(t % 2 == 0 for t in totals) and hands >= 2
