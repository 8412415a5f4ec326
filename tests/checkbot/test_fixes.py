"""check-bot's fixes are chosen from the fault's structured Problem (no text read):
the decoder's problem for a line gives the fix a bot author needs for it."""

from __future__ import annotations

import pytest

from referee.checkbot.fixes import FIXES, fix_for
from referee.core.decode import decode_line
from referee.core.errors import BotMalformed, Problem, wrong_reply

LINES = [
    # a refused line, words its fix must hold
    (b'{"type":"ask","id":1,"target":"2","card":"A"}', ["send the field `target` as an integer", '"target": 2']),
    (b'{"type":"ask","id":1,"card":"A"}', ["include the field `target` (a seat number from turn.targets)"]),
    (b'{"type":"pass","id":1}', ["'pass' is not a message type", 'reply with "type": "ask"']),
    (b'{"type":5}', ['exactly one "type" key']),
    (b'{"type":"ask","type":"play","id":1}', ['exactly one "type" key']),
    (b"\xff", ["write UTF-8 only"]),
    (b"", ["write no blank lines"]),
    (b"debug x=3", ["send debug output to stderr"]),
    (b'{"a":' * 3000, ["one flat JSON object"]),
    (b"[1]", ["as docs/PROTOCOL.md describes"]),
    # a compound expected type gets the general rule (as before structured problems)
    (b'{"type":"ask","id":1,"target":1,"family":1}', ["as docs/PROTOCOL.md describes"]),
]


@pytest.mark.parametrize("line,words", LINES, ids=[str(i) for i in range(len(LINES))])
def test_the_fix_follows_the_problem(line: bytes, words: list[str]) -> None:
    with pytest.raises(BotMalformed) as info:
        decode_line(line, 1)
    fix = fix_for("malformed", info.value.problem, "ask")
    for w in words:
        assert w in fix, (w, fix)


def test_the_other_faults() -> None:
    _, problem = wrong_reply(2, "ask", "play")
    assert 'this turn had "decide": "ask", so reply {"type": "ask", ...}, not "play"' in fix_for("illegal", problem)
    assert fix_for("illegal", Problem("illegal")) == fix_for("illegal") == FIXES["illegal"]
    assert fix_for("malformed", Problem("too_long")).startswith("end every message with a newline")
    assert fix_for("malformed", None).startswith("write exactly one JSON protocol message")
    for fault in ("timeout", "crash", "stale"):
        assert fix_for(fault) == FIXES[fault]
    assert fix_for("weird") == "see docs/PROTOCOL.md"
