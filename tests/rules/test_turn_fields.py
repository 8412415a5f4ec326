"""``AskGame.turn_fields(seat)`` is byte for byte the JSON of ``view(seat)``."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import Rng, get_variant

ENC = msgspec.json.Encoder()

CUSTOM = [
    {
        "name": "stocky",
        "families": ["A", "B", "C", "D", "E"],
        "members": ["1", "2", "3"],
        "stock": 4,
        "players": [2, 4],
    },
    {
        "name": "fam",
        "families": ["Q", "K", 'ä"\\'],
        "members": ["x", "é", "m\u0001\\"],
        "ask": "family",
        "miss": "next",
        "players": [2, 3],
    },
    {
        "name": "polite",
        "families": ["A", "B", "C", "D"],
        "members": ["1", "2", "3", "4"],
        "please": True,
        "first": "dealer",
        "players": [2, 4],
    },
]
VARIANTS = ["happy-families", "happy-families-jaques", "authors", "kwartet", *range(len(CUSTOM))]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(VARIANTS), st.integers(0, 4), st.integers(0, 2**32))
def test_turn_fields_equal_the_encoded_view(variant, extra, seed):
    rules = get_variant(CUSTOM[variant] if isinstance(variant, int) else variant)
    players = min(rules.min_players + extra, rules.max_players)
    state = rules.new_game(players, seed=seed)
    rng = Rng(seed)
    while True:
        copy = state.clone()
        for s in range(players):
            assert state.turn_fields(s) == ENC.encode(state.view(s))[1:-1]
            assert copy.turn_fields(s) == state.turn_fields(s)
        if state.terminal:
            break
        seat = state.pending()[0]
        state.apply(seat, state.random_action(seat, rng))
