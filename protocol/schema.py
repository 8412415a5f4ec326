"""JSON Schemas of protocol v1, generated from the msgspec Structs (never by hand).

:func:`schemas` returns ``{name: schema}`` for the three unions
(``referee-to-bot``, ``bot-to-referee``, ``events``) and for every single
message (``referee-to-bot/turn``, ``bot-to-referee/ask``, ``events/deal``...).
Pure; no I/O.
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


def _tag(cls: type) -> str:
    return str(cast(Any, cls).__struct_config__.tag)


def schemas() -> dict[str, dict[str, Any]]:
    """Every schema, keyed by a path-like name (no extension)."""
    out: dict[str, dict[str, Any]] = {}
    for group, union in GROUPS.items():
        members = get_args(union)
        (root,), components = msgspec.json.schema_components([union], ref_template="#/$defs/{name}")
        out[group] = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": _TITLES[group],
            **root,
            "$defs": components,
        }
        for cls in members:
            (one,), comps = msgspec.json.schema_components([cls], ref_template="#/$defs/{name}")
            out[f"{group}/{_tag(cls)}"] = {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                **one,
                "$defs": comps,
            }
    return out
