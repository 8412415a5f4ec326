"""Ask-game engine: presets, custom-variant validation, deals, stock rules, views, actions."""

from __future__ import annotations

import pytest

from referee.rules import (
    ASK_PRESETS,
    Ask,
    AskRules,
    Deal,
    IllegalAction,
    Rng,
    RulesError,
    derive,
    event_for_seat,
    get_variant,
)


def ask(target: int, card: str | None = None, family: str | None = None, please: bool = False) -> Ask:
    return Ask(target, card, family, please)


# --------------------------------------------------------------------------- presets and wire form


def test_presets_match_the_rules_table() -> None:
    hf = ASK_PRESETS["happy-families"]
    assert hf.deck[:5] == ("A1", "A2", "A3", "A4", "B1") and len(hf.deck) == 44 and hf.deck[-1] == "K4"
    assert (hf.ask, hf.miss, hf.please, hf.stock, hf.first, hf.min_players, hf.max_players) == (
        "card",
        "asked",
        False,
        0,
        "left",
        2,
        6,
    )
    j = ASK_PRESETS["happy-families-jaques"]
    assert (j.deck, j.ask, j.miss, j.please, j.first, j.min_players, j.max_players) == (
        hf.deck,
        "card",
        "next",
        True,
        "dealer",
        2,
        6,
    )
    au = ASK_PRESETS["authors"]
    assert au.deck[:5] == ("2S", "2H", "2D", "2C", "3S") and au.deck[-1] == "AC" and len(au.deck) == 52
    assert "10H" in au.deck
    assert (au.ask, au.miss, au.please, au.min_players, au.max_players) == ("family", "next", False, 3, 6)
    kw = ASK_PRESETS["kwartet"]
    assert kw.deck[:4] == ("7S", "7H", "7D", "7C") and len(kw.deck) == 32
    assert (kw.ask, kw.miss, kw.please, kw.min_players, kw.max_players) == ("card", "asked", False, 3, 6)
    assert all(r.kind == "ask" and r.stock == 0 for r in ASK_PRESETS.values())


def test_wire_form_round_trips() -> None:
    assert ASK_PRESETS["kwartet"].to_wire() == {
        "game": "ask",
        "name": "kwartet",
        "families": ["7", "8", "9", "10", "J", "Q", "K", "A"],
        "members": ["S", "H", "D", "C"],
        "ask": "card",
        "miss": "asked",
        "please": False,
        "stock": 0,
        "first": "left",
        "players": [3, 6],
        "stall": 100,
    }
    custom = AskRules.from_params(
        {"name": "gen", "families": 5, "members": 6, "stock": 10, "first": "dealer", "players": [2, 5]}
    )
    for r in (*ASK_PRESETS.values(), custom):
        assert AskRules.from_params(r.to_wire()) == r
        assert get_variant(r.to_wire()) == r
        assert hash(AskRules.from_params(r.to_wire())) == hash(r)


