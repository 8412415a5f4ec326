"""msgspec's validation messages, read in one place.

msgspec reports a value that does not fit its type as one English sentence
(``Expected `int`, got `str` - at `$.bots[0].name```). Two callers turn those
sentences into their own wording: the bot-line decoder
(:mod:`referee.core.decode`) and the league config loader
(:mod:`referee.league.config`). :func:`parse_schema_error` is the only code
that reads msgspec's wording; it returns a :class:`SchemaError` the callers
word as they need. ``tests/core/test_schema_errors.py`` pins every format read
here against the installed msgspec, so an upgrade that changes the wording
fails that test rather than a user's config load. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

__all__ = ["SchemaError", "parse_schema_error", "under"]

_AT = r"(?: - at `\$(?P<path>[^`]*)`)?"
#: the formats read, by kind (each matches a whole message)
_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("type", re.compile(r"Expected `(?P<expected>[^`]+)`, got `(?P<got>[^`]+)`" + _AT)),
    ("expected", re.compile(r"Expected `(?P<expected>[^`]+)`" + _AT)),
    ("missing", re.compile(r"Object missing required field `(?P<field>[^`]+)`" + _AT)),
    ("unknown", re.compile(r"Object contains unknown field `(?P<field>[^`]+)`" + _AT)),
    ("enum", re.compile(r"Invalid enum value (?P<value>.+?)" + _AT)),
    ("invalid", re.compile(r"Invalid value (?P<value>.+?)" + _AT)),
)

Kind = Literal["type", "expected", "missing", "unknown", "enum", "invalid", "other"]


class SchemaError(msgspec.Struct, frozen=True, kw_only=True):
    """One msgspec validation message, read.

    ``kind``: ``"type"`` (a value of the wrong JSON type: ``expected``, ``got``),
    ``"expected"`` (a value of the wrong type, msgspec not saying what it got:
    ``expected``), ``"missing"`` (a required ``field`` absent), ``"unknown"`` (an
    unknown ``field`` given), ``"enum"`` (a ``value`` not among a Literal's),
    ``"invalid"`` (a ``value`` not allowed, e.g. an unknown tag) or ``"other"``
    (any other message: ``text``, without its path). ``path``: where, as msgspec writes it
    without the ``$`` and its dot (``bots[0].name``; ``""`` at the top level).
    ``text``: the message itself."""

    kind: Kind
    text: str
    path: str = ""
    expected: str | None = None
    got: str | None = None
    field: str | None = None
    value: str | None = None


def parse_schema_error(message: str | msgspec.ValidationError) -> SchemaError:
    """Read one msgspec validation message (see :class:`SchemaError`)."""
    text = str(message)
    for kind, pattern in _FORMATS:
        m = pattern.fullmatch(text)
        if m:
            groups = m.groupdict()
            path = (groups.pop("path") or "").removeprefix(".")
            return SchemaError(kind=kind, text=text, path=path, **groups)  # type: ignore[arg-type]
    m = re.fullmatch(r"(?P<head>.*?)" + _AT, text, re.DOTALL)
    if m and m["path"] is not None:
        return SchemaError(kind="other", text=m["head"], path=m["path"].removeprefix("."))
    return SchemaError(kind="other", text=text)


def under(error: SchemaError, prefix: str) -> SchemaError:
    """``error`` of a value validated on its own, placed at ``prefix`` (``bots[2]``) of the whole."""
    if not error.path:
        path = prefix
    elif error.path.startswith("["):
        path = prefix + error.path
    else:
        path = f"{prefix}.{error.path}"
    return msgspec.structs.replace(error, path=path)
