"""Small file helpers every layer may use (below the league and the view: see docs/ARCHITECTURE.md, Layers)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["transaction", "write_atomic"]


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write a file via a temporary file next to it and a rename, so that a
    reader never sees half of it (text is UTF-8). ``OSError`` propagates."""
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(data, str):
        tmp.write_text(data, encoding="utf-8")
    else:
        tmp.write_bytes(data)
    os.replace(tmp, path)


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction on a connection in autocommit mode (``isolation_level=None``):
    ``BEGIN IMMEDIATE`` (the write lock at once), committed if the block ends, rolled back
    if it raises (cancellation and Ctrl-C included). The ledger's and the site's."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
