"""docs/RULES.md states figures that the engines must reproduce: the generator's
test vectors, the two deal examples, the chickens wire form and the rejection of
ambiguous card names. These tests keep the rule book honest."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from referee.rules import Ask, Rng, RulesError, derive, get_variant

RULEBOOK = Path(__file__).resolve().parents[2] / "docs" / "RULES.md"


def test_generator_test_vectors() -> None:
    r = Rng(0)
    assert [r.next() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    r = Rng(1)
    assert (r.below(4), r.below(32)) == (1, 7)
    assert derive(42, "fallback") == 13185443930595569905
    text = RULEBOOK.read_text()
    assert "0xe220a8397b1dcdaf" in text and "13185443930595569905" in text


def test_kwartet_seed_1_deal_example() -> None:
    g = get_variant("kwartet").new_game(3, seed=1)
    assert g.dealer == 2
    r = Rng(1)
    assert r.below(3) == 2
    deck = list(get_variant("kwartet").deck)
    r.shuffle(deck)
    assert deck[:6] == ["9D", "10H", "8S", "KD", "10S", "JH"]
    assert "9D" in g.hand(0) and "10H" in g.hand(1) and "8S" in g.hand(2) and "KD" in g.hand(0)
    assert [len(g.hand(s)) for s in range(3)] == [11, 11, 10]
    assert g.initial_events()[0]["first"] == 0


def test_tiny_stock_deal_example() -> None:
    rules = get_variant({"name": "tiny", "families": 3, "members": 2, "stock": 2, "players": [2, 3]})
    g = rules.new_game(2, seed=5)
    assert g.dealer == 0
    assert g.initial_events() == [
        {"kind": "deal", "counts": [0, 2], "laid": [["A"], []], "first": None},
        {"kind": "draw", "seat": 1, "card": "B2"},
        {"kind": "laid", "seat": 1, "family": "B"},
        {"kind": "draw", "seat": 1, "card": "C1"},
        {"kind": "laid", "seat": 1, "family": "C"},
    ]
    assert g.terminal and g.scores() == [1, 2]


def test_chickens_wire_form_in_the_rulebook() -> None:
    text = RULEBOOK.read_text()
    block = re.search(r'```json\n(\{"game": "chickens".*?)```', text, re.S)
    assert block, "the chickens wire form is missing from docs/RULES.md"
    # the doc shows what a bot at a 4-seat table gets: rounds = the table's size
    assert json.loads(block.group(1)) == get_variant("chickens").to_wire(4)


def test_ambiguous_card_names_are_rejected() -> None:
    with pytest.raises(RulesError, match="ambiguous"):
        get_variant({"name": "bad", "families": ["1", "11"], "members": ["1", "11"]})


def test_rude_guest_example() -> None:
    """Jaques politeness: a rude ask moves nothing and hands the turn to the asked seat."""
    rules = get_variant("happy-families-jaques")
    for seed in range(200):
        g = rules.new_game(3, seed=seed)
        if g.terminal:
            continue
        (asker,) = g.pending()
        for act in g.legal_actions(asker):
            if not act.please and act.card in g.hand(act.target):
                before = [g.hand(s) for s in range(3)]
                ev = g.apply(asker, Ask(act.target, act.card, None, False))
                assert ev[0]["rude"] is True and ev[0]["cards"] == [] and ev[0]["next"] == act.target
                assert [g.hand(s) for s in range(3)] == before
                return
    raise AssertionError("no deal with a rude ask for a held card found")


def test_match_dealer_keeps_the_shuffle() -> None:
    """RULES.md 5: a dealer set by the match changes who gets which card, not the shuffle."""
    rules = get_variant("kwartet")
    plain = rules.new_game(4, seed=9)
    moved = rules.new_game(4, seed=9, dealer=(plain.dealer + 1) % 4)
    assert [plain.hand(s) for s in range(4)] == [moved.hand((s + 1) % 4) for s in range(4)]


def test_chickens_plays_single_matches_only() -> None:
    from referee.rules.match import Match, MatchFormat

    with pytest.raises(RulesError, match="single"):
        Match(get_variant("chickens"), 4, MatchFormat(kind="fixed", hands=2), seed=1)


def test_custom_variant_config_examples_are_valid() -> None:
    import tomllib

    text = RULEBOOK.read_text()
    block = re.search(r"```toml\n(.*?)```", text, re.S)
    assert block, "the custom-variant config example is missing from docs/RULES.md"
    variants = tomllib.loads(block.group(1))["variants"]
    assert len(variants) >= 3
    for v in variants:
        rules = get_variant({**v["rules"], "name": v["name"]})
        lo = min(v.get("sizes", [rules.min_players]))
        game = rules.new_game(lo, seed=3)
        assert game.rules.name == v["name"]
