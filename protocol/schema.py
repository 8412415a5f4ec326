"""JSON Schemas of protocol v1, generated from the msgspec Structs (never by hand).

:func:`schemas` returns ``{name: schema}`` for the three unions
(``referee-to-bot``, ``bot-to-referee``, ``events``) and for every single
message (``referee-to-bot/turn``, ``bot-to-referee/ask``, ``events/deal``...).
Pure; no I/O.

The schemas are plain JSON Schema 2020-12 (no OpenAPI keywords: msgspec's
``discriminator`` is dropped, the ``oneOf`` over the ``type`` constants does
its work) and as strict as the referee where JSON Schema can say it:
``start.rules`` is typed (the rules of every game in the referee's engine
registry: an ask game's, chickens', Go Fish's...), a ``turn``
requires the fields of its ``decide`` (an ``ask`` turn its ``options`` and
``targets``, a chickens turn its ``options``, ``centre``, ``scores`` and
``round``), an ``ask`` reply names a ``card`` or a ``family``. One thing no
JSON Schema can say: JSON has one number type, so a validator takes ``1.0`` for
the integer 1; the referee's decoder does not (an ``id`` of ``1.0`` is a
``malformed`` reply), and the ``id`` descriptions say so.
"""

from __future__ import annotations

from typing import Any, cast, get_args

import msgspec

from protocol.messages import BotMessage, EventKind, RefereeMessage

GROUPS: dict[str, Any] = {
    "referee-to-bot": RefereeMessage,
    "bot-to-referee": BotMessage,
    "events": EventKind,
}

_TITLES = {
    "referee-to-bot": "Messages the referee writes to a bot (protocol v1)",
    "bot-to-referee": "Messages a bot writes to the referee (protocol v1)",
    "events": "The event message, one shape per kind (protocol v1)",
}

_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_ID_NOTE = (
    "a whole number written without a fraction or exponent (the referee refuses 1.0, which JSON Schema "
    "cannot tell from 1)"
)
#: the fields a ``turn`` must carry for each ``decide`` (what the engines' views always send)
_TURN_REQUIRES = {
    "ask": ["options", "targets"],
    "play": ["options", "centre", "scores", "round"],
    "take": ["options", "centre", "scores", "round"],
}


def _tag(cls: type) -> str:
    return str(cast(Any, cls).__struct_config__.tag)


def _plain(node: Any) -> Any:
    """``node`` without OpenAPI's ``discriminator`` keyword, at any depth."""
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items() if k != "discriminator"}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _tighten(defs: dict[str, Any]) -> None:
    """Add to the generated definitions what the Struct types cannot express."""
    for name in ("Turn", "AskReply", "PlayReply", "TakeReply", "Error"):
        if name in defs and "id" in defs[name]["properties"]:
            defs[name]["properties"]["id"]["description"] = _ID_NOTE
    if "Start" in defs:
        # every registered game's ``start.rules`` shape (the referee's engine registry builds the union)
        from referee.rules.registry import rules_wire

        (rules,), comps = msgspec.json.schema_components([rules_wire()], ref_template="#/$defs/{name}")
        defs["Start"]["properties"]["rules"] = rules
        defs.update(comps)
    if "Turn" in defs:
        defs["Turn"]["allOf"] = [
            {"if": {"properties": {"decide": {"const": d}}}, "then": {"required": req}}
            for d, req in _TURN_REQUIRES.items()
        ]
    if "AskReply" in defs:
        defs["AskReply"]["anyOf"] = [{"required": ["card"]}, {"required": ["family"]}]


def _document(root: dict[str, Any], defs: dict[str, Any], title: str | None = None) -> dict[str, Any]:
    _tighten(defs)
    doc: dict[str, Any] = {"$schema": _DIALECT}
    if title is not None:
        doc["title"] = title
    doc.update(root)
    doc["$defs"] = defs
    return cast(dict[str, Any], _plain(doc))


def schemas() -> dict[str, dict[str, Any]]:
    """Every schema, keyed by a path-like name (no extension)."""
    out: dict[str, dict[str, Any]] = {}
    for group, union in GROUPS.items():
        (root,), components = msgspec.json.schema_components([union], ref_template="#/$defs/{name}")
        out[group] = _document(root, components, _TITLES[group])
        for cls in get_args(union):
            (one,), comps = msgspec.json.schema_components([cls], ref_template="#/$defs/{name}")
            out[f"{group}/{_tag(cls)}"] = _document(one, comps)
    return out
