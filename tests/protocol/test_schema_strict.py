"""The JSON Schemas are plain 2020-12 (what strict validators such as ajv's strict mode accept) and as
strict as the referee: typed rules, per-decision required fields, and real games validate."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import msgspec
import pytest

from protocol.schema import schemas
from referee.cli import main
from referee.rules import get_variant
from referee.rules.registry import presets, rules_wire
from referee.runtime.gamelog import read_log_bytes

ROOT = Path(__file__).resolve().parents[2]

#: every keyword of the JSON Schema 2020-12 vocabularies (core, applicator, unevaluated, validation,
#: meta-data, format-annotation, content): a strict validator refuses anything else, as ajv's
#: strict mode refused OpenAPI's ``discriminator``
VOCABULARY = {
    *("$schema", "$id", "$ref", "$defs", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment"),
    *("allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "prefixItems", "items"),
    *("contains", "properties", "patternProperties", "additionalProperties", "propertyNames"),
    *("unevaluatedItems", "unevaluatedProperties", "type", "const", "enum", "multipleOf", "maximum"),
    *("exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems"),
    *("minItems", "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required"),
    *("dependentRequired", "title", "description", "default", "deprecated", "readOnly", "writeOnly"),
    *("examples", "format", "contentEncoding", "contentMediaType", "contentSchema"),
}
#: keywords whose value maps names to schemas (the names are not keywords)
MAPS = {"properties", "patternProperties", "$defs", "dependentSchemas"}


def _keywords(node, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            out.add(k)
            if k in MAPS:
                for sub in v.values():
                    _keywords(sub, out)
            elif k not in ("enum", "const", "default", "examples", "required"):
                _keywords(v, out)
    elif isinstance(node, list):
        for v in node:
            _keywords(v, out)
    return out


@pytest.mark.parametrize("name", sorted(schemas()))
def test_every_schema_is_plain_json_schema_2020_12(name):
    schema = schemas()[name]
    jsonschema.Draft202012Validator.check_schema(schema)
    unknown = _keywords(schema, set()) - VOCABULARY
    assert not unknown, f"{name}: keywords outside JSON Schema 2020-12: {sorted(unknown)}"


def test_every_engines_rules_have_a_typed_shape():
    wires = [rules.to_wire() for rules in presets()]  # every registered kind's presets
    wires += [get_variant("chickens").to_wire(n) for n in (3, 4, 5, 6)]
    wires.append(get_variant({"name": "g", "families": 5, "members": 6, "stock": 3, "family_points": 2}).to_wire())
    start = jsonschema.Draft202012Validator(schemas()["referee-to-bot/start"])
    for wire in wires:
        msgspec.convert(wire, rules_wire())  # strict: every key known, every type right
        msg = {"type": "start", "game": "g", "variant": wire["name"], "rules": wire, "seat": 0}
        msg |= {"seats": ["a", "b", "c"], "dealer": 0, "hand": [], "clock": {"move_ms": 1000}}
        start.validate(msg)
        bad = {**msg, "rules": {**wire, "players": "3-6"}}
        assert not start.is_valid(bad)
    assert not start.is_valid({**msg, "rules": {"game": "poker"}})


def _validator(name):
    return jsonschema.Draft202012Validator(schemas()[name])


def test_a_turn_requires_the_fields_of_its_decision():
    turn = _validator("referee-to-bot")
    base = {"type": "turn", "game": "g", "id": 3, "hand": ["A1"], "counts": [1, 1], "laid": [[], []], "clock": {}}
    assert turn.is_valid({**base, "decide": "ask", "options": ["A2"], "targets": [1]})
    assert not turn.is_valid({**base, "decide": "ask", "options": ["A2"]})  # no targets
    chickens = {"options": ["ace"], "centre": [], "scores": [0, 0], "round": 1}
    assert turn.is_valid({**base, "decide": "play", **chickens})
    for missing in chickens:
        assert not turn.is_valid({**base, "decide": "take", **{k: v for k, v in chickens.items() if k != missing}})
    assert not turn.is_valid({**base, "decide": "ask", "options": [], "targets": [], "id": "3"})


def test_an_ask_reply_names_a_card_or_a_family():
    reply = _validator("bot-to-referee")
    assert reply.is_valid({"type": "ask", "id": 1, "target": 2, "card": "QH"})
    assert reply.is_valid({"type": "ask", "id": 1, "target": 2, "family": "Q", "please": True})
    assert not reply.is_valid({"type": "ask", "id": 1, "target": 2})
    assert not reply.is_valid({"type": "ask", "target": 2, "card": "QH"})  # no id
    assert not reply.is_valid({"type": "play", "id": 1})  # no card
    assert "1.0" in schemas()["bot-to-referee"]["$defs"]["AskReply"]["properties"]["id"]["description"]


@pytest.mark.parametrize("variant", ["kwartet", "chickens"])
def test_every_message_of_a_real_game_validates(tmp_path, capsys, variant):
    bot = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
    logs = tmp_path / "logs"
    args = ["play", variant, "--seed", "3", "--log", str(logs), "--grace-ms", "200"]
    assert main([*args, "--bot", f"a={bot}", "--bot", f"b={bot}", "--bot", f"c={bot}"]) == 0
    capsys.readouterr()
    (log,) = logs.iterdir()
    records = [json.loads(line) for line in read_log_bytes(log.read_bytes()).decode().splitlines()]
    sent = [msg for r in records if "out" in r for msg in r["out"]]
    assert {m["type"] for m in sent} >= {"start", "event", "turn", "end"}
    to_bot, events = _validator("referee-to-bot"), _validator("events")
    for msg in sent:
        errors = [e.message for e in to_bot.iter_errors(msg)]
        assert not errors, (msg, errors)
        if msg["type"] == "event":
            assert events.is_valid(msg), msg
