"""Go Fish against an independent oracle: OpenSpiel's ``go_fish`` (pyspiel), action for action.

Each game is dealt once: the referee's seeded deal (``dealer = rng.below(n)``, then the canonical
deck shuffled) fixes the order of every card; pyspiel's chance nodes (the deal, every draw) get the
rank of the next card of that order. pyspiel's player ``p`` is the referee's seat
``(dealer + 1 + p) % n``. Both play the same random legal actions; at every step the legal action
sets, each seat's cards per rank, books and card count, the stock, whose turn it is and the end
agree, and at the end the scores and pyspiel's returns. A few hundred games over OpenSpiel's
parameters (table sizes, small decks that force empty hands, empty draws and books in the deal)."""

from __future__ import annotations

import random

import pytest

from referee.rules import Ask, Rng, get_variant, win_shares

#: (OpenSpiel's parameters, games): the defaults at 2-5 seats, then the other parameters
CASES = [
    ({"players": 2}, 40),
    ({"players": 3}, 30),
    ({"players": 4}, 20),
    ({"players": 5}, 10),
    ({"players": 3, "ranks": 5, "suits": 3, "initial_cards": 4}, 50),
    ({"players": 2, "ranks": 4, "suits": 2, "initial_cards": 2}, 40),
    ({"players": 4, "ranks": 6, "suits": 2, "initial_cards": 2, "ask_after_empty_draw": False}, 40),
    ({"players": 3, "ranks": 6, "suits": 3, "end_on_first_out": True}, 30),
    ({"players": 3, "ranks": 6, "suits": 3, "end_on_first_out": True, "most_books_wins": False}, 30),
    ({"players": 6, "ranks": 13, "suits": 4}, 10),
]


def _rules(params: dict) -> object:
    n = params["players"]
    wire = {"game": "go-fish", "name": "oracle", "players": [n, n], "stall": 10**6}
    wire["families"] = params.get("ranks", 13)
    wire["members"] = params.get("suits", 4)
    for key in ("initial_cards", "ask_after_empty_draw", "end_on_first_out", "most_books_wins"):
        if key in params:
            wire[key] = params[key]
    return get_variant(wire)


def _play(params: dict, seed: int, rules: object, spiel_game: object) -> int:
    n = params["players"]
    R, S = len(rules.families), len(rules.members)
    game = rules.new_game(n, seed=seed)
    rng = Rng(seed)
    dealer = rng.below(n)
    order = list(range(R * S))
    rng.shuffle(order)  # the documented deal: the whole deck's order, top first
    assert game.dealer == dealer
    seat = [(dealer + 1 + p) % n for p in range(n)]
    rank = {f: i for i, f in enumerate(rules.families)}
    spiel = spiel_game.new_initial_state()
    nxt = 0

    def chance() -> None:
        nonlocal nxt
        while spiel.is_chance_node():
            outcome = order[nxt] // S
            assert outcome in dict(spiel.chance_outcomes())
            spiel.apply_action(outcome)
            nxt += 1

    card_rank = {c: i // S for i, c in enumerate(rules.deck)}

    def per_rank(cards: list[str]) -> list[int]:
        out = [0] * R
        for c in cards:
            out[card_rank[c]] += 1
        return out

    def compare(where: str) -> None:
        assert spiel.is_terminal() == game.terminal, where
        cards, books, pool = spiel.player_cards(), spiel.player_books(), spiel.pool()
        counts, laid = game.counts(), game.laid()
        for p in range(n):
            assert per_rank(game.hand(seat[p])) == cards[p], (where, p)
            assert len(laid[seat[p]]) == books[p], (where, p)
            assert counts[seat[p]] == spiel.player_counts(p), (where, p)
        stock = game.stock()
        assert per_rank(stock) == pool, where
        assert stock == [rules.deck[c] for c in order[nxt:]], where  # the same cards, the same order
        if not game.terminal:
            p = spiel.current_player()
            assert game.pending() == (seat[p],), where
            legal = {(seat[a // R], a % R) for a in spiel.legal_actions()}
            view = game.view(seat[p])
            assert {(t, rank[f]) for t in view["targets"] for f in view["options"]} == legal, where
            assert {(a.target, rank[a.family]) for a in game.legal_actions(seat[p])} == legal, where

    chance()
    if not spiel.is_terminal() and not spiel.legal_actions():
        # OpenSpiel's dead end (its deal is not followed by its empty-hand rules; tiny decks only):
        # the referee applies them, so the first seat draws or passes on (go_fish.py says so)
        assert R * S <= 8 and game.pending() and game.legal_actions(game.pending()[0])
        assert any(e["kind"] == "draw" for e in game.initial_events()) or game.pending() != (seat[0],)
        return -1
    compare("after the deal")
    pick = random.Random(seed)
    steps = 0
    while not spiel.is_terminal():
        p = spiel.current_player()
        action = pick.choice(sorted(spiel.legal_actions()))
        target, r = seat[action // R], action % R
        events = game.apply(seat[p], Ask(target=target, family=rules.families[r]))
        spiel.apply_action(action)
        chance()
        steps += 1
        compare(f"step {steps}")
        assert events[0]["next"] == (None if game.terminal else game.pending()[0])
        assert steps < 5000, "an endless game"
    assert game.end_reason == "complete"
    returns = spiel.returns()
    scores = [game.scores()[seat[p]] for p in range(n)]
    if params.get("most_books_wins", True):
        assert scores == list(spiel.player_books())
    else:
        assert [s == 1 for s in scores] == [r == 1.0 for r in returns]
    shares = win_shares(scores)
    if len(set(returns)) > 1:  # pyspiel's all-way tie is 0 for everybody; the referee shares the win
        assert [s > 0 for s in shares] == [r > 0 for r in returns]
    return steps


@pytest.mark.parametrize(("params", "games"), CASES, ids=[str(sorted(p.items())) for p, _ in CASES])
def test_go_fish_plays_like_pyspiel(params, games):
    import pyspiel  # open_spiel, in the test extra (pip install -e '.[test]'); imported here: collection stays light

    rules, spiel_game = _rules(params), pyspiel.load_game("go_fish", params)
    steps = [_play(params, seed, rules, spiel_game) for seed in range(1000, 1000 + games)]
    assert sum(s for s in steps if s > 0) > games  # real games, not empty ones
    assert steps.count(-1) <= games // 10  # OpenSpiel's dead end is rare
