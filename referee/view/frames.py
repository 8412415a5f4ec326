"""The viewer's data format ("frames", version 1): checks and the StatePatch semantics in Python.

The producer (a game log replayed through the replay core) emits one JSON object per game:
``{"format": "card-referee-frames", "version": 1, "game", "variant", "kind", "rules", "players",
"seats", "match", "result", "verified", "frames": [...]}``. Every frame carries a ``state``
patch: frame 0 holds the complete state, later frames only the keys that changed (``hands``
merges per seat). The page applies the same rule in JavaScript; :func:`materialize` is the
Python reading, for tests and for tools that want the full state at a step.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

FORMAT = "card-referee-frames"
VERSION = 1

#: what a game id must look like to be loaded by the viewer shell (``viewer.html?game=ID`` loads
#: ``ID.frames.js`` from the page's folder; anything else could name a file elsewhere)
GAME_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


def check_frames(data: Any) -> None:
    """Check the envelope of a frames document: format, version, seats and at least one frame.

    Raises :class:`TypeError` when ``data`` is not a mapping and :class:`ValueError` saying what is
    wrong otherwise (the page would show the same problem as an error line instead of the table).
    The frames' contents are not validated here.
    """
    if not isinstance(data, Mapping):
        raise TypeError(f"frames data must be a JSON object, not {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise ValueError(f"not a frames document: format is {data.get('format')!r}, expected {FORMAT!r}")
    if data.get("version") != VERSION:
        raise ValueError(
            f"frames version {data.get('version')!r} is not supported (this viewer reads version {VERSION})"
        )
    frames = data.get("frames")
    if not isinstance(frames, list) or not frames:
        raise ValueError("frames data has no frames (a game has at least its start frame)")
    seats = data.get("seats")
    if not isinstance(seats, list) or not seats:
        raise ValueError("frames data has no seats")
    if not isinstance(data.get("game"), str) or not data["game"]:
        raise ValueError("frames data has no game id")


def apply_patch(state: Mapping[str, Any], patch: Mapping[str, Any] | None) -> dict[str, Any]:
    """The state after ``patch``: keys absent from the patch keep their value, ``hands`` merges
    per seat, every other key is replaced. Neither argument is modified."""
    out = dict(state)
    for key, value in (patch or {}).items():
        if key == "hands":
            out["hands"] = {**(state.get("hands") or {}), **(value or {})}
        else:
            out[key] = value
    return out


def materialize(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The full state at every frame of a frames document (frame 0's patch applied to an empty
    state, then each later patch in turn). Raises as :func:`check_frames`."""
    check_frames(data)
    states: list[dict[str, Any]] = []
    state: dict[str, Any] = {}
    for frame in data["frames"]:
        state = apply_patch(state, frame.get("state"))
        states.append(state)
    return states
