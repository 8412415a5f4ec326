"""Custom ask variants: size limits and names that belong to presets."""

import pytest

from referee.rules import ASK_PRESETS, RulesError, get_variant
from referee.rules.ask import MAX_DECK, MAX_MEMBERS, MAX_PLAYERS


@pytest.mark.parametrize(
    "params, words",
    [
        ({"name": "x", "members": 1_000_000_000}, f"at most {MAX_MEMBERS} members"),
        ({"name": "x", "families": [f"F{i}" for i in range(60)], "members": 10}, f"at most {MAX_DECK} cards"),
        ({"name": "x", "base": "kwartet", "players": [3, 20]}, f"at most {MAX_PLAYERS} players"),
        ({"name": "x", "base": "happy-families", "stock": 43}, "use a stock of at most 38"),
        ({"name": "kwartet", "base": "authors"}, "belongs to a built-in variant"),
    ],
)
def test_unreasonable_custom_variants_are_refused_quickly(params: dict, words: str) -> None:
    with pytest.raises(RulesError, match=words):
        get_variant(params)


def test_presets_round_trip_under_their_own_names() -> None:
    for name, preset in ASK_PRESETS.items():
        assert get_variant(preset.to_wire()) == preset
        assert get_variant({"name": name, "base": name}) == preset
