"""Matches: single, fixed and race (with tie-breaks among a subset of seats)."""

from __future__ import annotations

import pytest

from referee.rules import Rng, RulesError, derive, get_variant
from referee.rules.match import HandSpec, Match, MatchFormat

AUTHORS = get_variant("authors")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "cup"}, "unknown match kind 'cup'; use single, fixed or race"),
        ({"kind": "fixed", "hands": 0}, "a fixed match needs at least 1 hand, not 0"),
        ({"kind": "race", "target": 0}, "a race match needs a target total of at least 1, not 0"),
        ({"kind": "race", "target": 5, "max_hands": 0}, "max_hands must be at least 1, not 0"),
        ({"kind": "single", "hands": 3}, "a single match has exactly 1 hand"),
        ({"kind": "fixed", "hands": "3"}, "match hands must be a whole number, not '3'"),
    ],
)
def test_format_validation(kwargs: dict, message: str) -> None:
    with pytest.raises(RulesError) as info:
        MatchFormat(**kwargs)
    assert message in str(info.value)


def test_format_from_params() -> None:
    assert MatchFormat.from_params(None) == MatchFormat.from_params("single") == MatchFormat()
    assert MatchFormat.from_params({"kind": "race", "target": 10, "hands": None}) == MatchFormat("race", target=10)
    with pytest.raises(RulesError, match="unknown match key\\(s\\) goal; allowed: kind, hands, target, max_hands"):
        MatchFormat.from_params({"kind": "race", "goal": 10})


def test_single_match_is_the_plain_game_of_its_seed() -> None:
    m = Match(AUTHORS, 4, MatchFormat(), seed=77)
    hand = m.next_hand()
    assert hand == HandSpec(0, (0, 1, 2, 3), Rng(77).below(4), 77, False)
    g = m.new_game(hand)
    plain = AUTHORS.new_game(4, seed=77)
    assert g.dealer == plain.dealer and [g.hand(s) for s in range(4)] == [plain.hand(s) for s in range(4)]
    m.record([5, 4, 3, 1])
    assert m.next_hand() is None and m.finished
    assert m.scores() == [5, 4, 3, 1] and m.ranks() == [1, 2, 3, 4] and m.win_shares() == [1.0, 0.0, 0.0, 0.0]


def test_fixed_match_rotates_the_dealer_and_adds_totals() -> None:
    m = Match(AUTHORS, 3, MatchFormat("fixed", hands=4), seed=5, dealer=2)
    dealers, seeds = [], []
    for scores in ([4, 5, 4], [6, 3, 4], [1, 6, 6], [2, 2, 9]):
        hand = m.next_hand()
        assert m.next_hand() is hand  # the same pending hand until it is recorded
        dealers.append(hand.dealer)
        seeds.append(hand.seed)
        assert hand.seats == (0, 1, 2) and not hand.tiebreak
        m.record(scores)
    assert dealers == [2, 0, 1, 2]
    assert seeds == [derive(5, f"hand:{h}") for h in range(4)]
    assert m.next_hand() is None and m.hands_played == 4
    assert m.scores() == [13, 16, 23] and m.ranks() == [3, 2, 1]


def test_fixed_match_ties_share() -> None:
    m = Match(AUTHORS, 3, MatchFormat("fixed", hands=1), seed=1)
    m.next_hand()
    m.record([5, 5, 3])
    assert m.ranks() == [1, 1, 3] and m.win_shares() == [0.5, 0.5, 0.0]


def test_race_tie_break_among_a_subset_of_seats() -> None:
    m = Match(AUTHORS, 4, MatchFormat("race", target=5), seed=9, dealer=0)
    h = m.next_hand()
    assert (h.index, h.seats, h.dealer) == (0, (0, 1, 2, 3), 0)
    m.record([3, 3, 1, 4])  # nobody at 5 yet
    h = m.next_hand()
    assert (h.index, h.seats, h.dealer, h.tiebreak) == (1, (0, 1, 2, 3), 1, False)
    m.record([2, 2, 3, 1])  # totals 5 5 4 5: seats 0, 1 and 3 tie at the best total
    h = m.next_hand()
    # match seat 2 would deal but does not play: the next playing seat clockwise (3) deals, hand seat 2
    assert (h.index, h.seats, h.dealer, h.tiebreak) == (2, (0, 1, 3), 2, True)
    g = m.new_game(h)
    assert g.n == 3 and g.dealer == 2
    m.record([1, 1, 0])  # totals 6 6 4 5: seats 0 and 1 still tied
    h = m.next_hand()
    assert (h.seats, h.dealer, h.tiebreak) == ((0, 1), 0, True)  # seat 3 would deal: 0 is next clockwise
    g = m.new_game(h)  # 2 seats: below authors' minimum of 3, allowed for a tie-break
    assert g.n == 2
    m.record([0, 2])
    assert m.finished and m.next_hand() is None
    assert m.scores() == [6, 8, 4, 5] and m.ranks() == [2, 1, 4, 3] and m.win_shares() == [0.0, 1.0, 0.0, 0.0]


def test_race_stops_after_max_hands_and_the_tied_share() -> None:
    m = Match(AUTHORS, 3, MatchFormat("race", target=5, max_hands=3), seed=2)
    m.next_hand()
    m.record([5, 5, 3])
    h = m.next_hand()
    assert h.seats == (0, 1)
    m.record([3, 3])
    h = m.next_hand()
    assert h.seats == (0, 1) and h.index == 2
    m.record([2, 2])
    assert m.finished and m.next_hand() is None
    assert m.scores() == [10, 10, 3] and m.win_shares() == [0.5, 0.5, 0.0]


def test_race_plays_until_the_target_is_reached() -> None:
    m = Match(get_variant("kwartet"), 4, MatchFormat("race", target=6), seed=3)
    hands = 0
    while (hand := m.next_hand()) is not None:
        game = m.new_game(hand)
        rng = game.fallback_rng()
        while not game.terminal:
            seat = game.pending()[0]
            game.apply(seat, game.random_action(seat, rng))
        m.record(game.scores())
        hands += 1
    best = max(m.scores())
    assert best >= 6 and m.scores().count(best) == 1 and m.hands_played == hands


def test_misuse_is_reported() -> None:
    m = Match(AUTHORS, 4, MatchFormat("fixed", hands=2), seed=0)
    with pytest.raises(RulesError, match="no hand is pending: call next_hand\\(\\) before record\\(\\)"):
        m.record([1, 2, 3, 4])
    m.next_hand()
    with pytest.raises(RulesError, match="hand 0 has 4 seats but 3 scores were given"):
        m.record([1, 2, 3])
    with pytest.raises(RulesError, match="authors is for 3-6 players, not 2"):
        Match(AUTHORS, 2, MatchFormat("fixed", hands=2))
    with pytest.raises(RulesError, match="match dealer 4 is not a seat of this 4-seat table"):
        Match(AUTHORS, 4, MatchFormat(), dealer=4)
    with pytest.raises(RulesError, match="fixed matches are for the ask variants"):
        Match(get_variant("chickens"), 4, MatchFormat("fixed", hands=2))


def test_a_match_hand_with_its_dealer_may_be_a_small_table() -> None:
    """The runtime starts hands with rules.new_game(n, seed=hand.seed, dealer=hand.dealer)."""
    g = AUTHORS.new_game(2, seed=4, dealer=1)
    assert g.n == 2 and g.dealer == 1 and g.pending() == (0,)
    with pytest.raises(RulesError, match="authors is for 3-6 players, not 2"):
        AUTHORS.new_game(2, seed=4)
