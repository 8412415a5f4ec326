"""The worked examples of docs/RULES.md (seeds 000, 001, 002, 003) as explicit deals.

Seed 004's chickens examples (a lone robber takes the whole centre; police with a robber) are in
tests/rules/test_chickens.py (``test_lone_robber_takes_everything_including_jack_black_004``,
``test_police_with_robber_004``); the stalemate rule's example is in tests/rules/test_stall.py.
"""

from __future__ import annotations

import pytest

from referee.rules import Ask, Deal, IllegalAction, get_variant, ranks_from_scores, win_shares


def ask(target: int, card: str | None = None, family: str | None = None, please: bool = False) -> Ask:
    return Ask(target, card, family, please)


# --------------------------------------------------------------------------- 000 happy families

# Alice 0, Ben 1, Dora 2, Kara 3; dealer 3, so Alice starts.
_HF_REST = [[f"{f}{m}" for f in "CDEFGHIJK"] for m in "1234"]  # seat m-1 gets member m of C..K
HF_DEAL = Deal(
    dealer=3,
    hands=(
        ("A1", "A2", "A4", "B1", *_HF_REST[0]),
        ("A3", *_HF_REST[1]),
        ("B2", *_HF_REST[2]),
        ("B3", "B4", *_HF_REST[3]),
    ),
)


def test_000_hit_lays_and_keeps_turn_then_miss_goes_to_asked() -> None:
    g = get_variant("happy-families").new_game(4, deal=HF_DEAL)
    assert g.initial_events() == [{"kind": "deal", "counts": [13, 10, 10, 11], "laid": [[], [], [], []], "first": 0}]
    assert g.pending() == (0,)
    assert g.apply(0, ask(1, "A3")) == [
        {
            "kind": "ask",
            "seat": 0,
            "target": 1,
            "card": "A3",
            "please": False,
            "cards": ["A3"],
            "rude": False,
            "next": 0,
        },
        {"kind": "laid", "seat": 0, "family": "A"},
    ]
    assert g.scores() == [1, 0, 0, 0]
    assert "A3" not in g.hand(1) and g.hand(0)[0] == "B1"  # Ben's other families stay with him
    # Alice asks Kara for B2; Kara has none: Kara asks next, not Ben (left of Alice)
    assert g.apply(0, ask(3, "B2")) == [
        {"kind": "ask", "seat": 0, "target": 3, "card": "B2", "please": False, "cards": [], "rude": False, "next": 3},
    ]
    assert g.pending() == (3,)
    assert "B1" in g.hand(0)  # Alice keeps B1
    with pytest.raises(IllegalAction, match="it is not your turn: seat 3 is to ask"):
        g.apply(0, ask(1, "B2"))


# --------------------------------------------------------------------------- 002 the Jaques tradition

# Seed 002: "Nella variante Jaques, il mazziere va per primo". Alice 0 is the dealer, Ben 1, Dora 2,
# Kara 3; 44 cards, 11 each (dealt from Ben, so the dealer is among the short hands, here all equal).
JQ_DEAL = Deal(
    dealer=0,
    hands=(
        ("A1", "A2", "A4", "B1", *_HF_REST[0][2:]),
        ("A3", "C1", *_HF_REST[1]),
        ("B2", "D1", *_HF_REST[2]),
        ("B3", "B4", *_HF_REST[3]),
    ),
)


def test_002_jaques_dealer_asks_first() -> None:
    rules = get_variant("happy-families-jaques")
    assert rules.first == "dealer" and rules.to_wire()["first"] == "dealer"
    assert [len(h) for h in JQ_DEAL.hands] == [11, 11, 11, 11]
    g = rules.new_game(4, deal=JQ_DEAL)
    assert g.initial_events() == [{"kind": "deal", "counts": [11, 11, 11, 11], "laid": [[], [], [], []], "first": 0}]
    assert g.pending() == (0,) and g.dealer == 0  # the dealer, Alice, asks first
    with pytest.raises(IllegalAction, match="it is not your turn: seat 0 is to ask"):
        g.apply(1, ask(0, "A1", please=True))  # Ben, left of the dealer, does not
    # Alice holds A1 A2 A4 and asks Ben for A3, please: he gives it, she lays family A and asks again
    assert g.apply(0, ask(1, "A3", please=True)) == [
        {
            "kind": "ask",
            "seat": 0,
            "target": 1,
            "card": "A3",
            "please": True,
            "cards": ["A3"],
            "rude": False,
            "next": 0,
        },
        {"kind": "laid", "seat": 0, "family": "A"},
    ]
    # she asks Kara for B2, Kara has none: under Jaques the turn goes to the next seat clockwise (Ben)
    assert g.apply(0, ask(3, "B2", please=True))[0]["next"] == 1


