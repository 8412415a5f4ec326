"""Protocol v1 messages: strict decoding with precise reasons, framing, schemas."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from protocol.messages import BOT_DECODER, ENCODER, REFEREE_DECODER, AskReply, BotHello, PlayReply
from protocol.schema import schemas
from referee.cli import main
from referee.core.errors import BotMalformed
from referee.runtime.framing import LineReader, LineTooLong, StreamClosed, decode_line


@pytest.mark.parametrize(
    "line,detail",
    [
        (b'{"type":"ask","id":1,"target":"x"}', "line 3: field `target` expected int, got str"),
        (b'{"type":"ask","target":1}', "line 3: missing field `id`"),
        (b'{"type":"pass","id":1}', "line 3: unknown message type 'pass'"),
        (b'{"id":1}', "line 3: missing field `type`"),
        (b"debug x=3", "line 3 is not JSON: 'debug x=3' - write debug output to stderr"),
        (b'{"type":"ask","id":1,"target":1,"card":"\xff"}', "line 3 is not valid UTF-8 (byte 0xff"),
        (b"[1,2]", "line 3: expected a JSON object"),
        (b'{"type":"play","id":true,"card":"ace"}', "line 3: field `id` expected int, got bool"),
        (b"", "line 3 is empty"),
    ],
)
def test_bad_lines_get_precise_reasons(line, detail):
    with pytest.raises(BotMalformed) as info:
        decode_line(line, 3, bot="b", seat=1)
    assert detail in info.value.detail
    assert "bot 'b' (seat 1): malformed" in str(info.value)


@pytest.mark.parametrize(
    "line,detail",
    [
        # msgspec: "Invalid value 'play' - at `$.type`" (the second key contradicts the first)
        (
            b'{"type":"ask","id":1,"target":1,"card":"A1","type":"play"}',
            'line 3: the key `type` appears 2 times ("ask", "play") - a message has exactly one "type" key',
        ),
        (b'{"id":1,"type":"pass","type":"ask"}', 'the key `type` appears 2 times ("pass", "ask")'),
        (b'{"type":"ask","type":5}', 'the key `type` appears 2 times ("ask", 5)'),
        # msgspec: "Expected `str` - at `$.type`" (no "got")
        (b'{"type":5}', "line 3: field `type` must be a string naming the message (hello, ask, play or take), got int"),
        (b'{"type":null,"id":1}', "must be a string naming the message (hello, ask, play or take), got null"),
        (b'{"type":1.5}', "got float"),
        (b'{"type":true}', "got bool"),
        (b'{"type":["ask"]}', "got array"),
        (b'{"type":{"ask":1}}', "got object"),
        (b'{"type":"zzz"}', "line 3: unknown message type 'zzz' (a bot sends hello, ask, play or take)"),
    ],
)
def test_bad_type_key_gets_a_precise_reason(line, detail):
    with pytest.raises(BotMalformed) as info:
        decode_line(line, 3, bot="b", seat=1)
    assert detail in info.value.detail
    assert "unknown message type 'play'" not in info.value.detail and "Expected `" not in info.value.detail


def test_an_equal_repeated_type_key_still_decodes():
    """The fast path is msgspec's: a repeated but equal `type` is accepted as before."""
    line = b'{"type":"play","id":1,"card":"A1","type":"play"}'
    assert decode_line(line, 1) == PlayReply(id=1, card="A1")


def test_unknown_extra_fields_are_ignored():
    msg = BOT_DECODER.decode(b'{"type":"ask","id":4,"target":2,"card":"QH","please":true,"why":"hunch"}')
    assert msg == AskReply(id=4, target=2, card="QH", please=True)
    assert BOT_DECODER.decode(b'{"type":"hello","protocol":1,"name":"x","version":"2"}') == BotHello(
        protocol=1, name="x", version="2"
    )


@given(st.sampled_from(["ask", "play", "take"]), st.integers(0, 2**31), st.text(max_size=20))
def test_replies_round_trip(kind, ident, card):
    data = {"type": kind, "id": ident, "card": card}
    if kind == "ask":
        data["target"] = 1
    msg = BOT_DECODER.decode(json.dumps(data).encode())
    assert msg.id == ident and msg.card == card
    assert json.loads(ENCODER.encode(msg))["type"] == kind


