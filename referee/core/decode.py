"""Decoding one bot line into a protocol message, with the exact reason when it fails.

:func:`decode_line` turns one line (already split by the runtime's framing,
:class:`referee.runtime.framing.LineReader`) into a protocol message with the
single decoder built at import (``protocol.messages.BOT_DECODER``), or raises
:class:`~referee.core.errors.BotMalformed` with a precise detail such as
``line 3 is not JSON: 'debug x=3' - write debug output to stderr``.
Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from protocol.messages import BOT_DECODER

from .errors import BotMalformed


def _show(raw: bytes, limit: int = 60) -> str:
    text = raw[:limit].decode("utf-8", "replace")
    if len(raw) > limit:
        text += "..."
    return repr(text)


_EXPECTED = re.compile(r"Expected `([^`]*)`, got `([^`]*)`(?: - at `\$\.?([^`]*)`)?")
_EXPECTED_ONLY = re.compile(r"Expected `([^`]*)` - at `\$\.?([^`]*)`$")
_MISSING = re.compile(r"missing required field `([^`]*)`(?: - at `\$\.?([^`]*)`)?")
_INVALID = re.compile(r"Invalid value (.*?)(?: - at `\$\.?([^`]*)`)?$")

#: the message types a bot may send (the tags of ``protocol.messages.BotMessage``)
_BOT_TYPES = ("hello", "ask", "play", "take")
_TYPE_HINT = "a string naming the message (hello, ask, play or take)"


def schema_detail(lineno: int, message: str, line: bytes | None = None) -> str:
    """A msgspec validation message rewritten for a bot author:
    ``line 3: field `target` expected int, got str``.

    ``line`` (the raw line, optional) lets a complaint about ``type`` be exact:
    msgspec reports a second ``type`` key that differs from the first as an
    invalid value, and a non-string ``type`` without saying what it got. It is
    only looked at here, on the error path."""
    m = _EXPECTED.search(message)
    if m:
        exp, got, path = m.groups()
        if not path:
            return f"line {lineno}: expected a JSON {exp} (one message object), got {got}"
        return f"line {lineno}: field `{path}` expected {exp}, got {got}"
    m = _EXPECTED_ONLY.search(message)
    if m:
        exp, path = m.groups()
        if path == "type":
            values = _type_values(line)
            if values is not None and len(values) > 1:
                return _duplicate_type(lineno, values)
            got = f", got {_json_kind(values[0])}" if values else ""
            return f"line {lineno}: field `type` must be {_TYPE_HINT}{got}"
        return f"line {lineno}: field `{path}` expected {exp}"
    m = _MISSING.search(message)
    if m:
        field, path = m.groups()
        if field == "type" and not path:
            return f'line {lineno}: missing field `type` (every message needs one, e.g. "type":"ask")'
        return f"line {lineno}: missing field `{(path + '.') if path else ''}{field}`"
    m = _INVALID.search(message)
    if m:
        value, path = m.groups()
        if path == "type":
            values = _type_values(line)
            if values is not None and len(values) > 1:
                return _duplicate_type(lineno, values)
            if values is None and value.strip("'\"") in _BOT_TYPES:
                # a valid type reported invalid: it contradicts an earlier `type` key
                return (
                    f"line {lineno}: the key `type` appears more than once with different values "
                    f'(one of them {value}) - a message has exactly one "type"'
                )
            return f"line {lineno}: unknown message type {value} (a bot sends hello, ask, play or take)"
        return f"line {lineno}: field `{path}` has invalid value {value}"
    return f"line {lineno}: {message}"


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object as its list of (key, value) pairs, duplicates kept."""


def _type_values(line: bytes | None) -> list[Any] | None:
    """The values of every top-level ``type`` key of ``line``, in order, or
    None if the line cannot be read as one JSON object (error path only)."""
    if line is None:
        return None
    try:
        top = json.loads(line, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError):
        return None
    if not isinstance(top, _Pairs):
        return None
    return [v for k, v in top if k == "type"]


def _json_kind(value: Any) -> str:
    """msgspec's name for the JSON type of a decoded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, _Pairs):
        return "object"
    return {int: "int", float: "float", str: "str", list: "array"}.get(type(value), type(value).__name__)


def _duplicate_type(lineno: int, values: list[Any]) -> str:
    shown = ", ".join(_short_json(v) for v in values)
    return f'line {lineno}: the key `type` appears {len(values)} times ({shown}) - a message has exactly one "type" key'


def _short_json(value: Any) -> str:
    if isinstance(value, _Pairs):
        return "{...}"
    if isinstance(value, list):
        return "[...]"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def decode_line(
    line: bytes, lineno: int, *, bot: str = "?", seat: int | None = None, turn_id: int | None = None
) -> Any:
    """Decode one bot line, or raise :class:`BotMalformed` saying exactly why."""
    try:
        return BOT_DECODER.decode(line)
    except msgspec.ValidationError as exc:
        detail = schema_detail(lineno, str(exc), line)
    except msgspec.DecodeError:
        detail = malformed_detail(line, lineno)
    except RecursionError:
        # msgspec recurses into nested values it skips: a few KiB of {"a":{"a":... would escape
        detail = (
            f"line {lineno} nests JSON objects or arrays too deeply ({_show(line)}) - a message is one flat JSON object"
        )
    raise BotMalformed(detail, bot=bot, seat=seat, turn_id=turn_id)


def malformed_detail(line: bytes, lineno: int) -> str:
    """Why ``line`` is not JSON at all (invalid UTF-8 or a JSON syntax error)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return (
            f"line {lineno} is not valid UTF-8 (byte 0x{line[exc.start]:02x} at offset {exc.start}): "
            f"{_show(line)} - the protocol is UTF-8 JSON"
        )
    if not text.strip():
        return f"line {lineno} is empty - every line on stdout must be one JSON message"
    return f"line {lineno} is not JSON: {_show(line)} - write debug output to stderr"