def test_002_the_other_presets_start_left_of_the_dealer() -> None:
    for name in ("happy-families", "authors", "kwartet"):
        assert get_variant(name).first == "left"
    g = get_variant("happy-families").new_game(4, deal=JQ_DEAL)
    assert g.initial_events()[0]["first"] == 1 and g.pending() == (1,)  # Ben, left of Alice


def test_002_seeded_jaques_games_start_with_the_dealer() -> None:
    rules = get_variant("happy-families-jaques")
    for seed in range(20):
        for n in (2, 3, 6):
            g = rules.new_game(n, seed=seed)
            first = g.initial_events()[0]["first"]
            # the dealer, unless its hand was emptied by families laid straight from the deal
            assert first == g.dealer or (
                g.counts()[g.dealer] == 0
                and first == next((g.dealer + k) % n for k in range(1, n) if g.counts()[(g.dealer + k) % n])
            )


def test_002_rude_ask_is_a_penalty_and_a_polite_miss_goes_left() -> None:
    g = get_variant("happy-families-jaques").new_game(4, deal=JQ_DEAL)
    # a rude ask: nothing moves although Ben holds A3, the turn goes to Ben
    assert g.apply(0, ask(1, "A3")) == [
        {"kind": "ask", "seat": 0, "target": 1, "card": "A3", "please": False, "cards": [], "rude": True, "next": 1},
    ]
    assert "A3" in g.hand(1)


# --------------------------------------------------------------------------- 001 authors

# Anna 0, Vera 1, Boris 2, Dima 3 (so "Anna's left" is Vera, not Boris); dealer 3.
_RANKS = ("2", "3", "4", "5", "6", "7", "8", "10", "J", "Q", "K")


def _authors_deal(nine_d_at: int) -> Deal:
    hands: list[list[str]] = [[r + s for r in _RANKS] for s in "SHDC"]
    hands[0] += ["9S", "9H"]
    hands[1] += ["9C", "AS", "AC"]
    hands[2] += ["AH"]
    hands[3] += ["AD"]
    hands[nine_d_at].append("9D")
    return Deal(dealer=3, hands=tuple(tuple(h) for h in hands))


def test_001_family_asks_continue_and_lay() -> None:
    g = get_variant("authors").new_game(4, deal=_authors_deal(nine_d_at=2))
    assert g.initial_events()[0]["first"] == 0
    assert g.apply(0, ask(2, family="9")) == [
        {
            "kind": "ask",
            "seat": 0,
            "target": 2,
            "family": "9",
            "please": False,
            "cards": ["9D"],
            "rude": False,
            "next": 0,
        },
    ]
    assert g.apply(0, ask(1, family="9")) == [
        {
            "kind": "ask",
            "seat": 0,
            "target": 1,
            "family": "9",
            "please": False,
            "cards": ["9C"],
            "rude": False,
            "next": 0,
        },
        {"kind": "laid", "seat": 0, "family": "9"},
    ]
    assert g.laid() == [["9"], [], [], []]
    with pytest.raises(IllegalAction, match="you hold no card of family A, so you may not ask for it"):
        g.apply(0, ask(1, family="A"))
    with pytest.raises(IllegalAction, match="family 9 is already laid"):
        g.apply(0, ask(1, family="9"))
    with pytest.raises(IllegalAction, match="this variant asks for whole families: send 'family', not 'card'"):
        g.apply(0, ask(1, card="2H"))
    # she asks again: every card of the family moves
    assert g.apply(0, ask(1, family="2"))[0]["cards"] == ["2H"]
    assert g.pending() == (0,)


def test_001_miss_passes_to_the_askers_left() -> None:
    g = get_variant("authors").new_game(4, deal=_authors_deal(nine_d_at=3))
    events = g.apply(0, ask(2, family="9"))  # Boris has no nines
    assert events == [
        {"kind": "ask", "seat": 0, "target": 2, "family": "9", "please": False, "cards": [], "rude": False, "next": 1},
    ]


