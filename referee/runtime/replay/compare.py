"""Comparison helpers of replay: exact equality of decoded JSON, short descriptions of differences."""

from __future__ import annotations

import math
from typing import Any

import msgspec

from referee.core.errors import is_retry_error

_SORTED_JSON = msgspec.json.Encoder(order="sorted")


def _same(a: Any, b: Any) -> bool:
    """Deep equality that also tells ``1`` from ``1.0`` from ``true``.

    Fast path (the viewer replays every game of a night through here): ``==`` in C, then the two
    JSON texts with sorted keys, which differ where a type does (``1``, ``1.0``, ``true``); values
    JSON cannot hold take the walk below. Exact when one side was read from a JSON log (no NaN)."""
    if a != b:
        return False
    try:
        return _SORTED_JSON.encode(a) == _SORTED_JSON.encode(b)
    except (TypeError, msgspec.EncodeError):
        return _same_walk(a, b)


def _same_walk(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_walk(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_walk(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _same_num(a: Any, b: Any) -> bool:
    """Equality where whole numbers and floats of the same value agree (scores)."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_num(x, y) for x, y in zip(a, b, strict=True))
    if type(a) in (int, float) and type(b) in (int, float):
        return bool(a == b)
    return _same(a, b)


def _diff(got: Any, want: Any) -> str:
    """A short description of the first difference between two messages."""
    if isinstance(got, dict) and isinstance(want, dict):
        for k in list(want) + [k for k in got if k not in want]:
            if k not in got:
                return f"{k} missing (the re-simulation has {_short(want[k])})"
            if k not in want:
                return f"unexpected field {k}: {_short(got[k])}"
            if not _same(got[k], want[k]):
                return f"{k} {_short(got[k])}, the re-simulation has {_short(want[k])}"
    return f"{_short(got)}, the re-simulation has {_short(want)}"


def _short(x: Any) -> str:
    s = msgspec.json.encode(x).decode()
    return s if len(s) <= 300 else s[:297] + "..."


def _what(msg: Any) -> str:
    if not isinstance(msg, dict):
        return "message"
    t = msg.get("type")
    if t == "event":
        return f"{msg.get('kind')} event (seq {msg.get('seq')})"
    if t == "error" and is_retry_error(str(msg.get("detail", ""))):
        return "error sent"
    return f"{t}" if isinstance(t, str) else "message"


def _same_act(a: dict[str, Any], w: dict[str, Any]) -> bool:
    if a.keys() != w.keys():
        return False
    for k in w:
        if k in ("ms", "wall_ms"):
            if not (_num(a[k]) and _num(w[k]) and abs(a[k] - w[k]) < 0.0015):
                return False
        elif not _same(a[k], w[k]):
            return False
    return True


def _num(x: Any) -> bool:
    return type(x) in (int, float) and math.isfinite(x)
