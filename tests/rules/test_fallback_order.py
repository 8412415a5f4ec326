"""The order of the legal actions the fallback draws from, as docs/RULES.md (3.3) states it."""

from __future__ import annotations

import pytest

from referee.rules import Rng, get_variant


@pytest.mark.parametrize("name", ["happy-families", "kwartet", "authors", "happy-families-jaques"])
def test_the_documented_index_formula_gives_every_legal_ask(name: str) -> None:
    rules = get_variant(name)
    for seed in range(5):
        g = rules.new_game(4, seed=seed)
        rng = Rng(seed)
        for _ in range(30):
            if g.terminal:
                break
            (seat,) = g.pending()
            legal = g.legal_actions(seat)
            view = g.view(seat)
            targets, options = view["targets"], view["options"]
            per = 2 if rules.please else 1
            assert len(legal) == len(targets) * len(options) * per
            for r, a in enumerate(legal):
                assert a.target == targets[r // (per * len(options))]
                assert (a.card if rules.ask == "card" else a.family) == options[(r // per) % len(options)]
                assert a.please == (rules.please and r % 2 == 0)
            g.apply(seat, g.random_action(seat, rng))


def test_chickens_options_are_in_canonical_order() -> None:
    g = get_variant("chickens").new_game(3, seed=1)
    for seat in g.pending():
        assert [a.card for a in g.legal_actions(seat)] == g.view(seat)["options"]
        assert g.view(seat)["options"] == list(g.rules.to_wire(3)["cards"])
