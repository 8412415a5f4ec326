"""Line framing: the ONE place where a bot's byte stream becomes lines.

* :class:`LineReader` splits a trio byte stream on ``b"\\n"``. It never holds
  more than ``max_line + 1`` bytes of an unfinished line: a longer line raises
  :class:`LineTooLong` at once, and the rest of that line is discarded as it
  arrives (the reader resynchronises at the next newline).
* each line then becomes a message with the single decoder built at import,
  through :func:`referee.core.decode.decode_line` (re-exported here), which
  names the exact reason a line is not a valid message.

Cancellation: :meth:`LineReader.read_line` is a trio checkpoint; when it is
cancelled no complete line is lost (partial data stays buffered).
"""

from __future__ import annotations

import os

import trio

from referee.core.decode import _show, decode_line, malformed_detail, schema_detail

_CHUNK = 65536


class LineTooLong(Exception):
    """A line exceeded the limit; ``lineno`` is its number, ``head`` its first bytes."""

    def __init__(self, lineno: int, head: bytes, limit: int) -> None:
        self.lineno = lineno
        self.head = head
        self.limit = limit
        super().__init__(
            f"line {lineno} is longer than {limit} bytes (starts {_show(head)}) - "
            f"a message must fit on one line of at most {limit} bytes"
        )


class StreamClosed(Exception):
    """End of stream (the bot closed its stdout or exited)."""


class LineReader:
    """Bounded line splitter over a trio ``ReceiveStream``.

    ``lineno`` counts the lines returned (and over-long lines), from 1.
    """

    __slots__ = ("_stream", "_buf", "_max", "lineno", "_skipping", "_scan", "_fileno", "_hot")

    def __init__(self, stream: trio.abc.ReceiveStream, max_line: int = 65536) -> None:
        self._stream = stream
        # fast path for pipes: read the fd directly, waiting only when it is empty
        self._fileno = getattr(stream, "fileno", None)
        self._hot = 0
        self._buf = bytearray()
        self._max = max_line
        self.lineno = 0
        self._skipping = False
        self._scan = 0  # bytes of _buf already known to hold no newline

    async def read_line(self, fresh: bool = False) -> bytes:
        """Return the next line without its ``\\n``.

        ``fresh=True`` says a request was just written, so the pipe is surely
        empty: wait for it to become readable before the first read (saves a
        futile ``read`` syscall per decision).

        Raises :class:`LineTooLong` (once per over-long line) and
        :class:`StreamClosed` at end of stream (a final line without a newline
        is returned first).
        """
        buf = self._buf
        while True:
            i = buf.find(b"\n", self._scan)
            if i >= 0:
                self._scan = 0
                if self._skipping:
                    del buf[: i + 1]
                    self._skipping = False
                    continue
                self.lineno += 1
                if i > self._max:
                    # a whole over-long line can arrive in the chunk read after a skipped one
                    head = bytes(buf[:60])
                    del buf[: i + 1]
                    raise LineTooLong(self.lineno, head, self._max)
                line = bytes(buf[:i])
                del buf[: i + 1]
                return line
            if self._skipping:
                buf.clear()
                self._scan = 0
            elif len(buf) > self._max:
                self.lineno += 1
                head = bytes(buf[:60])
                buf.clear()
                self._scan = 0
                self._skipping = True
                raise LineTooLong(self.lineno, head, self._max)
            else:
                self._scan = len(buf)
            want = min(_CHUNK, self._max + 1) if self._skipping else max(1, min(_CHUNK, self._max + 1 - len(buf)))
            data = await self._receive(want, fresh)
            fresh = False
            if not data:
                if buf and not self._skipping:
                    line = bytes(buf)
                    buf.clear()
                    self._scan = 0
                    self.lineno += 1
                    return line
                raise StreamClosed("end of stream")
            buf += data

    async def _receive(self, want: int, fresh: bool = False) -> bytes:
        """Up to ``want`` bytes (b"" at end of stream); raises StreamClosed if closed.

        For a pipe the fd is read directly (one syscall when data is waiting);
        it waits with ``trio.lowlevel.wait_readable`` when the pipe is empty,
        and checkpoints at least every 32 reads so it never starves other tasks.
        """
        fileno = self._fileno
        if fileno is None:
            try:
                return bytes(await self._stream.receive_some(want))
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise StreamClosed(str(exc)) from None
        self._hot += 1
        if self._hot >= 32:
            self._hot = 0
            await trio.lowlevel.checkpoint()
        while True:
            fd = fileno()
            if fd < 0:
                raise StreamClosed("stream closed")
            if fresh:
                fresh = False
                self._hot = 0
                try:
                    await trio.lowlevel.wait_readable(fd)
                except (trio.ClosedResourceError, trio.BrokenResourceError) as exc:
                    raise StreamClosed(str(exc)) from None
                continue
            try:
                return os.read(fd, want)
            except BlockingIOError:
                self._hot = 0
                try:
                    await trio.lowlevel.wait_readable(fd)
                except (trio.ClosedResourceError, trio.BrokenResourceError) as exc:
                    raise StreamClosed(str(exc)) from None
            except OSError as exc:
                raise StreamClosed(str(exc)) from None


__all__ = ["LineReader", "LineTooLong", "StreamClosed", "decode_line", "malformed_detail", "schema_detail"]
