"""Fuzzing the bytes-to-message path: the protocol decoder and the runtime's
line reader get arbitrary bytes; nothing but recorded faults may come out.

* :func:`decode_line` returns a bot message or raises ``BotMalformed`` (a
  ``BotError``) - never anything else, whatever the bytes.
* :class:`LineReader` splits any byte stream, delivered in any chunking,
  exactly like ``bytes.split(b"\\n")`` except that lines over the limit become
  ``LineTooLong``, and its buffer never exceeds the limit (bounded memory).
* A real subprocess writing hypothesis-chosen bytes as its reply ends in a
  recorded fault or a legal move: see ``test_zoo_games.py::test_fuzz_bot_bytes``.
"""

from __future__ import annotations

import json

import msgspec
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.messages import BOT_DECODER, BotMessage
from referee.core.errors import BotError, BotMalformed
from referee.runtime.framing import LineReader, LineTooLong, StreamClosed, decode_line

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12,
)
field_names = st.sampled_from(["type", "id", "target", "card", "family", "please", "protocol", "name", "version"])
message_like = st.dictionaries(field_names, json_values, max_size=6).map(
    lambda d: d if "type" not in d or not isinstance(d["type"], str) else d
)
typed = st.builds(
    lambda t, d: {**d, "type": t},
    st.sampled_from(["hello", "ask", "play", "take", "bye", "turn", ""]),
    st.dictionaries(field_names, json_values, max_size=5),
)


def _check_decode(line: bytes) -> None:
    try:
        msg = decode_line(line, 7, bot="fuzz", seat=1, turn_id=3)
    except BotMalformed as exc:
        assert exc.fault == "malformed"
        assert exc.detail.startswith("line 7"), exc.detail
        assert len(exc.detail) < 2000, "the detail quotes a bounded part of the line"
        return
    assert isinstance(msg, BotMessage.__args__)  # type: ignore[attr-defined]


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_decode_arbitrary_bytes(data: bytes) -> None:
    _check_decode(data)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(json_values, message_like, typed))
def test_decode_arbitrary_json(value: object) -> None:
    line = json.dumps(value).encode()
    _check_decode(line)
    # the decoder agrees with msgspec's own verdict: accepted iff it validates
    try:
        BOT_DECODER.decode(line)
        ok = True
    except msgspec.DecodeError:
        ok = False
    try:
        decode_line(line, 1)
        assert ok
    except BotMalformed:
        assert not ok


@settings(max_examples=60)
@given(
    st.integers(1, 20000),
    st.sampled_from([(b'{"a":', b"}"), (b"[", b"]"), (b'{"a":[', b"]}")]),
    st.sampled_from([b'{"type":"ask","id":1,"target":0,"x":', b'{"type":"hello","protocol":1,"name":"n","v":', b""]),
)
def test_decode_deep_nesting(depth: int, brackets: tuple[bytes, bytes], prefix: bytes) -> None:
    """Deeply nested JSON (the decoder recurses into what it skips) is malformed, never a RecursionError."""
    open_, close = brackets
    _check_decode(prefix + open_ * depth + b"1" + close * depth + (b"}" if prefix else b""))


@settings(max_examples=100)
@given(st.binary(min_size=1, max_size=40), st.integers(0, 2))
def test_decode_long_garbage_detail_bounded(chunk: bytes, rep: int) -> None:
    _check_decode(chunk * (1000 * rep + 1))