def test_custom_variant_from_counts_and_base() -> None:
    r = AskRules.from_params({"name": "gen", "families": 3, "members": 6, "stock": 10})
    assert r.families == ("A", "B", "C") and r.members == ("1", "2", "3", "4", "5", "6")
    assert (r.ask, r.miss, r.please, r.stock, r.min_players, r.max_players) == ("card", "asked", False, 10, 2, 6)
    r = AskRules.from_params({"base": "authors", "players": 4})
    assert r.name == "custom" and r.ask == "family" and (r.min_players, r.max_players) == (4, 4)
    assert AskRules.from_params({"base": "authors", "name": "au4", "players": 4}).name == "au4"
    assert AskRules.from_params({"families": 11}).name == "happy-families"
    assert AskRules.from_params({"base": "kwartet"}) == ASK_PRESETS["kwartet"]
    # the table sizes are checked against the cards dealt, inherited or not
    with pytest.raises(RulesError, match=r"6 players need at least 6 dealt cards, .* set players = \[2, 4\]"):
        AskRules.from_params({"name": "s", "families": 2, "members": 2})
    assert AskRules.from_params({"name": "s", "families": 2, "members": 2, "players": [2, 4]}).max_players == 4


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"name": "x", "familes": 3}, "unknown variant parameter(s) 'familes'; allowed: name, base, game, families"),
        ({"name": "x", "families": 0}, "variant 'x': no families; give at least one family name"),
        ({"name": "x", "families": []}, "variant 'x': no families"),
        ({"name": "x", "members": 1}, "variant 'x': each family needs at least 2 members, got 1"),
        ({"name": "x", "base": "uno"}, "unknown base variant 'uno'; 'base' must be one of happy-families, "),
        ({"name": "x", "game": "chickens"}, "'game' must be \"ask\" for an ask variant, not 'chickens'"),
        ({"name": "x", "ask": "all"}, "variant 'x': 'ask' must be \"card\" or \"family\", not 'all'"),
        ({"name": "x", "miss": "left"}, "variant 'x': 'miss' must be \"asked\" or \"next\", not 'left'"),
        ({"name": "x", "first": "right"}, "variant 'x': 'first' must be \"left\" or \"dealer\", not 'right'"),
        ({"name": "x", "please": "yes"}, "variant 'x': 'please' must be true or false, not 'yes'"),
        ({"name": "x", "players": [1, 4]}, "variant 'x': at least 2 players are needed, not 1"),
        ({"name": "x", "players": [4, 3]}, "variant 'x': players [4, 3]: the maximum is below the minimum"),
        ({"name": "x", "players": "four"}, "'players' must be [min, max] (e.g. [3, 6]) or one number"),
        (
            {"name": "x", "families": 2, "members": 3, "players": [2, 7]},
            "variant 'x': 7 players need at least 7 dealt cards, but the deck deals only 6 (6 cards, stock 0)",
        ),
        (
            {"name": "x", "families": 2, "members": 4, "stock": 3, "players": [2, 6]},
            "6 players need at least 6 dealt cards, but the deck deals only 5 (8 cards, stock 3)",
        ),
        ({"name": "x", "stock": -1}, "variant 'x': 'stock' must be a whole number of cards, 0 or more, not -1"),
        ({"name": "x", "stock": 44}, "variant 'x': stock 44 leaves no card to deal from a deck of 44"),
        ({"name": "x", "stock": 2.5}, "'stock' must be a whole number of cards, 0 or more, not 2.5"),
        (
            {"name": "x", "families": ["1", "11"], "members": ["1", "11"]},
            "variant 'x': card name '111' is ambiguous (family '1' + member '11' and family '11' + member '1')",
        ),
        ({"name": "x", "families": ["A", "B", "A"]}, "variant 'x': families name(s) A appear more than once"),
        ({"name": "x", "members": ["1", " 2"]}, "members names must be non-empty strings without spaces"),
        ({"name": "x", "families": "ABC"}, '\'families\' must be a list of names (e.g. ["A", "B"]) or a count'),
        ({"name": "x", "families": 27}, "'families' as a count gives names A..Z, so at most 26"),
        ({"name": ""}, "variant parameter 'name' must be a non-empty string"),
    ],
)
def test_invalid_custom_variants_are_rejected_clearly(params: dict, message: str) -> None:
    with pytest.raises(RulesError) as info:
        AskRules.from_params(params)
    assert message in str(info.value)


def test_table_size_outside_the_range() -> None:
    with pytest.raises(RulesError, match="authors is for 3-6 players, not 2"):
        ASK_PRESETS["authors"].new_game(2, seed=1)
    with pytest.raises(RulesError, match="kwartet is for 3-6 players, not 7"):
        ASK_PRESETS["kwartet"].new_game(7, seed=1)
    assert ASK_PRESETS["authors"].new_game(2, seed=1, tiebreak=True).n == 2  # a match's tie-break table


# --------------------------------------------------------------------------- deals


