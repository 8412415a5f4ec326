"""Reading a game log: every record checked against its Struct (:mod:`referee.core.records`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from referee.core.records import LOG_KIND, READABLE_VERSIONS, FooterRec, Header, record_type
from referee.errors import UserError
from referee.runtime.gamelog import read_log_bytes


def load_log(path: str | Path) -> list[tuple[int, Any, dict[str, Any]]]:
    """Read a game log: ``[(line number, typed record, raw dict), ...]``, header first.

    Raises ``UserError`` if the file is missing or unreadable, a line is not a
    JSON object or not a known record of the right shape, the header is not a
    card-referee game log of a version this referee reads, or the footer is
    missing (truncated).
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise UserError(f"log file {str(p)!r} not found") from None
    except IsADirectoryError:
        raise UserError(f"{p} is a folder, not a game log") from None
    except OSError as exc:
        raise UserError(f"cannot read log {str(p)!r}: {exc.strerror or exc}") from None
    try:
        data = read_log_bytes(data)
    except ValueError as exc:
        raise UserError(f"{p}: {exc}; this log cannot be replayed") from None
    return parse_log(data, str(p))


def parse_log(data: bytes, name: str) -> list[tuple[int, Any, dict[str, Any]]]:
    """:func:`load_log` of the bytes of a log (``name`` names it in errors)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        raise UserError(f"{name} is empty; this is not a card-referee game log")
    out: list[tuple[int, Any, dict[str, Any]]] = []
    decode = msgspec.json.decode
    for i, line in enumerate(lines, 1):
        try:
            raw = decode(line)
        except (msgspec.DecodeError, RecursionError):
            what = "the last line is cut off" if i == len(lines) else "it is corrupt"
            raise UserError(f"{name} line {i} is not JSON ({what}); this log cannot be replayed") from None
        if not isinstance(raw, dict):
            raise UserError(f"{name} line {i} is not a JSON object; this is not a card-referee game log")
        if i == 1:
            if raw.get("log") != LOG_KIND:
                raise UserError(f"{name} line 1 is not a card-referee game log header")
            if raw.get("log_version") not in READABLE_VERSIONS:
                raise UserError(
                    f"{name} line 1: log version {raw.get('log_version')!r}; this referee reads "
                    f"versions {', '.join(map(str, READABLE_VERSIONS))}"
                )
            typ: type = Header
            what = "header"
        else:
            found = record_type(raw)
            if found is None:
                raise UserError(f"{name} line {i}: not a known log record (keys {', '.join(sorted(raw)) or 'none'})")
            what, typ = found
        try:
            rec: Any = msgspec.convert(raw, typ)
        except msgspec.ValidationError as exc:
            raise UserError(f"{name} line {i}: malformed {what} record: {exc}") from None
        out.append((i, rec, raw))
    if not isinstance(out[-1][1], FooterRec):
        raise UserError(f"{name} is truncated: it has no footer (the referee stopped before the game ended)")
    for i, rec, _ in out[1:-1]:
        if isinstance(rec, FooterRec):
            raise UserError(f"{name} line {i}: a footer before the last line; this log is corrupt")
    return out
