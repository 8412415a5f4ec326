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

Compression: with ``compress`` the log is a zstandard stream (level 3;
``GAME.jsonl.zst``), compressed as it is written (docs/PERFORMANCE.md,
"Compact logs": a 4-seat kwartet game's ~110 KB become ~8 KB for ~0.1 ms of
CPU; gzip level 6 costs ten times the CPU). Compressor contexts are reused
from one log to the next. :func:`read_log_bytes` reads plain,
zstandard and gzip logs alike.

Size cap: once the log holds ``max_bytes`` (uncompressed), a ``capped``
record is written and the rest of the play is not recorded (the ``stderr``
records and the footer still are; :attr:`GameLog.capped` tells the caller,
who puts it in the footer and the result).

Errors: I/O errors while writing raise ``OSError`` to the caller (the game is
then aborted); writes are synchronous and buffered (64 KiB), never awaited.
With ``path`` None the log is kept in memory (:meth:`GameLog.getvalue`).
"""

from __future__ import annotations

import gzip
import os
import time
from pathlib import Path
from typing import Any, BinaryIO

import zstandard

from protocol.messages import ENCODER
from referee.core.records import LOG_KIND, LOG_VERSION, bad_line_fields

__all__ = ["GameLog", "LOG_KIND", "LOG_VERSION", "LOG_SUFFIXES", "is_zstd", "read_log_bytes", "log_name"]

#: file names a game log may have: plain, zstandard, gzip
LOG_SUFFIXES = (".jsonl", ".jsonl.zst", ".jsonl.gz")
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16
#: the zstandard level of compressed logs (chosen by benchmark: docs/PERFORMANCE.md)
ZSTD_LEVEL = 3


#: compressors not in use (a compressor's context is costly to make; a log borrows one while it is
#: open: one compressor serves one stream at a time)
_IDLE_COMPRESSORS: list[zstandard.ZstdCompressor] = []


def _borrow() -> zstandard.ZstdCompressor:
    return _IDLE_COMPRESSORS.pop() if _IDLE_COMPRESSORS else zstandard.ZstdCompressor(level=ZSTD_LEVEL)


def log_name(game_id: str, compress: bool) -> str:
    """The file name of a game's log."""
    return f"{game_id}.jsonl.zst" if compress else f"{game_id}.jsonl"


def is_zstd(data: bytes) -> bool:
    """Whether a log's bytes are a zstandard stream (the form ``compress`` writes)."""
    return data.startswith(_ZSTD_MAGIC)


def read_log_bytes(data: bytes) -> bytes:
    """The JSON Lines text of a log file's bytes, whether plain, zstandard or gzip.
    Raises ``ValueError`` saying what is wrong for a corrupt or cut-off stream."""
    if data.startswith(_ZSTD_MAGIC):
        d = zstandard.ZstdDecompressor().decompressobj()
        try:
            out = d.decompress(data)
        except zstandard.ZstdError as exc:
            raise ValueError(f"the zstandard stream is corrupt ({exc})") from None
        if not d.eof:
            raise ValueError(
                "the zstandard stream is cut off (the referee stopped while writing it, or the file was truncated)"
            )
        return out
    if data.startswith(_GZIP_MAGIC):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ValueError(f"the gzip stream is corrupt or cut off ({exc})") from None
    return data