def test_seeded_deal_is_pinned() -> None:
    """A change in the shuffle or the deal order must be noticed."""
    g = ASK_PRESETS["kwartet"].new_game(4, seed=42)
    assert g.dealer == 1
    assert [g.hand(s) for s in range(4)] == [
        ["8C", "JC", "QH", "QC", "KH", "KC", "AH", "AC"],
        ["7H", "7C", "9D", "9C", "10H", "10D", "JD", "AS"],
        ["8H", "8D", "9S", "9H", "10C", "JH", "QS", "QD"],
        ["7S", "7D", "8S", "10S", "JS", "KS", "KD", "AD"],
    ]
    assert g.initial_events() == [{"kind": "deal", "counts": [8, 8, 8, 8], "laid": [[], [], [], []], "first": 2}]


@pytest.mark.parametrize("name", ["happy-families", "authors", "kwartet"])
def test_seeded_deal_follows_the_documented_procedure(name: str) -> None:
    rules = ASK_PRESETS[name]
    for players in (3, 5):
        for seed in (0, 1, 2**63 + 5):
            rng = Rng(seed)
            dealer = rng.below(players)
            deck = list(rules.deck)
            rng.shuffle(deck)
            hands: list[list[str]] = [[] for _ in range(players)]
            for i, card in enumerate(deck):
                hands[(dealer + 1 + i) % players].append(card)
            g = rules.new_game(players, seed=seed)
            assert g.dealer == dealer
            order = {c: i for i, c in enumerate(rules.deck)}
            for s in range(players):
                laid = {c for f in g.laid()[s] for c in rules.deck if c.startswith(f) and c[len(f) :] in rules.members}
                assert sorted(set(hands[s]) - laid, key=order.get) == g.hand(s)
            sizes = [len(h) for h in hands]
            assert max(sizes) - min(sizes) <= 1 and len(hands[dealer]) == min(sizes)
            assert g.fallback_rng().state == Rng(derive(seed, "fallback")).state


def test_stock_deal_keeps_the_last_cards_top_first() -> None:
    r = AskRules.from_params({"name": "gen", "families": 3, "members": 6, "stock": 10, "players": [2, 4]})
    g = r.new_game(2, seed=7)
    rng = Rng(7)
    assert g.dealer == rng.below(2)
    deck = list(r.deck)
    rng.shuffle(deck)
    assert g.stock_size() == 10
    assert [g.hand(0), g.hand(1)] == [["A1", "A4", "B3", "C4"], ["B2", "B4", "B5", "C5"]]
    # the top of the stock is deck index len-10: seat 0 misses and draws it
    g.apply(0, ask(1, "A2"))
    assert deck[8] == "A2" and "A2" in g.hand(0)


def test_same_seed_same_deal_and_explicit_deal_seed_defaults_to_zero() -> None:
    r = ASK_PRESETS["happy-families"]
    a, b = r.new_game(5, seed=99), r.new_game(5, seed=99)
    assert [a.hand(s) for s in range(5)] == [b.hand(s) for s in range(5)] and a.dealer == b.dealer
    small = AskRules.from_params({"name": "small", "families": 2, "members": 2, "players": 2})
    explicit = Deal(0, (("A1", "B1"), ("A2", "B2")))
    assert small.new_game(2, deal=explicit).seed == 0
    assert small.new_game(2, deal=explicit, seed=5).fallback_rng().state == Rng(derive(5, "fallback")).state
    assert r.new_game(4, seed=None).seed >= 0  # a fresh seed is recorded


def test_explicit_dealer_keeps_the_shuffle() -> None:
    r = ASK_PRESETS["authors"]
    a = r.new_game(4, seed=5)
    b = r.new_game(4, seed=5, dealer=(a.dealer + 1) % 4)
    assert b.dealer == (a.dealer + 1) % 4
    assert b.hand(1) == a.hand(0)  # every hand moved one seat clockwise
    with pytest.raises(RulesError, match="dealer 4 is not a seat of this 4-seat table"):
        r.new_game(4, seed=5, dealer=4)


