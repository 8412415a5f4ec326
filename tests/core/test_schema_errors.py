"""The msgspec message formats :mod:`referee.core.schema_errors` reads, pinned
against the installed msgspec: each is produced by msgspec itself here, so an
upgrade that rewords one fails this test, not a user's config load."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
import pytest

from referee.core.schema_errors import SchemaError, parse_schema_error


class _Inner(msgspec.Struct, forbid_unknown_fields=True):
    need: int
    mode: Literal["wall", "cpu"] = "wall"


class _Outer(msgspec.Struct, forbid_unknown_fields=True):
    items: list[_Inner] = []
    name: str = ""


class _A(msgspec.Struct, tag="a"):
    pass


class _B(msgspec.Struct, tag="b"):
    pass


def _message(data: bytes, type: Any) -> str:
    with pytest.raises(msgspec.ValidationError) as info:
        msgspec.json.decode(data, type=type)
    return str(info.value)


@pytest.mark.parametrize(
    ("data", "type", "want"),
    [
        (b'{"name": 3}', _Outer, SchemaError(kind="type", text="", path="name", expected="str", got="int")),
        (b"[1]", _Outer, SchemaError(kind="type", text="", expected="object", got="array")),
        (b'{"items": [{}]}', _Outer, SchemaError(kind="missing", text="", path="items[0]", field="need")),
        (b"{}", _Inner, SchemaError(kind="missing", text="", field="need")),
        (b'{"items": [{"need": 1, "x": 2}]}', _Outer, SchemaError(kind="unknown", text="", path="items[0]", field="x")),
        (
            b'{"items": [{"need": 1, "mode": "gpu"}]}',
            _Outer,
            SchemaError(kind="enum", text="", path="items[0].mode", value="'gpu'"),
        ),
        (b'{"type": "c"}', _A | _B, SchemaError(kind="invalid", text="", path="type", value="'c'")),
        (b'{"type": 3}', _A | _B, SchemaError(kind="expected", text="", path="type", expected="str")),
    ],
)
def test_each_format_read_is_msgspecs_own(data: bytes, type: Any, want: SchemaError) -> None:
    text = _message(data, type)
    assert parse_schema_error(text) == msgspec.structs.replace(want, text=text)


def test_a_message_of_another_format_is_other_with_its_text() -> None:
    text = _message(b"0", Annotated[int, msgspec.Meta(ge=1)])
    got = parse_schema_error(text)
    assert got == SchemaError(kind="other", text=text) and text.startswith("Expected `int` >= 1")


def test_other_messages_keep_their_path_and_under_places_an_error() -> None:
    from referee.core.schema_errors import under

    e = parse_schema_error(_message(b'{"items": [{"need": -1}]}', _Constrained))
    assert e.kind in ("expected", "other") and e.path == "items[0].need"
    assert under(e, "bots[2]").path == "bots[2].items[0].need"
    assert under(parse_schema_error(_message(b'[{"need": 1.5}]', list[_Inner])), "x").path == "x[0].need"
    top = parse_schema_error(_message(b'"x"', int))
    assert top.path == "" and under(top, "seed").path == "seed"


class _Pos(msgspec.Struct):
    need: Annotated[int, msgspec.Meta(ge=0)]


class _Constrained(msgspec.Struct):
    items: list[_Pos]
