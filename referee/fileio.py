"""Small file helpers every layer may use (below the league and the view: see docs/ARCHITECTURE.md, Layers)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write a file via a temporary file next to it and a rename, so that a
    reader never sees half of it (text is UTF-8). ``OSError`` propagates."""
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(data, str):
        tmp.write_text(data, encoding="utf-8")
    else:
        tmp.write_bytes(data)
    os.replace(tmp, path)