def test_referee_messages_decode_strictly():
    turn = {
        "type": "turn",
        "game": "g",
        "id": 1,
        "decide": "play",
        "hand": ["ace"],
        "counts": [1],
        "laid": [[]],
        "clock": {"left_ms": 5},
        "options": ["ace"],
    }
    assert REFEREE_DECODER.decode(json.dumps(turn).encode()).id == 1
    turn["decide"] = "dance"
    with pytest.raises(Exception, match="decide"):
        REFEREE_DECODER.decode(json.dumps(turn).encode())


def test_end_reasons_are_complete_stalled_and_aborted():
    from protocol.schema import schemas

    for reason in ("complete", "stalled", "aborted"):
        end = {"type": "end", "game": "g", "scores": [1, 0], "ranks": [1, 2], "reason": reason}
        assert REFEREE_DECODER.decode(json.dumps(end).encode()).reason == reason
    end["reason"] = "timeout"
    with pytest.raises(Exception, match="reason"):
        REFEREE_DECODER.decode(json.dumps(end).encode())
    reason = schemas()["referee-to-bot/end"]["$defs"]["End"]["properties"]["reason"]
    assert sorted(reason["enum"]) == ["aborted", "complete", "stalled"]


class _Chunks(trio.abc.ReceiveStream):
    """A receive stream that hands out the given chunks (no fd: the generic path)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)
        self.max_asked = 0

    async def receive_some(self, max_bytes=None):
        await trio.lowlevel.checkpoint()
        self.max_asked = max(self.max_asked, max_bytes or 0)
        if not self.chunks:
            return b""
        chunk = self.chunks.pop(0)
        if max_bytes is not None and len(chunk) > max_bytes:
            self.chunks.insert(0, chunk[max_bytes:])
            chunk = chunk[:max_bytes]
        return chunk

    async def aclose(self):
        pass


async def test_line_reader_splits_and_caps_without_buffering_more():
    stream = _Chunks([b'{"a":1}\n{"b"', b":2}\n", b"x" * 5000, b"x" * 5000, b"\nlast\n", b"tail"])
    reader = LineReader(stream, max_line=100)
    assert await reader.read_line() == b'{"a":1}'
    assert await reader.read_line() == b'{"b":2}'
    with pytest.raises(LineTooLong, match="line 3 is longer than 100 bytes"):
        await reader.read_line()
    assert len(reader._buf) <= 101
    assert await reader.read_line() == b"last"  # resynchronised after the long line
    assert reader.lineno == 4
    assert await reader.read_line() == b"tail"
    with pytest.raises(StreamClosed):
        await reader.read_line()


@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=8), st.integers(1, 17))
def test_line_reader_any_chunking(lines, size):
    data = b"".join(line + b"\n" for line in lines)
    chunks = [data[i : i + size] for i in range(0, len(data), size)]

    async def go():
        reader = LineReader(_Chunks(chunks), max_line=64)
        out = []
        while True:
            try:
                out.append(await reader.read_line())
            except StreamClosed:
                return out

    assert trio.run(go) == lines


def test_schema_command_writes_every_message(tmp_path, capsys):
    assert main(["schema", "--out", str(tmp_path)]) == 0
    names = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.json")}
    for name in (
        "referee-to-bot.schema.json",
        "bot-to-referee.schema.json",
        "events.schema.json",
        "referee-to-bot/turn.schema.json",
        "bot-to-referee/ask.schema.json",
        "events/fault.schema.json",
    ):
        assert name in names
    ask = json.loads((tmp_path / "bot-to-referee/ask.schema.json").read_text())
    props = ask["$defs"]["AskReply"]["properties"]
    assert props["target"] == {"type": "integer"} and "id" in ask["$defs"]["AskReply"]["required"]
    assert set(schemas()) >= {"events/deal", "events/reveal"}
    assert PlayReply  # the Struct the schema came from
