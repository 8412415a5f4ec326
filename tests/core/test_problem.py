"""The structured :class:`Problem` of a refused line: one kind per reason, decided
where the detail is worded (so the two agree), carried by the error and by the
in-memory fault record, never written to a log."""

from __future__ import annotations

import msgspec
import pytest

from referee.core.decode import decode_line, malformed_detail, malformed_problem, schema_detail, schema_problem
from referee.core.errors import BotIllegal, BotMalformed, Problem, wrong_reply
from referee.core.spec import FaultRecord

CASES = [
    # line, problem, a fragment of the detail
    (b'{"type":"ask","id":1,"target":"2","card":"A"}', Problem("field_type", "target", "int", "str"), "`target`"),
    (b'{"type":"play","id":1,"card":1}', Problem("field_type", "card", "str", "int"), "expected str, got int"),
    (b'{"type":"ask","id":1,"target":1,"family":1}', Problem("field_type", "family", "str | null", "int"), "str |"),
    (b'{"type":"ask","id":1,"card":"A"}', Problem("missing_field", "target"), "missing field `target`"),
    (b'{"id":1}', Problem("missing_field", "type"), "missing field `type`"),
    (b'{"type":"pass","id":1}', Problem("unknown_type", "type", got="'pass'"), "unknown message type 'pass'"),
    (b'{"type":"foo bar"}', Problem("unknown_type", "type", got="'foo bar'"), "unknown message type 'foo bar'"),
    (b'{"type":5}', Problem("type_key", "type", "str", "int"), "must be a string"),
    (b'{"type":"ask","type":"play","id":1}', Problem("type_key", "type", got='"ask", "play"'), "appears 2 times"),
    (b"\xff\xfe", Problem("not_utf8"), "not valid UTF-8"),
    (b"", Problem("empty"), "is empty"),
    (b"   ", Problem("empty"), "is empty"),
    (b"debug x=3", Problem("not_json"), "is not JSON: 'debug x=3'"),
    (b'{"type":"ask",}', Problem("not_json"), "is not JSON"),
    (b"[1,2]", Problem("not_object", expected="object", got="array"), "expected a JSON object"),
    (b"5", Problem("not_object", expected="object", got="int"), "got int"),
    (b'{"a":' * 3000, Problem("too_deep"), "too deeply"),
]


@pytest.mark.parametrize("line,problem,fragment", CASES, ids=[f"{c[1].kind}-{i}" for i, c in enumerate(CASES)])
def test_decode_line_names_the_problem(line: bytes, problem: Problem, fragment: str) -> None:
    with pytest.raises(BotMalformed) as info:
        decode_line(line, 3, bot="b", seat=1, turn_id=2)
    exc = info.value
    assert exc.problem == problem, (exc.problem, exc.detail)
    assert fragment in exc.detail and exc.detail.startswith("line 3")


def test_detail_and_problem_come_from_one_place() -> None:
    for line, problem, _ in CASES:
        if problem.kind in ("not_utf8", "empty", "not_json"):
            assert malformed_problem(line, 7) == (malformed_detail(line, 7), problem)
    msg = "Expected `int`, got `str` - at `$.target`"
    assert schema_problem(4, msg) == (schema_detail(4, msg), Problem("field_type", "target", "int", "str"))
    assert schema_problem(4, "Object missing required field `id` - at `$.x`")[1] == Problem("missing_field", "x.id")
    assert schema_problem(4, "Invalid value 7 - at `$.card`")[1] == Problem("invalid_value", "card", got="7")
    assert schema_problem(4, "Expected `int` - at `$.seat`")[1] == Problem("field_type", "seat", "int")
    assert schema_problem(4, "something new") == ("line 4: something new", Problem("other"))


def test_wrong_reply_and_the_errors_carry_it() -> None:
    detail, problem = wrong_reply(5, "ask", "play")
    assert detail == "turn 5 asks for a `ask` reply, got `play`"
    assert problem == Problem("wrong_reply", expected="ask", got="play")
    err = BotIllegal("line 2: " + detail, bot="b", seat=0, turn_id=5, problem=problem)
    assert err.problem is problem and err.fault == "illegal"
    assert BotMalformed("x").problem is None


def test_the_fault_record_keeps_it_in_memory_only() -> None:
    plain = FaultRecord(0, "b", "illegal", "line 2: turn 5: no", 5, "g")
    rec = FaultRecord(0, "b", "illegal", "line 2: turn 5: no", 5, "g").with_problem(Problem("illegal"))
    assert rec.problem == Problem("illegal") and plain.problem is None
    # not a field: the log's and the ledger's forms, msgspec's encoding and equality do not see it
    assert "problem" not in rec.to_json() and rec == plain
    assert msgspec.to_builtins(rec) == msgspec.to_builtins(plain)
    back = msgspec.json.decode(msgspec.json.encode(rec), type=FaultRecord)
    assert back == plain and back.problem is None
