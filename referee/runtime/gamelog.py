"""The game log writer: one JSON Lines file per game (or match), written buffered.

The record shapes are defined once in :mod:`referee.core.records` (the
reader, replay, uses the same Structs); the hand machine says what to record
(:class:`referee.core.machine.Sink`) and this writer adds ``t`` (seconds since
the game started, monotonic clock) and writes. The frequent records (``out``,
``act``, ``in``) are formatted as bytes by hand for speed; tests check that
they decode as their Structs.

A bot's valid reply is embedded as received, except that each carriage return
(valid JSON holds one only as whitespace between tokens, never inside a
string) becomes a space, so every record stays on one line for any reader.

Size cap: once the file reaches ``max_bytes``, a ``capped`` record is written
and the rest of the play is not recorded (the ``stderr`` records and the
footer still are; :attr:`GameLog.capped` tells the caller, who puts it in the
footer and the result).

Errors: I/O errors while writing raise ``OSError`` to the caller (the game is
then aborted); writes are synchronous and buffered (64 KiB), never awaited.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, BinaryIO

from protocol.messages import ENCODER
from referee.core.records import LOG_KIND, LOG_VERSION, bad_line_fields

__all__ = ["GameLog", "LOG_KIND", "LOG_VERSION"]


class GameLog:
    """Append-only buffered JSON Lines writer.

    The record of a bot's action is formatted lazily: it is kept until the
    next record is written (so the referee can send the next turn first and
    format the log while the bot thinks); file order is unchanged.
    """

    __slots__ = ("path", "_f", "_t0", "_now", "_act", "_max", "capped", "_since")

    def __init__(self, path: str | Path, t0: float, now: Any = time.monotonic, max_bytes: int | None = None) -> None:
        self.path = path
        try:  # the folder usually exists already (a league writes thousands of logs into one)
            f = open(path, "wb", buffering=1 << 16)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            f = open(path, "wb", buffering=1 << 16)
        self._f: BinaryIO | None = f
        self._t0 = t0
        self._now = now
        self._act: tuple[float, int, int, str, bytes, float, float | None] | None = None
        self._max = max_bytes
        self.capped = False
        self._since = 0  # bytes of out records since the cap was last checked

    def t(self) -> str:
        return f"{self._now() - self._t0:.6f}"

    def tb(self) -> bytes:
        return b"%.6f" % (self._now() - self._t0)

    def _write_act(self) -> None:
        t, seat, turn_id, decide, raw, ms, wall = self._act  # type: ignore[misc]
        self._act = None
        if wall is None:
            self._f.write(  # type: ignore[union-attr]
                b'{"t":%.6f,"act":{"seat":%d,"id":%d,"decide":"%s","fallback":false,"ms":%.3f,"action":%s}}\n'
                % (t, seat, turn_id, decide.encode(), ms, raw))
        else:
            self._f.write(  # type: ignore[union-attr]
                b'{"t":%.6f,"act":{"seat":%d,"id":%d,"decide":"%s","fallback":false,"ms":%.3f,"wall_ms":%.3f,'
                b'"action":%s}}\n' % (t, seat, turn_id, decide.encode(), ms, wall, raw))

    def _full(self) -> bool:
        """True once the cap is reached (writes the ``capped`` record the first time)."""
        f = self._f
        if f is None or self.capped:
            return True
        if self._max is not None and f.tell() >= self._max:
            if self._act is not None:
                self._write_act()
            size = f.tell()
            f.write(b'{"t":' + self.tb() + b',"capped":{"bytes":%d}}\n' % size)
            self.capped = True
            return True
        return False

    def record(self, rec: dict[str, Any]) -> None:
        f = self._f
        if f is None:
            return
        if self.capped or (self._max is not None and f.tell() >= self._max):
            if not ("stderr" in rec or "footer" in rec):
                self._full()
                return
        if self._act is not None:
            self._write_act()
        f.write(ENCODER.encode(rec))
        f.write(b"\n")

    def timed(self, key: str, value: Any) -> None:
        if not self._full():
            if self._act is not None:
                self._write_act()
            self._f.write(b'{"t":' + self.tb() + b',"' + key.encode() + b'":' + ENCODER.encode(value) + b"}\n")

    def out(self, seat: int, lines: list[bytes]) -> None:
        """Log raw JSON lines (without newlines) written to ``seat``. The size
        cap is checked once per 64 KiB of these records (they are the bulk)."""
        f = self._f
        if f is None or self.capped:
            return
        if self._act is not None:
            self._write_act()
        rec = b'{"t":%.6f,"to":%d,"out":[%b]}\n' % (self._now() - self._t0, seat, b",".join(lines))
        f.write(rec)
        self._since += len(rec)
        if self._since >= 65536 and self._max is not None:
            self._since = 0
            self._full()

    def inbound(self, seat: int, raw: bytes, ms: float, ok: bool, lineno: int | None = None,
                long: bool = False) -> None:
        """Log a line read from ``seat`` and refused: ``raw`` is embedded as JSON
        when it decoded (``in``), else as text (``bad``; ``long``: only the start
        of a line over the length limit). ``lineno``: its number in the bot's output."""
        if self._full():
            return
        if self._act is not None:
            self._write_act()
        n = b"" if lineno is None else b',"line":%d' % lineno
        if ok:
            if b"\r" in raw:  # JSON whitespace, but a line break for text readers: one record per line
                raw = raw.replace(b"\r", b" ")
            self._f.write(b'{"t":%s,"from":%d,"in":%s,"ms":%.3f%b}\n' % (self.tb(), seat, raw, ms, n))  # type: ignore[union-attr]
        else:
            rec: dict[str, Any] = {"t": float(self.t()), "from": seat, **bad_line_fields(raw), "ms": round(ms, 3)}
            if lineno is not None:
                rec["line"] = lineno
            if long:
                rec["long"] = True
            self.record(rec)

    def act_raw(self, seat: int, turn_id: int, decide: str, raw: bytes, ms: float,
                wall_ms: float | None = None) -> None:
        """Log a bot's valid reply, as received, as the action applied (``wall_ms``:
        the wall time of the decision when ``ms`` is CPU time, cpu clock). The
        cap is checked by the next record (an act is small)."""
        if not self.capped and self._f is not None:
            if self._act is not None:
                self._write_act()
            if b"\r" in raw:  # a decoded reply holds CR only as JSON whitespace: keep the log one record per line
                raw = raw.replace(b"\r", b" ")
            self._act = (self._now() - self._t0, seat, turn_id, decide, raw, ms, wall_ms)

    def close(self) -> None:
        if self._f is not None:
            if self._act is not None:
                self._write_act()
            self._f.close()
            self._f = None
