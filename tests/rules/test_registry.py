"""The engine registry: every registered kind is complete and consistent, and everything that lists
variants (VARIANTS, check-bot, the bench, the schema, the SDK's style) reads it. Pure, fast."""

from __future__ import annotations

import msgspec
import pytest

from protocol.schema import schemas
from protocol.sdk import GameView
from referee.bench.engine import DEFAULT_VARIANTS
from referee.checkbot import PRESETS
from referee.core.spec import MAX_DECISIONS, max_decisions_for
from referee.rules import KINDS, VARIANTS, GameState, Rng, RulesError, get_variant, kind_of
from referee.rules.registry import action_json, from_record, kind_named, presets, rules_wire, style_of_wire

CASES = [(kind, name, rules) for kind in KINDS for name, rules in kind.presets.items()]
IDS = [name for _, name, _ in CASES]


def test_variants_checkbot_and_bench_list_every_registered_preset():
    names = [name for _, name, _ in CASES]
    assert list(VARIANTS) == names and len(set(names)) == len(names)
    assert PRESETS == names
    assert sorted(DEFAULT_VARIANTS) == sorted(name for kind, name, _ in CASES if kind.bench)
    assert [r.name for r in presets()] == names
    assert len({k.game for k in KINDS}) == len(KINDS)


@pytest.mark.parametrize(("kind", "name", "rules"), CASES, ids=IDS)
def test_a_preset_round_trips_through_its_kind(kind, name, rules):
    assert get_variant(name) is rules and rules.name == name
    assert kind_of(rules) is kind and rules.kind == kind.game
    assert isinstance(rules, kind.rules_type)
    wire = rules.to_wire()
    assert wire["game"] == kind.game
    msgspec.convert(wire, kind.wire)  # strict: every key known, every type right
    msgspec.convert(wire, rules_wire())
    assert get_variant(wire) == rules  # a log header's rules rebuild the record
    assert from_record(wire) == rules
    assert kind_named(kind.game) is kind
    assert style_of_wire(wire) == kind.style
    assert GameView(rules=wire).kind == kind.style  # the SDK's own small table agrees
    assert max_decisions_for(rules, rules.min_players) >= MAX_DECISIONS


@pytest.mark.parametrize(("kind", "name", "rules"), CASES, ids=IDS)
def test_a_kinds_game_plays_its_decisions_and_snapshots(kind, name, rules):
    n = rules.min_players
    state = rules.new_game(n, seed=3)
    assert isinstance(state, GameState)
    rng = state.fallback_rng()
    assert isinstance(rng, Rng) and state.seed == 3 and 0 <= state.dealer < n
    steps = 0
    while state.pending() and steps < 300:
        seat = state.pending()[0]
        assert state.decision() in kind.decisions
        snap = kind.snapshot(state, state.pending())
        for key in kind.per_seat:
            assert len(snap[key]) == n, key
        for key in kind.seat_refs:
            assert snap[key] is None or 0 <= snap[key] < n, key
        action = state.random_action(seat, rng)
        logged = action_json(state.decision(), action)
        assert logged and msgspec.json.encode(logged)
        state.apply(seat, action)
        steps += 1
    if kind.style == "ask":
        for card in kind.deck(rules):
            assert kind.family_of is not None and kind.family_of(rules, card) in rules.to_wire()["families"]
    assert kind.check_sizes(rules)[0] == rules.min_players
    assert max(kind.check_sizes(rules)) <= rules.max_players


def test_the_schema_types_every_kinds_rules():
    start = schemas()["referee-to-bot/start"]
    rules = {name: d for name, d in start["$defs"].items() if name.endswith("RulesWire")}
    tags = {str(d["properties"]["game"].get("enum", [d["properties"]["game"].get("const")])[0]) for d in rules.values()}
    assert tags == {k.game for k in KINDS}


def test_unknown_games_and_names_get_clear_errors():
    with pytest.raises(RulesError, match="unknown game 'poker'; the games are ask, chickens"):
        get_variant({"game": "poker"})
    with pytest.raises(RulesError, match="did you mean 'kwartet'"):
        get_variant("kwartett")
    with pytest.raises(RulesError, match="unknown game"):
        from_record({"game": "poker", "name": "x"})
    with pytest.raises(RulesError, match="not a rules record"):
        kind_of(object())
    with pytest.raises(RulesError, match="a variant must be a preset name or a table"):
        get_variant(3)  # type: ignore[arg-type]
