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


def test_fixed_match_tie_is_broken_by_hands_among_the_tied_seats_only() -> None:
    m = Match(AUTHORS, 4, MatchFormat("fixed", hands=2), seed=1, dealer=1)
    h = m.next_hand()
    assert (h.index, h.seats, h.dealer, h.tiebreak) == (0, (0, 1, 2, 3), 1, False)
    m.record([3, 4, 4, 2])  # a tie after hand 1 of 2 does not matter yet
    h = m.next_hand()
    assert (h.index, h.seats, h.dealer, h.tiebreak) == (1, (0, 1, 2, 3), 2, False)
    m.record([3, 2, 1, 4])  # totals 6 6 5 6: seats 0, 1 and 3 share the best total
    assert not m.finished
    h = m.next_hand()
    # match seat 3 deals (the deal passes clockwise): it plays, as hand seat 2
    assert (h.index, h.seats, h.dealer, h.tiebreak) == (2, (0, 1, 3), 2, True)
    g = m.new_game(h)
    assert g.n == 3 and g.dealer == 2
    m.record([2, 2, 1])  # totals 8 8 5 7: seats 0 and 1 still tied, seat 3 drops out
    h = m.next_hand()
    # match seat 0 would deal: it plays, as hand seat 0
    assert (h.index, h.seats, h.dealer, h.tiebreak) == (3, (0, 1), 0, True)
    g = m.new_game(h)  # 2 seats: below authors' minimum of 3, allowed for a tie-break
    assert g.n == 2
    m.record([1, 0])
    assert m.finished and m.next_hand() is None and m.hands_played == 4
    assert m.scores() == [9, 8, 5, 7] and m.ranks() == [1, 2, 4, 3] and m.win_shares() == [1.0, 0.0, 0.0, 0.0]


def test_fixed_match_without_a_tie_plays_exactly_its_hands() -> None:
    m = Match(AUTHORS, 3, MatchFormat("fixed", hands=2), seed=1)
    m.next_hand()
    m.record([5, 5, 3])
    m.next_hand()
    m.record([1, 0, 0])
    assert m.finished and m.hands_played == 2 and m.win_shares() == [1.0, 0.0, 0.0]


def test_fixed_match_tie_breaks_stop_at_max_hands_and_the_tied_share() -> None:
    fmt = MatchFormat("fixed", hands=1, max_hands=3)
    assert fmt.cap == 3
    m = Match(AUTHORS, 3, fmt, seed=1)
    m.next_hand()
    m.record([5, 5, 3])
    for index in (1, 2):
        h = m.next_hand()
        assert h.seats == (0, 1) and h.tiebreak and h.index == index
        m.record([2, 2])
    assert m.finished and m.next_hand() is None and m.hands_played == 3
    assert m.scores() == [9, 9, 3] and m.ranks() == [1, 1, 3] and m.win_shares() == [0.5, 0.5, 0.0]


def test_a_fixed_match_always_plays_its_hands_even_beyond_max_hands() -> None:
    fmt = MatchFormat("fixed", hands=4, max_hands=2)
    assert fmt.cap == 4  # no room for a tie-break: a tie after hand 4 is shared
    m = Match(AUTHORS, 3, fmt, seed=1)
    for _ in range(4):
        m.next_hand()
        m.record([1, 1, 0])
    assert m.finished and m.hands_played == 4 and m.win_shares() == [0.5, 0.5, 0.0]


def test_fixed_match_played_out_ends_with_one_leader_or_at_the_cap() -> None:
    kw = get_variant("kwartet")
    tie_breaks = 0
    for seed in range(40):
        m = Match(kw, 4, MatchFormat("fixed", hands=2, max_hands=6), seed=seed)
        while (hand := m.next_hand()) is not None:
            game = m.new_game(hand)
            rng = game.fallback_rng()
            while not game.terminal:
                s = game.pending()[0]
                game.apply(s, game.random_action(s, rng))
            m.record(game.scores())
            tie_breaks += hand.tiebreak
        best = max(m.scores())
        assert m.hands_played >= 2
        assert m.scores().count(best) == 1 or m.hands_played == 6
    assert tie_breaks > 0  # kwartet's 8 families tie often enough to exercise the tie-breaks


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


def test_a_race_that_reaches_the_cap_with_nobody_at_the_target_is_won_by_the_best_total() -> None:
    m = Match(AUTHORS, 3, MatchFormat("race", target=50, max_hands=2), seed=4)
    m.next_hand()
    m.record([3, 1, 2])
    m.next_hand()
    m.record([2, 4, 1])
    assert m.finished and m.next_hand() is None and m.hands_played == 2
    assert m.scores() == [5, 5, 3]  # nobody reached 50; a tie at the cap is shared
    assert m.win_shares() == [0.5, 0.5, 0.0]
    m = Match(AUTHORS, 3, MatchFormat("race", target=50, max_hands=1), seed=4)
    m.next_hand()
    m.record([1, 4, 2])
    assert m.finished and m.win_shares() == [0.0, 1.0, 0.0] and m.ranks() == [3, 1, 2]


@pytest.mark.parametrize("seed", range(6))
def test_a_two_seat_hand_without_a_stock_goes_to_the_first_asker(seed: int) -> None:
    """Two seats, no stock: every card a seat does not hold is in the other hand, so every legal ask
    hits and the first asker keeps the turn until it has laid every family it holds a card of (docs/RULES.md:
    a two-seat tie-break is decided by the dealer rotation)."""
    for name in ("kwartet", "authors", "happy-families"):
        game = get_variant(name).new_game(2, seed=seed, tiebreak=True)
        first = game.pending()[0]
        rng = Rng(seed)
        while not game.terminal:
            seat = game.pending()[0]
            for event in game.apply(seat, game.random_action(seat, rng)):
                if event["kind"] == "ask":
                    assert event["cards"] and event["seat"] == first, event
        assert game.scores()[first] >= game.scores()[1 - first]