_SMALL = AskRules.from_params({"name": "small", "families": 2, "members": 2, "players": [2, 3]})


@pytest.mark.parametrize(
    ("deal", "message"),
    [
        (Deal(0, (("A1", "A2"), ("B1", "B2"), ())), "deal: 3 hands given for 2 seats; give one hand per seat"),
        (Deal(2, (("A1", "A2"), ("B1", "B2"))), "deal: dealer 2 is not a seat of this 2-seat table (0..1)"),
        (Deal(0, (("A1", "Z2"), ("B1", "B2"))), "deal: unknown card 'Z2' in seat 0's hand; small cards look like 'A1'"),
        (Deal(0, (("A1", "B1"), ("B1", "B2"))), "deal: card B1 appears twice (seat 0's hand and seat 1's hand)"),
        (Deal(0, (("A1",), ("B1", "B2"))), "deal: 1 card(s) missing: A2"),
        (Deal(0, (("A1",), ("B1", "B2")), ("A2",)), "deal: small keeps 0 card(s) in the stock, the deal's stock has 1"),
    ],
)
def test_invalid_explicit_deals(deal: Deal, message: str) -> None:
    with pytest.raises(RulesError) as info:
        _SMALL.new_game(2, deal=deal)
    assert message in str(info.value)


def test_deal_from_json_is_accepted() -> None:
    g = _SMALL.new_game(2, deal={"dealer": 1, "hands": [["A1", "B1"], ["A2", "B2"]]})
    assert g.pending() == (0,) and g.hand(1) == ["A2", "B2"]


def test_families_laid_from_the_deal_and_empty_first_seat_is_passed_over() -> None:
    g = _SMALL.new_game(3, deal=Deal(2, (("A1", "A2"), ("B1",), ("B2",))))
    assert g.initial_events() == [{"kind": "deal", "counts": [0, 1, 1], "laid": [["A"], [], []], "first": 1}]
    assert g.scores() == [1, 0, 0]
    with pytest.raises(IllegalAction, match="seat 0 has no cards"):
        g.apply(1, ask(0, "B2"))
    assert g.apply(1, ask(2, "B2")) == [
        {
            "kind": "ask",
            "seat": 1,
            "target": 2,
            "card": "B2",
            "please": False,
            "cards": ["B2"],
            "rude": False,
            "next": None,
        },
        {"kind": "laid", "seat": 1, "family": "B"},
    ]
    assert g.terminal and g.ranks() == [1, 1, 3]


def test_everything_laid_from_the_deal_ends_the_game_at_once() -> None:
    g = _SMALL.new_game(2, deal=Deal(0, (("A1", "A2"), ("B1", "B2"))))
    assert g.initial_events()[0]["first"] is None and g.terminal and g.legal_actions(0) == []


# --------------------------------------------------------------------------- stock rules

_STOCKY = AskRules.from_params({"name": "stocky", "families": 3, "members": 3, "stock": 3, "players": [2, 3]})


def test_miss_draws_then_passes_and_a_lone_holder_draws_instead_of_asking() -> None:
    g = _STOCKY.new_game(2, deal=Deal(1, (("A1", "B1"), ("A2", "B2", "C1", "C3")), ("B3", "C2", "A3")))
    assert g.pending() == (0,)
    events = g.apply(0, ask(1, "A3"))
    assert events == [
        {"kind": "ask", "seat": 0, "target": 1, "card": "A3", "please": False, "cards": [], "rude": False, "next": 1},
        {"kind": "draw", "seat": 0, "card": "B3"},
    ]
    assert event_for_seat(events[1], 1) == {"kind": "draw", "seat": 0}  # only the drawer sees the card
    assert event_for_seat(events[1], 0) == events[1]
    assert g.hand(0) == ["A1", "B1", "B3"] and g.stock_size() == 2
    assert g.apply(1, ask(0, "B1"))[0]["next"] == 1
    assert g.apply(1, ask(0, "B3"))[1:] == [{"kind": "laid", "seat": 1, "family": "B"}]
    # seat 0 gives its last card; seat 1 alone holds cards: it draws (and lays) until the game ends
    assert g.apply(1, ask(0, "A1")) == [
        {
            "kind": "ask",
            "seat": 1,
            "target": 0,
            "card": "A1",
            "please": False,
            "cards": ["A1"],
            "rude": False,
            "next": None,
        },
        {"kind": "draw", "seat": 1, "card": "C2"},
        {"kind": "laid", "seat": 1, "family": "C"},
        {"kind": "draw", "seat": 1, "card": "A3"},
        {"kind": "laid", "seat": 1, "family": "A"},
    ]
    assert g.terminal and g.scores() == [0, 3] and g.stock_size() == 0