# --------------------------------------------------------------------------- 003 kwartet

KW_DEAL = Deal(
    dealer=3,
    hands=(
        ("QS", "QD", "QC", "7S", "7H", "7D", "8S", "8H", "8D"),
        ("QH", "7C", "9S", "9H", "9D", "10S", "10H", "10D", "AC"),
        ("8C", "9C", "JS", "JH", "JD", "KS", "KH", "KD"),
        ("10C", "JC", "KC", "AS", "AH", "AD"),
    ),
)


def _ev(seat: int, target: int, card: str, cards: list[str], nxt: int | None) -> dict:
    return {
        "kind": "ask",
        "seat": seat,
        "target": target,
        "card": card,
        "please": False,
        "cards": cards,
        "rude": False,
        "next": nxt,
    }


def _laid(seat: int, family: str) -> dict:
    return {"kind": "laid", "seat": seat, "family": family}


def test_003_only_the_named_card_moves_and_the_game_ends_3_2_2_1() -> None:
    g = get_variant("kwartet").new_game(4, deal=KW_DEAL)
    assert g.initial_events() == [{"kind": "deal", "counts": [9, 9, 8, 6], "laid": [[], [], [], []], "first": 0}]
    assert g.apply(0, ask(1, "QH")) == [_ev(0, 1, "QH", ["QH"], 0), _laid(0, "Q")]
    assert g.hand(1)[0] == "7C"  # only QH moved
    assert g.apply(0, ask(1, "7C")) == [_ev(0, 1, "7C", ["7C"], 0), _laid(0, "7")]
    # A's last family: its hand is then empty, the turn passes clockwise to B
    assert g.apply(0, ask(2, "8C")) == [_ev(0, 2, "8C", ["8C"], 1), _laid(0, "8")]
    assert g.hand(0) == [] and g.counts() == [0, 7, 7, 6]
    with pytest.raises(IllegalAction, match="seat 0 has no cards"):
        g.apply(1, ask(0, "9C"))
    assert g.apply(1, ask(2, "9C")) == [_ev(1, 2, "9C", ["9C"], 1), _laid(1, "9")]
    assert g.apply(1, ask(3, "10C")) == [_ev(1, 3, "10C", ["10C"], 1), _laid(1, "10")]
    assert g.apply(1, ask(2, "AH")) == [_ev(1, 2, "AH", [], 2)]  # C has no AH: C asks next
    assert g.apply(2, ask(3, "JC")) == [_ev(2, 3, "JC", ["JC"], 2), _laid(2, "J")]
    assert g.apply(2, ask(3, "KC")) == [_ev(2, 3, "KC", ["KC"], 3), _laid(2, "K")]
    assert g.pending() == (3,)
    assert g.apply(3, ask(1, "AC")) == [_ev(3, 1, "AC", ["AC"], None), _laid(3, "A")]
    assert g.terminal and g.pending() == ()
    assert g.scores() == [3, 2, 2, 1]
    assert sum(g.scores()) == 8
    assert g.ranks() == [1, 2, 2, 4] == ranks_from_scores([3, 2, 2, 1])
    assert win_shares(g.scores()) == [1.0, 0.0, 0.0, 0.0]
    with pytest.raises(IllegalAction, match="the game is over"):
        g.apply(3, ask(1, "AC"))


def test_003_miss_goes_to_the_asked_and_a_listener_gives_nothing() -> None:
    hands = [list(h) for h in KW_DEAL.hands]
    hands[1].remove("QH")
    hands[2].append("QH")  # C holds QH, B does not
    g = get_variant("kwartet").new_game(4, deal=Deal(dealer=3, hands=tuple(tuple(h) for h in hands)))
    assert g.apply(0, ask(1, "QH")) == [_ev(0, 1, "QH", [], 1)]
    assert g.pending() == (1,)
    assert "QH" in g.hand(2) and "QH" not in g.hand(0)
    with pytest.raises(IllegalAction, match="you hold 9S yourself"):
        g.apply(1, ask(0, "9S"))
    with pytest.raises(IllegalAction, match="unknown card 'Z9'"):
        g.apply(1, ask(0, "Z9"))
    with pytest.raises(IllegalAction, match="this variant asks for exact cards"):
        g.apply(1, ask(0, family="9"))