class ChunkStream(trio.abc.ReceiveStream):
    """A ReceiveStream that delivers ``data`` in the given chunk sizes and
    records the largest request (to check the reader never over-asks)."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data = data
        self.sizes = sizes or [1]
        self.pos = 0
        self.i = 0

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.checkpoint()
        n = self.sizes[self.i % len(self.sizes)]
        self.i += 1
        if max_bytes is not None:
            n = min(n, max_bytes)
        out = self.data[self.pos : self.pos + n]
        self.pos += len(out)
        return out

    async def aclose(self) -> None:
        pass


def expected_lines(data: bytes, limit: int) -> list[bytes | None]:
    """What the reader must return: each line, or None for a too-long one."""
    parts = data.split(b"\n")
    tail = parts.pop()
    out: list[bytes | None] = [p if len(p) <= limit else None for p in parts]
    if tail:
        out.append(tail if len(tail) <= limit else None)
    return out


lines_strategy = st.lists(
    st.one_of(st.binary(max_size=20), st.binary(min_size=20, max_size=80), st.just(b"x" * 200)), max_size=12
)


@settings(max_examples=200, deadline=None)
@given(lines_strategy, st.booleans(), st.lists(st.integers(1, 70), min_size=1, max_size=5), st.integers(8, 40))
def test_line_reader_splits_exactly_and_stays_bounded(
    lines: list[bytes], final_newline: bool, sizes: list[int], limit: int
) -> None:
    data = b"\n".join(line.replace(b"\n", b"") for line in lines)
    if final_newline and data:
        data += b"\n"

    async def main() -> list[bytes | None]:
        reader = LineReader(ChunkStream(data, sizes), limit)
        got: list[bytes | None] = []
        while True:
            try:
                got.append(await reader.read_line())
            except LineTooLong as exc:
                assert exc.limit == limit and len(exc.head) <= 60
                got.append(None)
            except StreamClosed:
                return got
            finally:
                # bounded: one line plus at most one read chunk (64 KiB) of what follows a skipped line
                assert len(reader._buf) <= limit + 1 + 65536, "the reader buffered without bound"

    got = trio.run(main)
    assert got == expected_lines(data, limit)
    for line in got:
        if line is not None:
            _check_decode(line)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 8), st.sampled_from([4096, 65536, 100000]))
def test_line_reader_megabytes_without_newline(megs: int, chunk: int) -> None:
    """Megabytes without a newline: one LineTooLong, then the reader skips
    (bounded) and resynchronises on the next line."""
    data = b"z" * (megs << 18) + b'\n{"type":"play","id":1,"card":"ace"}\n'

    async def main() -> None:
        reader = LineReader(ChunkStream(data, [chunk]), 1024)
        try:
            await reader.read_line()
            raise AssertionError("expected LineTooLong")
        except LineTooLong:
            pass
        assert len(reader._buf) <= 1025
        line = await reader.read_line()
        assert isinstance(decode_line(line, reader.lineno), BotMessage.__args__)  # type: ignore[attr-defined]

    trio.run(main)


_ = BotError


# --------------------------------------------------------------------------
# a real bot process writing hypothesis-chosen bytes as its reply

_pieces = st.one_of(
    st.binary(max_size=64),
    st.sampled_from([b"\n", b"\r\n", b"\xff\xfe", b"{", b"}", b'"', b"\x00"]),
    st.builds(lambda v: json.dumps(v).encode() + b"\n", st.one_of(json_values, message_like, typed)),
    st.builds(lambda n: b"a" * n, st.integers(200, 5000)),
)


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_pieces, max_size=8).map(b"".join))
def test_fuzz_bot_bytes(data: bytes) -> None:
    """A bot answers its first turn with arbitrary bytes, then exits: the game
    completes, only that seat has faults, all of them protocol fault names,
    and nothing of the bot survives."""
    import tempfile
    from pathlib import Path

    from referee.rules import get_variant
    from referee.runtime import BotSession, BotSpec, ClockSpec, FaultPolicy, GameSpec, play_game

    from .conftest import assert_no_survivors, new_tag, zoo_command

    clock = ClockSpec(move_ms=300, startup_ms=8000, grace_ms=200)
    policy = FaultPolicy(max_line=256, retries=1)

    async def main() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            payload = Path(tmp) / "payload.hex"
            payload.write_text(data.hex())
            tag = new_tag("bytes")
            specs = [BotSpec(f"legal{i}", zoo_command("legal", new_tag("legal"))) for i in range(2)]
            specs.insert(1, BotSpec("bytes", zoo_command("bytes", tag, str(payload))))
            async with trio.open_nursery() as nursery:
                sessions = [await BotSession.start(s, clock, nursery, max_line=256) for s in specs]
                try:
                    result = await play_game(
                        GameSpec("fuzz", get_variant("kwartet"), 3, seed=9, clock=clock, policy=policy),
                        sessions,
                        Path(tmp),
                    )
                finally:
                    for s in sessions:
                        await s.close()
                nursery.cancel_scope.cancel()
            assert result.reason == "complete"
            assert {f.seat for f in result.faults} <= {1}
            assert {f.fault for f in result.faults} <= {"timeout", "crash", "malformed", "illegal", "stale"}
            await assert_no_survivors(tag)

    trio.run(main)