def test_empty_hand_draws_when_the_turn_comes_while_the_stock_lasts() -> None:
    r = AskRules.from_params({**_STOCKY.to_wire(), "miss": "next"})
    g = r.new_game(3, deal=Deal(2, (("A1", "A2"), (), ("A3", "B1", "B2", "C1")), ("C2", "B3", "C3")))
    assert g.initial_events() == [{"kind": "deal", "counts": [2, 0, 4], "laid": [[], [], []], "first": 0}]
    assert g.apply(0, ask(2, "A3")) == [
        {
            "kind": "ask",
            "seat": 0,
            "target": 2,
            "card": "A3",
            "please": False,
            "cards": ["A3"],
            "rude": False,
            "next": 1,
        },
        {"kind": "laid", "seat": 0, "family": "A"},
        {"kind": "draw", "seat": 1, "card": "C2"},
    ]
    assert g.apply(1, ask(2, "C3")) == [
        {"kind": "ask", "seat": 1, "target": 2, "card": "C3", "please": False, "cards": [], "rude": False, "next": 2},
        {"kind": "draw", "seat": 1, "card": "B3"},
    ]
    assert g.counts() == [0, 2, 3] and g.view(2)["targets"] == [1]


def test_first_dealer_and_draw_at_the_start() -> None:
    r = AskRules.from_params({**_STOCKY.to_wire(), "first": "dealer"})
    g = r.new_game(2, deal=Deal(1, (("B1", "C1"), ("A1", "A2", "A3", "B2")), ("C2", "B3", "C3")))
    assert g.initial_events() == [{"kind": "deal", "counts": [2, 1], "laid": [[], ["A"]], "first": 1}]
    g = r.new_game(2, deal=Deal(1, (("B1", "C1", "B2"), ("A1", "A2", "A3")), ("C2", "B3", "C3")))
    assert g.initial_events() == [
        {"kind": "deal", "counts": [3, 0], "laid": [[], ["A"]], "first": 1},
        {"kind": "draw", "seat": 1, "card": "C2"},
    ]


def test_rude_ask_never_draws() -> None:
    r = AskRules.from_params({**_STOCKY.to_wire(), "please": True})
    g = r.new_game(2, deal=Deal(1, (("A1", "B1"), ("A2", "B2", "C1", "C3")), ("B3", "C2", "A3")))
    assert g.apply(0, ask(1, "A2")) == [
        {"kind": "ask", "seat": 0, "target": 1, "card": "A2", "please": False, "cards": [], "rude": True, "next": 1}
    ]
    assert g.stock_size() == 3 and g.hand(0) == ["A1", "B1"]


# --------------------------------------------------------------------------- actions and views


