"""The game log: one JSON Lines file per game (or match), written buffered.

Record shapes (one JSON object per line; ``t`` is seconds since the game
started, from the monotonic clock):

* first line, the header: ``{"log": "card-referee-game", "log_version": 1,
  "protocol": 1, "referee": "0.1.0", "game": ..., "started":
  "2026-11-30T08:00:00.000Z" (UTC wall time when the game started), "variant": ..., "rules":
  {...}, "players": n, "seed": ..., "deal": ..., "match": ..., "seats":
  [{"seat", "bot", "command", "hello"}], "clock": {...}, "policy": {...},
  "seat_clocks": null or [{...} per seat]}`` (each clock as
  ``ClockSpec.to_json()``; ``seat_clocks`` is set when the game has per-seat clocks)
* ``{"hand": {"index", "game", "seats", "dealer", "seed", "deal"}}`` - a hand
  (a protocol game) starts; ``seats`` are the match seats playing it.
* ``{"t", "to": seat, "out": [messages]}`` - lines written to a seat in one write
  (events buffered with the seat's next turn/end, and turns, errors, ...).
* ``{"t", "act": {"seat", "id", "decide", "action", "fallback", "ms"}}`` -
  an action applied to the game. For a bot's valid reply ``action`` is the
  reply exactly as received (with its ``type`` and ``id``) and ``ms`` its
  measured think time (the bot's CPU time with the cpu clock, which adds
  ``wall_ms``, the decision's wall time, so the log shows how close it came to
  the wall ceiling); ``fallback`` is true (and ``id`` null) when the
  referee's fallback played it.
* ``{"t", "from": seat, "in": message, "ms": think}`` - a reply that decoded
  but was refused (stale id, wrong type, illegal); a line that did not decode
  is ``{"t", "from", "bad": text, "ms"}``.
* ``{"t", "fault": {"seat", "bot", "fault", "detail", "id", "game"}}``
* ``{"t", "retry": {...}}`` - an illegal/malformed reply forgiven by the retry policy.
* ``{"hand_end": {"index", "game", "scores", "ranks"}}``
* ``{"stderr": {"seat", "bot", "tail"}}`` - each bot's stderr tail.
* last line, the footer: ``{"footer": {"scores", "ranks", "win_shares",
  "forfeits", "reason", "detail", "think_ms"}}``. A log without a footer is
  truncated (the referee stopped mid-game).

A bot's valid reply is embedded as received, except that each carriage return
(valid JSON holds one only as whitespace between tokens, never inside a
string) becomes a space, so every record stays on one line for any reader.

Errors: I/O errors while writing raise ``OSError`` to the caller (the game is
then aborted); writes are synchronous and buffered (64 KiB), never awaited.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, BinaryIO

from protocol.messages import ENCODER

LOG_KIND = "card-referee-game"
LOG_VERSION = 1


class GameLog:
    """Append-only buffered JSON Lines writer.

    The record of a bot's action is formatted lazily: it is kept until the
    next record is written (so the referee can send the next turn first and
    format the log while the bot thinks); file order is unchanged.
    """

    __slots__ = ("path", "_f", "_t0", "_now", "_act")

    def __init__(self, path: str | Path, t0: float, now: Any = time.monotonic) -> None:
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

    def record(self, rec: dict[str, Any]) -> None:
        if self._f is not None:
            if self._act is not None:
                self._write_act()
            self._f.write(ENCODER.encode(rec))
            self._f.write(b"\n")

    def timed(self, key: str, value: Any) -> None:
        if self._f is not None:
            if self._act is not None:
                self._write_act()
            self._f.write(b'{"t":' + self.tb() + b',"' + key.encode() + b'":' + ENCODER.encode(value) + b"}\n")

    def out(self, seat: int, lines: list[bytes]) -> None:
        """Log raw JSON lines (without newlines) written to ``seat``."""
        f = self._f
        if f is not None:
            if self._act is not None:
                self._write_act()
            f.write(b'{"t":%.6f,"to":%d,"out":[%b]}\n' % (self._now() - self._t0, seat, b",".join(lines)))

    def inbound(self, seat: int, raw: bytes, ms: float, ok: bool) -> None:
        """Log a line read from ``seat``: ``raw`` is embedded as JSON when it decoded."""
        if self._f is None:
            return
        if self._act is not None:
            self._write_act()
        if ok:
            if b"\r" in raw:  # JSON whitespace, but a line break for text readers: one record per line
                raw = raw.replace(b"\r", b" ")
            self._f.write(b'{"t":%s,"from":%d,"in":%s,"ms":%.3f}\n' % (self.tb(), seat, raw, ms))
        else:
            self.record({"t": float(self.t()), "from": seat, "bad": raw.decode("utf-8", "replace")[:2000], "ms": round(ms, 3)})

    def act_raw(self, seat: int, turn_id: int, decide: str, raw: bytes, ms: float,
                wall_ms: float | None = None) -> None:
        """Log a bot's valid reply, as received, as the action applied (``wall_ms``:
        the wall time of the decision when ``ms`` is CPU time, cpu clock)."""
        if self._f is not None:
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
