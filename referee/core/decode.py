"""Decoding one bot line into a protocol message, with the exact reason when it fails.

:func:`decode_line` turns one line (already split by the runtime's framing,
:class:`referee.runtime.framing.LineReader`) into a protocol message with the
single decoder built at import (``protocol.messages.BOT_DECODER``), or raises
:class:`~referee.core.errors.BotMalformed` with a precise detail such as
``line 3 is not JSON: 'debug x=3' - write debug output to stderr`` and the
same reason as a :class:`~referee.core.errors.Problem` (``not_json``), worded
and classified by the same function so the two never disagree.
Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from protocol.messages import BOT_DECODER

from .errors import BotMalformed, Problem
from .schema_errors import parse_schema_error


def _show(raw: bytes, limit: int = 60) -> str:
    text = raw[:limit].decode("utf-8", "replace")
    if len(raw) > limit:
        text += "..."
    return repr(text)


#: the message types a bot may send (the tags of ``protocol.messages.BotMessage``)
_BOT_TYPES = ("hello", "ask", "play", "take")
_TYPE_HINT = "a string naming the message (hello, ask, play or take)"


def schema_detail(lineno: int, message: str, line: bytes | None = None) -> str:
    """A msgspec validation message rewritten for a bot author:
    ``line 3: field `target` expected int, got str`` (the detail of
    :func:`schema_problem`)."""
    return schema_problem(lineno, message, line)[0]


def schema_problem(lineno: int, message: str, line: bytes | None = None) -> tuple[str, Problem]:
    """A msgspec validation message as the detail for a bot author and the
    structured :class:`Problem` (decided together, here).

    ``line`` (the raw line, optional) lets a complaint about ``type`` be exact:
    msgspec reports a second ``type`` key that differs from the first as an
    invalid value, and a non-string ``type`` without saying what it got. It is
    only looked at here, on the error path."""
    e = parse_schema_error(message)
    if e.kind == "type":
        exp, got, path = e.expected, e.got, e.path
        if not path:
            return (
                f"line {lineno}: expected a JSON {exp} (one message object), got {got}",
                Problem("not_object", expected=exp, got=got),
            )
        return f"line {lineno}: field `{path}` expected {exp}, got {got}", Problem(
            "field_type", field=path, expected=exp, got=got
        )
    if e.kind == "expected" and e.path:
        exp, path = e.expected, e.path
        if path == "type":
            values = _type_values(line)
            if values is not None and len(values) > 1:
                return _duplicate_type(lineno, values)
            got = f", got {_json_kind(values[0])}" if values else ""
            return (
                f"line {lineno}: field `type` must be {_TYPE_HINT}{got}",
                Problem("type_key", field="type", expected="str", got=_json_kind(values[0]) if values else None),
            )
        return f"line {lineno}: field `{path}` expected {exp}", Problem("field_type", field=path, expected=exp)
    if e.kind == "missing":
        field, path = e.field, e.path
        if field == "type" and not path:
            return (
                f'line {lineno}: missing field `type` (every message needs one, e.g. "type":"ask")',
                Problem("missing_field", field="type"),
            )
        full = f"{(path + '.') if path else ''}{field}"
        return f"line {lineno}: missing field `{full}`", Problem("missing_field", field=full)
    if e.kind == "invalid" and e.value is not None:
        value, path = e.value, e.path
        if path == "type":
            values = _type_values(line)
            if values is not None and len(values) > 1:
                return _duplicate_type(lineno, values)
            if values is None and value.strip("'\"") in _BOT_TYPES:
                # a valid type reported invalid: it contradicts an earlier `type` key
                return (
                    f"line {lineno}: the key `type` appears more than once with different values "
                    f'(one of them {value}) - a message has exactly one "type"',
                    Problem("type_key", field="type", got=value),
                )
            return (
                f"line {lineno}: unknown message type {value} (a bot sends hello, ask, play or take)",
                Problem("unknown_type", field="type", got=value),
            )
        return f"line {lineno}: field `{path}` has invalid value {value}", Problem(
            "invalid_value", field=path, got=value
        )
    return f"line {lineno}: {message}", Problem("other")


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


def _duplicate_type(lineno: int, values: list[Any]) -> tuple[str, Problem]:
    shown = ", ".join(_short_json(v) for v in values)
    return (
        f'line {lineno}: the key `type` appears {len(values)} times ({shown}) - a message has exactly one "type" key',
        Problem("type_key", field="type", got=shown),
    )


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
    """Decode one bot line, or raise :class:`BotMalformed` saying exactly why
    (its ``detail``) and what (its ``problem``)."""
    try:
        return BOT_DECODER.decode(line)
    except msgspec.ValidationError as exc:
        detail, problem = schema_problem(lineno, str(exc), line)
    except msgspec.DecodeError:
        detail, problem = malformed_problem(line, lineno)
    except RecursionError:
        # msgspec recurses into nested values it skips: a few KiB of {"a":{"a":... would escape
        detail = (
            f"line {lineno} nests JSON objects or arrays too deeply ({_show(line)}) - a message is one flat JSON object"
        )
        problem = Problem("too_deep")
    raise BotMalformed(detail, bot=bot, seat=seat, turn_id=turn_id, problem=problem)


def malformed_detail(line: bytes, lineno: int) -> str:
    """Why ``line`` is not JSON at all (invalid UTF-8 or a JSON syntax error)."""
    return malformed_problem(line, lineno)[0]


def malformed_problem(line: bytes, lineno: int) -> tuple[str, Problem]:
    """Why ``line`` is not JSON at all, as a detail and a :class:`Problem`
    (``not_utf8``, ``empty`` or ``not_json``)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return (
            f"line {lineno} is not valid UTF-8 (byte 0x{line[exc.start]:02x} at offset {exc.start}): "
            f"{_show(line)} - the protocol is UTF-8 JSON",
            Problem("not_utf8"),
        )
    if not text.strip():
        return f"line {lineno} is empty - every line on stdout must be one JSON message", Problem("empty")
    return f"line {lineno} is not JSON: {_show(line)} - write debug output to stderr", Problem("not_json")


_LINE_PREFIX = re.compile(r"line (\d+)\b")


def detail_lineno(detail: str | None) -> int | None:
    """The line number a fault's detail starts with (``line N ...``, as this module,
    the framing and the machine word it), or None. For logs older than version 2,
    which recorded a refused line's number only there."""
    m = _LINE_PREFIX.match(detail or "")
    return int(m.group(1)) if m else None