def test_illegal_actions_name_the_problem_and_change_nothing() -> None:
    g = ASK_PRESETS["happy-families"].new_game(
        3,
        deal=Deal(
            2,
            (
                ("A1", "A2", "B1"),
                ("A3", "B2", "C1", "C2", "C3"),
                ("A4", "B3", "B4", "C4", *[f"{f}{m}" for f in "DEFGHIJK" for m in "1234"]),
            ),
        ),
    )
    before = (g.view(0), g.view(1), g.view(2), g.pending())
    cases = [
        (1, ask(0, "A3"), "it is not your turn: seat 0 is to ask"),
        (0, ask(0, "A3"), "you cannot ask yourself"),
        (0, ask(3, "A3"), "there is no seat 3: seats are 0..2"),
        (0, ask(True, "A3"), "'target' must be a seat number (0..2), not True"),  # type: ignore[arg-type]
        (0, ask(1, "A2"), "you hold A2 yourself"),
        (0, ask(1, "C1"), "you hold no card of family C, so you may not ask for it"),
        (0, ask(1, "Z9"), "unknown card 'Z9'"),
        (0, ask(1, 7), "unknown card 7"),  # type: ignore[arg-type]
        (0, ask(1), "your ask names no card: send 'card'"),
        (0, ask(1, "A3", "A"), "send only 'card', not 'family'"),
        (0, ask(1, family="A"), "this variant asks for exact cards: send 'card'"),
        (0, Ask(1, "A3", None, "yes"), "'please' must be true or false"),  # type: ignore[arg-type]
        (0, object(), "'target' must be a seat number"),
    ]
    for seat, action, reason in cases:
        with pytest.raises(IllegalAction) as info:
            g.apply(seat, action)
        assert reason in info.value.reason, (action, info.value.reason)
        assert (g.view(0), g.view(1), g.view(2), g.pending()) == before


def test_view_legal_actions_and_random_action_agree() -> None:
    g = ASK_PRESETS["happy-families-jaques"].new_game(3, seed=11)
    s = g.pending()[0]
    v = g.view(s)
    assert set(v) == {"hand", "counts", "laid", "options", "targets"}
    assert v["hand"] == g.hand(s) and v["targets"] == [t for t in range(3) if t != s]
    fams = {c[0] for c in v["hand"]}
    assert v["options"] == [c for c in g.rules.deck if c[0] in fams and c not in v["hand"]]
    legal = g.legal_actions(s)
    assert len(legal) == 2 * 2 * len(v["options"])
    assert legal[0] == Ask(v["targets"][0], v["options"][0], None, True)
    assert legal[1] == Ask(v["targets"][0], v["options"][0], None, False)
    for k in range(30):
        rng = Rng(k)
        probe = Rng(k)
        assert g.random_action(s, rng) == legal[probe.below(len(legal))]
    other = (s + 1) % 3
    assert g.legal_actions(other) == [] and g.view(other)["options"] == [] and g.view(other)["targets"] == []
    with pytest.raises(IllegalAction, match="it is not your turn"):
        g.random_action(other, Rng(0))


def test_family_mode_options_are_families() -> None:
    g = ASK_PRESETS["authors"].new_game(3, seed=3)
    s = g.pending()[0]
    v = g.view(s)
    fams = [f for f in g.rules.families if any(c[:-1] == f for c in v["hand"])]
    assert v["options"] == fams
    assert g.legal_actions(s) == [Ask(t, None, f, False) for t in v["targets"] for f in fams]


def test_clone_is_independent() -> None:
    g = ASK_PRESETS["kwartet"].new_game(4, seed=1)
    c = g.clone()
    s = g.pending()[0]
    c.apply(s, c.random_action(s, Rng(1)))
    assert g.pending() == (s,) and [g.hand(x) for x in range(4)] == [
        ASK_PRESETS["kwartet"].new_game(4, seed=1).hand(x) for x in range(4)
    ]


def test_protocol_replies_are_actions() -> None:
    """The runtime passes decoded AskReply messages straight to apply()."""
    from protocol.messages import BOT_DECODER

    g = ASK_PRESETS["kwartet"].new_game(4, seed=42)  # seat 2 is to ask and holds 8H 8D 9S ...
    reply = BOT_DECODER.decode(b'{"type":"ask","id":1,"target":0,"card":"8C"}')
    assert g.apply(2, reply)[0] == {
        "kind": "ask",
        "seat": 2,
        "target": 0,
        "card": "8C",
        "please": False,
        "cards": ["8C"],
        "rude": False,
        "next": 2,
    }
    with pytest.raises(IllegalAction, match="send only 'card', not 'family'"):
        g.apply(2, BOT_DECODER.decode(b'{"type":"ask","id":2,"target":0,"card":"8S","family":"8"}'))