class GameLog:
    """Append-only buffered JSON Lines writer (optionally compressed).

    The record of a bot's action is formatted lazily: it is kept until the
    next record is written (so the referee can send the next turn first and
    format the log while the bot thinks); file order is unchanged.
    """

    __slots__ = (
        "path",
        "_file",
        "_z",
        "_zc",
        "_buf",
        "_done",
        "_t0",
        "_now",
        "_act",
        "_max",
        "capped",
        "_mem",
        "_open",
    )

    def __init__(
        self,
        path: str | Path | None,
        t0: float,
        now: Any = time.monotonic,
        max_bytes: int | None = None,
        compress: bool = False,
    ) -> None:
        self.path = path
        self._file: BinaryIO | None = None
        self._mem: bytearray | None = None
        if path is None:
            self._mem = bytearray()
        else:
            try:  # the folder usually exists already (a league writes thousands of logs into one)
                self._file = open(path, "wb", buffering=0)
            except FileNotFoundError:
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                self._file = open(path, "wb", buffering=0)
        self._zc = _borrow() if compress else None
        self._z = self._zc.compressobj() if self._zc is not None else None
        self._buf = bytearray()
        self._done = 0  # bytes (uncompressed) already handed to the file
        self._open = True
        self._t0 = t0
        self._now = now
        self._act: tuple[float, int, int, str, bytes, float, float | None] | None = None
        self._max = max_bytes
        self.capped = False

    # ------------------------------------------------------------------ output
    def _spill(self, final: bool = False) -> None:
        data = bytes(self._buf)
        self._done += len(data)
        self._buf.clear()
        z = self._z
        if z is not None:
            data = z.compress(data)
            if final:
                data += z.flush()
        if data:
            if self._mem is not None:
                self._mem += data
            elif self._file is not None:
                self._file.write(data)

    def _put(self, data: bytes) -> None:
        buf = self._buf
        buf += data
        if len(buf) >= _CHUNK:
            self._spill()

    def size(self) -> int:
        """Bytes recorded so far (uncompressed)."""
        return self._done + len(self._buf)

    def getvalue(self) -> bytes:
        """The whole log, as stored (in-memory logs, after :meth:`close`)."""
        return bytes(self._mem or b"")

    def t(self) -> str:
        return f"{self._now() - self._t0:.6f}"

    def tb(self) -> bytes:
        return b"%.6f" % (self._now() - self._t0)

    def _write_act(self) -> None:
        act = self._act
        assert act is not None  # callers check
        t, seat, turn_id, decide, raw, ms, wall = act
        self._act = None
        if wall is None:
            self._put(
                b'{"t":%.6f,"act":{"seat":%d,"id":%d,"decide":"%s","fallback":false,"ms":%.3f,"action":%s}}\n'
                % (t, seat, turn_id, decide.encode(), ms, raw)
            )
        else:
            self._put(
                b'{"t":%.6f,"act":{"seat":%d,"id":%d,"decide":"%s","fallback":false,"ms":%.3f,"wall_ms":%.3f,'
                b'"action":%s}}\n' % (t, seat, turn_id, decide.encode(), ms, wall, raw)
            )

    def _full(self) -> bool:
        """True once the cap is reached (writes the ``capped`` record the first time)."""
        if not self._open or self.capped:
            return True
        if self._max is not None and self._done + len(self._buf) >= self._max:
            if self._act is not None:
                self._write_act()
            size = self._done + len(self._buf)
            self._put(b'{"t":' + self.tb() + b',"capped":{"bytes":%d}}\n' % size)
            self.capped = True
            return True
        return False

    # ------------------------------------------------------------------ records (the Sink of the hand machine)
    def record(self, rec: dict[str, Any]) -> None:
        if not self._open:
            return
        if ("stderr" not in rec and "footer" not in rec) and self._full():
            return
        if self._act is not None:
            self._write_act()
        self._put(ENCODER.encode(rec) + b"\n")

    def timed(self, key: str, value: Any) -> None:
        if not self._full():
            if self._act is not None:
                self._write_act()
            self._put(b'{"t":' + self.tb() + b',"' + key.encode() + b'":' + ENCODER.encode(value) + b"}\n")

    def out(self, seat: int, lines: list[bytes]) -> None:
        """Log raw JSON lines (without newlines) written to ``seat``."""
        if self.capped or not self._open:
            return
        if self._act is not None:
            self._write_act()
        buf = self._buf
        buf += b'{"t":%.6f,"to":%d,"out":[%b]}\n' % (self._now() - self._t0, seat, b",".join(lines))
        if len(buf) >= _CHUNK:
            self._spill()
            if self._max is not None:
                self._full()

    def inbound(
        self, seat: int, raw: bytes, ms: float, ok: bool, lineno: int | None = None, long: bool = False
    ) -> None:
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
            self._put(b'{"t":%s,"from":%d,"in":%s,"ms":%.3f%b}\n' % (self.tb(), seat, raw, ms, n))
        else:
            rec: dict[str, Any] = {"t": float(self.t()), "from": seat, **bad_line_fields(raw), "ms": round(ms, 3)}
            if lineno is not None:
                rec["line"] = lineno
            if long:
                rec["long"] = True
            self.record(rec)

    def act_raw(
        self, seat: int, turn_id: int, decide: str, raw: bytes, ms: float, wall_ms: float | None = None
    ) -> None:
        """Log a bot's valid reply, as received, as the action applied (``wall_ms``:
        the wall time of the decision when ``ms`` is CPU time, cpu clock). The
        cap is checked by the next record (an act is small)."""
        if not self.capped and self._open:
            if self._act is not None:
                self._write_act()
            if b"\r" in raw:  # a decoded reply holds CR only as JSON whitespace: keep the log one record per line
                raw = raw.replace(b"\r", b" ")
            self._act = (self._now() - self._t0, seat, turn_id, decide, raw, ms, wall_ms)

    def input(self, event: Any) -> None:
        """Log an input of the hand machine other than a reply (an ``input`` record)."""
        self.timed("input", event)

    def close(self) -> None:
        if self._open:
            if self._act is not None:
                self._write_act()
            self._spill(final=True)
            self._open = False
            if self._zc is not None:
                _IDLE_COMPRESSORS.append(self._zc)  # its stream is finished: free for the next log
                self._zc = None
            if self._file is not None:
                self._file.close()
                self._file = None
