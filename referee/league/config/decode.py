"""Decoding a config's TOML: msgspec's errors, read by :mod:`referee.core.schema_errors`, worded with the key path."""

from __future__ import annotations

import difflib
import re
import types
import typing
from typing import Any, Literal

import msgspec

from referee.core.schema_errors import SchemaError, parse_schema_error, under
from referee.errors import UserError

from .context import (
    _Problems,
)
from .schema import (
    LeagueConfig,
    VariantConfig,
)
from .variants import (
    _rules,
)

_TYPE_WORDS = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "array": "a list",
    "object": "a table",
    "null": "nothing",
}


#: hints for fields whose generic type text would be unhelpful (path pattern -> wording)
_HINTS = {
    r"bots\[\d+\]\.command": "a string or a list of strings",
    r"bots\[\d+\]\.build": "a string or a list of strings",
    r"variants\[\d+\]\.sizes": "an integer or a list of integers",
    r"variants\[\d+\]\.match": 'a string ("single") or a table such as { kind = "fixed", hands = 3 }',
    r"bots\[\d+\]\.env": 'a table of strings, e.g. { LEVEL = "3" }',
    r"seed": 'a whole number from 0 to 2**64 - 1, or "secret" (drawn at the first run, kept in the ledger)',
    r"(variants\[\d+\]\.)?schedule\.seats_per_bot": "a whole number (the tables each bot plays), e.g. 12",
    r"(variants\[\d+\]\.)?schedule\.challengers": 'a list of bot names, e.g. ["new-a", "new-b"]',
    r"variants\[\d+\]\.schedule": 'a table such as { kind = "balanced", seats_per_bot = 12 }',
    r"schedule": 'a table: [schedule] with kind = "balanced" and seats_per_bot = 12',
}


def _words(type_text: str) -> str:
    return " or ".join(_TYPE_WORDS.get(t.strip(), t.strip()) for t in type_text.split("|"))


def _segments(path: str) -> list[str | int]:
    segs: list[str | int] = []
    for m in re.finditer(r"\.([^.\[]+)|\[(\d+)\]", path):
        segs.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
    return segs


def _unwrap(tp: Any, want: str) -> Any:
    """From a (possibly union) type, the member that is a Struct ('struct'),
    a list ('list') or a Literal ('literal')."""
    args = typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
    for a in args:
        if want == "struct" and isinstance(a, type) and issubclass(a, msgspec.Struct):
            return a
        if want == "list" and typing.get_origin(a) is list:
            return typing.get_args(a)[0]
        if want == "literal" and typing.get_origin(a) is Literal:
            return typing.get_args(a)
    return None


def _type_at(segs: list[str | int]) -> Any:
    tp: Any = LeagueConfig
    for s in segs:
        if isinstance(s, int):
            tp = _unwrap(tp, "list")
        else:
            st = _unwrap(tp, "struct")
            if st is None:
                return None
            tp = typing.get_type_hints(st).get(s)
        if tp is None:
            return None
    return tp


def _explain(e: SchemaError) -> str:
    path = e.path
    segs = _segments("." + path)
    if e.kind == "unknown" and e.field is not None:
        key = e.field
        st = _unwrap(_type_at(segs), "struct")
        valid = list(st.__struct_fields__) if st else []
        close = difflib.get_close_matches(key, valid, n=1, cutoff=0.5)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        where = f"{path}: " if path else ""
        if path and not close and key in LeagueConfig.__struct_fields__:
            hint = (
                f" ('{key}' is a top-level key: in TOML, put top-level keys before the first "
                "[table] or [[table]] header)"
            )
        return f"{where}unknown key '{key}'{hint}; valid keys here: {', '.join(valid)}"
    if e.kind == "missing":
        where = f"{path}: " if path else ""
        return f"{where}missing required key '{e.field}'"
    if e.kind == "type" and e.expected is not None and e.got is not None:
        wanted = _words(e.expected)
        for pattern, hint in _HINTS.items():
            if re.fullmatch(pattern, path):
                wanted = hint
        return f"{path or '(top level)'}: expected {wanted}, got {_words(e.got)}"
    if e.kind == "enum" and e.value is not None:
        allowed = _unwrap(_type_at(segs), "literal") or ()
        val = e.value.strip("'\"")
        if path == "seed":
            return f"seed: invalid value {e.value}; expected {_HINTS['seed']}"
        close = difflib.get_close_matches(val, [str(a) for a in allowed], n=1, cutoff=0.5)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return f"{path}: invalid value {e.value}; expected one of: {', '.join(map(str, allowed))}{hint}"
    return f"{e.text} - at `{path}`" if path else e.text