def test_rules_and_games_pickle_and_copy() -> None:
    import copy
    import pickle

    r = AskRules.from_params({"name": "gen", "families": 4, "members": 5, "stock": 4})
    assert pickle.loads(pickle.dumps(r)) == r
    g = r.new_game(3, seed=8)
    for other in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g), g.clone()):
        s = g.pending()[0]
        a = other.random_action(s, Rng(2))
        assert other.apply(s, a) == g.clone().apply(s, a)


def test_random_action_with_any_generator_object_draws_the_same() -> None:
    """random_action inlines Rng.below for speed; another generator object goes through .below()."""

    class CountingRng(Rng):
        calls = 0

        def below(self, n: int) -> int:
            CountingRng.calls += 1
            return super().below(n)

    for name in ("happy-families-jaques", "authors"):
        a = ASK_PRESETS[name].new_game(4, seed=12)
        b = ASK_PRESETS[name].new_game(4, seed=12)
        ra, rb = a.fallback_rng(), CountingRng(a.fallback_rng().state)
        while not a.terminal:
            s = a.pending()[0]
            x, y = a.random_action(s, ra), b.random_action(s, rb)
            assert x == y and ra.state == rb.state
            assert a.apply(s, x) == b.apply(s, y)
        assert b.terminal and CountingRng.calls > 0


def test_deal_hand_sizes_against_the_dealing_rule() -> None:
    def deal(dealer: int, *sizes: int) -> Deal:
        cards = iter(f"c{i}" for i in range(100))
        return Deal(dealer, tuple(tuple(next(cards) for _ in range(k)) for k in sizes))

    # dealt one at a time from the dealer's left: the seats dealt last, the dealer among them, are short
    for ok in (
        deal(2, 11, 11, 10),
        deal(0, 10, 11, 10, 10),
        deal(1, 8, 7, 8, 8),
        deal(3, 11, 11, 11, 11),
        deal(0, 3, 3),
    ):
        assert ok.dealing_rule_problem() is None, ok
    assert deal(2, 12, 11, 9).dealing_rule_problem() == (
        "the hands differ by more than one card (seat 0: 12, seat 1: 11, seat 2: 9); dealing one card at a time "
        "gives hands that differ by at most one"
    )
    assert deal(0, 11, 11, 10).dealing_rule_problem() == (
        "the dealer (seat 0) holds a long hand of 11 cards while seat 2 holds 10; dealing starts left of the "
        "dealer, so the dealer, dealt last, gets a short hand"
    )
    assert deal(3, 8, 7, 8, 7).dealing_rule_problem() == (
        "seat 2 holds 8 cards but seat 1, dealt before it (clockwise from the dealer's left), holds only 7; the "
        "short hands go to the seats dealt last"
    )
    assert Deal(5, (("A1",),)).dealing_rule_problem() is None  # invalid anyway: the engine refuses it


def test_ask_params_are_the_one_parameter_list() -> None:
    import pickle

    import msgspec

    from referee.rules.ask import AskParams

    keys = [f.name for f in msgspec.structs.fields(AskParams)]
    with pytest.raises(RulesError, match="allowed: " + ", ".join(keys) + "$"):
        AskRules.from_params({"colour": 2})
    # a rules record's wire form is a parameter mapping that rebuilds it; every record pickles
    for rules in ASK_PRESETS.values():
        assert AskRules.from_params(rules.to_wire()) == rules
        assert pickle.loads(pickle.dumps(rules)) == rules
    # the constraints are the Struct's (msgspec.Meta), worded by each key's description
    for key, bad in (("stall", 0), ("family_points", 0), ("stock", -1), ("name", "")):
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert({key: bad}, AskParams)
        with pytest.raises(RulesError, match=f"'{key}' must be "):
            AskRules.from_params({"name": "x", key: bad})
