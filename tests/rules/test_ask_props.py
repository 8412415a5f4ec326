"""Property tests of the ask engine over random seeds, every variant and table size.

An independent legality oracle (written from RULES.md, using only public
accessors) is compared with ``legal_actions``, ``random_action`` and ``apply``.
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import ASK_PRESETS, Ask, AskRules, IllegalAction, Rng, event_for_seat

CUSTOM = [
    AskRules.from_params({"name": "three-generations", "families": 5, "members": 6, "stock": 10, "players": [2, 5]}),
    AskRules.from_params({"name": "dealer-first", "base": "kwartet", "first": "dealer", "stock": 3}),
    AskRules.from_params(
        {"name": "polite-fish", "base": "authors", "members": 3, "stock": 7, "please": True, "players": [2, 6]}
    ),
    AskRules.from_params(
        {
            "name": "big-families",
            "families": ["Red", "Blue"],
            "members": 14,
            "stock": 4,
            "miss": "next",
            "players": [2, 3],
        }
    ),
]
VARIANTS = [*ASK_PRESETS.values(), *CUSTOM]
TABLES = [(r, n) for r in VARIANTS for n in range(r.min_players, r.max_players + 1)]

MAX_STEPS = 20000


@functools.cache
def family_of(rules: AskRules) -> dict[str, str]:
    return {f + m: f for f in rules.families for m in rules.members}


def oracle(g: Any, seat: int, target: Any, card: Any, family: Any, please: Any) -> bool:
    """Is this ask legal now? From the rules text and public accessors only."""
    rules = g.rules
    if seat not in g.pending():
        return False
    if type(target) is not int or not 0 <= target < g.n or target == seat or not g.counts()[target]:
        return False
    if please not in (True, False, None):
        return False
    fam = family_of(rules)
    hand = g.hand(seat)
    mine = {fam[c] for c in hand}
    if rules.ask == "card":
        return family is None and card in fam and fam[card] in mine and card not in hand
    return card is None and family in rules.families and family in mine


def snapshot(g: Any) -> tuple:
    return (
        tuple(tuple(g.hand(s)) for s in range(g.n)),
        tuple(g.counts()),
        g.laid(),
        g.pending(),
        g.stock_size(),
        g.scores(),
    )


def check_invariants(g: Any) -> None:
    rules = g.rules
    M = len(rules.members)
    counts = g.counts()
    hands = [g.hand(s) for s in range(g.n)]
    assert [len(h) for h in hands] == counts
    held = [c for h in hands for c in h]
    laid = [f for fams in g.laid() for f in fams]
    laid_cards = [f + m for f in laid for m in rules.members]
    assert len(set(held) | set(laid_cards)) == len(held) + len(laid_cards)  # nothing in two places
    assert sum(counts) + g.stock_size() + M * len(laid) == len(rules.deck)  # cards conserved
    assert g.scores() == [len(f) for f in g.laid()]
    order = {c: i for i, c in enumerate(rules.deck)}
    fam = family_of(rules)
    for s, h in enumerate(hands):
        assert h == sorted(h, key=order.__getitem__)
        v = g.view(s)
        assert set(v) == {"hand", "counts", "laid", "options", "targets"}
        assert v["hand"] == h and v["counts"] == counts and v["laid"] == g.laid()
        if s in g.pending():
            mine = {fam[c] for c in h}
            if rules.ask == "card":  # options follow from the seat's own hand only
                assert v["options"] == [c for c in rules.deck if fam[c] in mine and c not in h]
            else:
                assert v["options"] == [f for f in rules.families if f in mine]
            assert v["targets"] == [t for t in range(g.n) if t != s and counts[t]]
            assert v["options"] and v["targets"]
        # no complete family is ever left in a hand
        for f in {fam[c] for c in h}:
            assert sum(1 for c in h if fam[c] == f) < M


def exhaustive_check(g: Any, seat: int) -> None:
    rules = g.rules
    pleases = (True, False) if rules.please else (False,)
    expected = set()
    for target in range(-1, g.n + 1):
        for p in pleases:
            if rules.ask == "card":
                for c in rules.deck:
                    if oracle(g, seat, target, c, None, p):
                        expected.add((target, c, None, p))
            else:
                for f in rules.families:
                    if oracle(g, seat, target, None, f, p):
                        expected.add((target, None, f, p))
    legal = g.legal_actions(seat)
    assert len(legal) == len(set(legal))
    assert {(a.target, a.card, a.family, a.please) for a in legal} == expected
    for a in legal:  # every one of them is accepted
        g.clone().apply(seat, a)


def junk_action(g: Any, rng: Rng) -> Ask:
    rules = g.rules
    target = rng.below(g.n + 2) - 1
    cards = [*rules.deck, "Z9", "", rules.families[0]]
    fams = [*rules.families, "Z", rules.deck[0]]
    k = rng.below(4)
    card = cards[rng.below(len(cards))] if k in (0, 2) else None
    family = fams[rng.below(len(fams))] if k in (1, 2) else None
    please = (True, False, None, "yes")[rng.below(4)]
    return Ask(target, card, family, please)  # type: ignore[arg-type]


def play(rules: AskRules, n: int, seed: int) -> tuple[Any, list[tuple[int, Ask]], list[dict]]:
    g = rules.new_game(n, seed=seed)
    rng = g.fallback_rng()
    actions: list[tuple[int, Ask]] = []
    events = g.initial_events()
    while not g.terminal and len(actions) < MAX_STEPS:
        seat = g.pending()[0]
        a = g.random_action(seat, rng)
        actions.append((seat, a))
        events += g.apply(seat, a)
    return g, actions, events


@settings(max_examples=90)
@given(st.sampled_from(TABLES), st.integers(min_value=0, max_value=2**64 - 1), st.integers(0, 2**32))
def test_random_games_keep_every_invariant(table: tuple[AskRules, int], seed: int, probe: int) -> None:
    rules, n = table
    g = rules.new_game(n, seed=seed)
    rng = g.fallback_rng()
    prng = Rng(probe)
    check_invariants(g)
    steps = 0
    while not g.terminal:
        assert steps < MAX_STEPS, "game did not terminate"
        seat = g.pending()[0]
        assert g.decision() == "ask" and g.pending() == (seat,)
        if steps % 23 == 0:
            exhaustive_check(g, seat)
        # wrong actions (random seat, target, card, family, please) are rejected and change nothing
        for _ in range(3):
            who = seat if prng.below(4) else prng.below(n)
            bad = junk_action(g, prng)
            legal = oracle(g, who, bad.target, bad.card, bad.family, bad.please)
            if legal:
                g.clone().apply(who, bad)
            else:
                before = snapshot(g)
                try:
                    g.apply(who, bad)
                except IllegalAction as exc:
                    assert exc.reason
                else:
                    raise AssertionError(f"illegal {bad} by seat {who} was accepted")
                assert snapshot(g) == before
        a = g.random_action(seat, rng)
        assert a in g.legal_actions(seat)
        assert oracle(g, seat, a.target, a.card, a.family, a.please)
        before_counts = g.counts()
        events = g.apply(seat, a)
        steps += 1
        ask_ev = events[0]
        assert ask_ev["kind"] == "ask" and ask_ev["seat"] == seat and ask_ev["target"] == a.target
        assert ask_ev["next"] == (g.pending()[0] if g.pending() else None)
        assert ask_ev["rude"] == (rules.please and not a.please)
        if ask_ev["cards"]:
            assert g.counts()[a.target] <= before_counts[a.target] - len(ask_ev["cards"])
        for ev in events[1:]:
            assert ev["kind"] in ("laid", "draw")
            for other in range(n):
                seen = event_for_seat(ev, other)
                if ev["kind"] == "draw" and other != ev["seat"]:
                    assert "card" not in seen  # a drawn card is private to the drawer
        check_invariants(g)
    # every family laid, or the stalemate rule ended it (stall asks in a row moved no card)
    assert sum(g.scores()) == len(rules.families) or (g.end_reason == "stalled" and g.idle == rules.stall)
    assert g.legal_actions(0) == [] and g.pending() == ()


@settings(max_examples=40)
@given(st.sampled_from(TABLES), st.integers(min_value=0, max_value=2**64 - 1))
def test_replay_from_seed_and_actions_gives_the_same_events(table: tuple[AskRules, int], seed: int) -> None:
    rules, n = table
    g, actions, events = play(rules, n, seed)
    assert g.terminal
    again = rules.new_game(n, seed=seed)
    replayed = again.initial_events()
    for seat, a in actions:
        replayed += again.apply(seat, a)
    assert replayed == events and again.scores() == g.scores() and again.terminal
    # the same seed gives the same deal, and the same fallback stream the same game
    g2, actions2, events2 = play(rules, n, seed)
    assert actions2 == actions and events2 == events


_ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 60),
    st.floats(allow_nan=False),
    st.text(max_size=4),
    st.lists(st.text(max_size=3), max_size=6),
    st.lists(st.integers(0, 9), max_size=3),
    st.sampled_from(["card", "family", "asked", "next", "left", "dealer", "kwartet", "ask", "chickens"]),
)
_KEYS = ["name", "base", "game", "families", "members", "ask", "miss", "please", "stock", "first", "players", "colour"]


@settings(max_examples=150)
@given(st.dictionaries(st.sampled_from(_KEYS), _ANY, max_size=5))
def test_any_parameter_mapping_gives_a_variant_or_a_rules_error(params: dict) -> None:
    from referee.rules import RulesError

    try:
        r = AskRules.from_params(params)
    except RulesError as exc:
        assert str(exc)
        return
    assert AskRules.from_params(r.to_wire()) == r
    assert r.max_players <= len(r.deck) - r.stock and len(set(r.deck)) == len(r.deck)
    g = r.new_game(r.min_players, seed=1)
    assert sum(len(g.hand(s)) for s in range(g.n)) + g.stock_size() + len(r.members) * sum(g.scores()) == len(r.deck)