def decode_config(data: bytes, source: str) -> LeagueConfig:
    """Decode TOML bytes strictly; raise :class:`UserError` naming the key path
    of every mistake (each top-level key and each ``[[bots]]``/``[[variants]]``
    table is checked on its own, so one message lists them all)."""
    try:
        return msgspec.toml.decode(data, type=LeagueConfig)
    except msgspec.ValidationError as exc:
        problems = _Problems(source)
        for e in _every_type_mistake(data) or [parse_schema_error(exc)]:
            problems.items.append(f"{source}: {_name_map_keys(_explain(e), data)}")
        # the variants that did decode are checked too, so a misspelled variant is said with the rest
        problems.items += [f"{source}: {text}" for text in _variant_mistakes(data)]
        problems.raise_if_any()
        raise AssertionError("unreachable") from exc  # pragma: no cover - raise_if_any raised
    except msgspec.DecodeError as exc:
        raise UserError(f"{source}: not valid TOML: {exc}") from None


def _every_type_mistake(data: bytes) -> list[SchemaError]:
    """The validation errors of every top-level key and every array-of-tables
    entry of a config that does not decode, each with its key path
    (``bots[2].command``), in file order."""
    try:
        raw = msgspec.toml.decode(data)
    except msgspec.DecodeError:  # pragma: no cover - the typed decode got past the TOML syntax
        return []
    if not isinstance(raw, dict):  # pragma: no cover - a TOML document is a table
        return []
    hints = typing.get_type_hints(LeagueConfig)
    out: list[SchemaError] = []
    for key, value in raw.items():
        if key not in hints:
            out.append(SchemaError(kind="unknown", text=f"unknown key {key!r}", field=key))
            continue
        tp = hints[key]
        items = list(enumerate(value)) if key in ("bots", "variants") and isinstance(value, list) else [(None, value)]
        elem = typing.get_args(tp)[0] if items and items[0][0] is not None else tp
        for i, item in items:
            try:
                msgspec.convert(item, type=elem)
            except msgspec.ValidationError as exc:
                out.append(under(parse_schema_error(exc), key if i is None else f"{key}[{i}]"))
    return out


def _variant_mistakes(data: bytes) -> list[str]:
    """``variants[i].name: ...`` for every ``[[variants]]`` table that decodes but names no variant
    (an unknown preset, bad custom parameters), for a config whose other mistakes stop the decode."""
    try:
        raw = msgspec.toml.decode(data)
    except msgspec.DecodeError:  # pragma: no cover - the typed decode got past the TOML syntax
        return []
    variants = raw.get("variants") if isinstance(raw, dict) else None
    out: list[str] = []
    for i, item in enumerate(variants if isinstance(variants, list) else []):
        try:
            v = msgspec.convert(item, type=VariantConfig)
        except msgspec.ValidationError:
            continue  # already among the type mistakes
        try:
            _rules(v, f"variants[{i}]", lambda where, text: UserError(f"{where}: {text}"))
        except UserError as exc:
            out.append(str(exc))
    return out


def _name_map_keys(message: str, data: bytes) -> str:
    """msgspec reports a bad value inside a table of free keys (``env``) as
    ``env[...]``; name the actual key, found in the raw TOML."""
    m = re.match(r"(bots\[(\d+)\]\.env)\[\.\.\.\](.*)", message)
    if not m:
        return message
    try:
        env = msgspec.toml.decode(data)["bots"][int(m[2])]["env"]
        bad = next(k for k, v in env.items() if not isinstance(v, str))
    except Exception:  # noqa: BLE001 - the plain message is still right, only less precise
        return message
    return f'{m[1]}.{bad}{m[3]} (environment values are strings: write {bad} = "...")'
