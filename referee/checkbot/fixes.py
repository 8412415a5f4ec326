"""check-bot's fixes: what to change, in words a bot author can act on, for each problem found.

A fix is chosen from the fault's kind and its structured
:class:`~referee.core.errors.Problem` (which field, what type was expected,
what came), never from the English of the detail."""

from __future__ import annotations

from collections.abc import Sequence

from referee.core.errors import Problem

FIXES = {
    "malformed": "write exactly one JSON protocol message per line to stdout and nothing else; send debug "
    "output to stderr (Python: print(..., file=sys.stderr); the SDK redirects print() for you)",
    "illegal": "answer with something from turn.options, to a seat in turn.targets; read the ask mode "
    "(card/family) and the politeness rule (please) from start.rules",
    "stale": "echo the id of the turn you are answering, and answer each turn exactly once",
    "timeout": "answer each turn within move_ms, and flush stdout after every line "
    "(Python: print(..., flush=True); C: fflush(stdout))",
    "crash": "the bot must not exit or close stdout before bye: read its stderr (shown above) for the "
    "reason, and keep reading stdin until bye or end of input",
}

#: the fix for a bot that cannot start, by :attr:`referee.runtime.BotStartError.reason`
_START_FIXES = {
    "not_found": "check the command and the working directory; a script needs its interpreter "
    "(python3 bot.py, node bot.js) or a #! line and chmod +x",
    "directory": "give the bot's program or script inside that folder (e.g. python3 DIR/bot.py)",
    "not_executable": "chmod +x the program, or run it through its interpreter",
    "no_interpreter": "add a #! line (e.g. #!/usr/bin/env python3), or run it through its interpreter",
}

#: what a turn's ``decide`` value may be answered with (the reply ``type`` is the ``decide`` value)
_DECIDES = ("ask", "play", "take")
_JSON_TYPE_WORDS = {
    "int": "an integer",
    "str": "a string",
    "bool": "true or false",
    "float": "a number",
    "array": "an array",
    "object": "an object",
    "null": "null",
}
_FIELD_HINTS = {
    "target": " (a seat number from turn.targets)",
    "id": " (the id of the turn you answer)",
    "card": " (a card name from turn.options)",
    "family": " (a family name from turn.options)",
    "please": " (true or false)",
    "protocol": " (1)",
    "name": " (your bot's name)",
}


def _json_type(word: str) -> str:
    return _JSON_TYPE_WORDS.get(word, word)


def _decide_phrase(decide: str | None, choices: Sequence[str] = ()) -> str:
    if decide:
        return f'this turn had "decide": "{decide}", so reply with "type": "{decide}"'
    allowed = ", ".join(f'"{d}"' for d in (choices or _DECIDES))
    return f'the reply types are {allowed}: use the one the turn\'s "decide" names'


def fix_for(fault: str, problem: Problem | None = None, decide: str | None = None, choices: Sequence[str] = ()) -> str:
    """The fix for one fault (``fault``: its kind), chosen from its structured
    ``problem`` (:attr:`referee.core.errors.BotError.problem`, or a
    :class:`~referee.core.spec.FaultRecord`'s; None when not known).
    ``decide`` is the ``decide`` value of the turn being answered, when known;
    ``choices`` the values this variant's turns can have."""
    if fault == "malformed":
        return _malformed_fix(problem, decide, choices)
    if fault == "illegal":
        if problem is not None and problem.kind == "wrong_reply":
            want, got = problem.expected, problem.got
            return (
                f'reply with the message type the turn\'s "decide" names: this turn had '
                f'"decide": "{want}", so reply {{"type": "{want}", ...}}, not "{got}" '
                "(ask turns get ask, play turns get play, take turns get take)"
            )
        return FIXES["illegal"]
    return FIXES.get(fault, "see docs/PROTOCOL.md")


def _field_hint(name: str) -> str:
    return _FIELD_HINTS.get(name.split(".")[-1], "")


def _simple(word: str | None) -> bool:
    """A single JSON type name (``int``), not a compound one (``int | null``)."""
    return bool(word) and not any(c.isspace() for c in word or "")


def _malformed_fix(problem: Problem | None, decide: str | None, choices: Sequence[str]) -> str:
    kind = problem.kind if problem is not None else "other"
    if (
        problem is not None
        and kind == "field_type"
        and problem.field
        and _simple(problem.expected)
        and _simple(problem.got)
    ):
        name, exp, got = problem.field, str(problem.expected), str(problem.got)
        return (
            f"send the field `{name}` as {_json_type(exp)}{_field_hint(name)}, "
            f"not as {_json_type(got)}: copy values from the turn message with their JSON type"
            + (f' (e.g. "{name}": 2, not "{name}": "2")' if exp == "int" else "")
        )
    if problem is not None and kind == "unknown_type":
        return (
            f"{problem.got} is not a message type of the protocol: a bot sends only hello (once, "
            f'first) and one reply per turn whose "type" is the turn\'s "decide" value; '
            + _decide_phrase(decide, choices)
        )
    if problem is not None and kind == "missing_field" and problem.field is not None:
        name = problem.field
        return (
            f"include the field `{name}`{_field_hint(name)} in the message "
            "(docs/PROTOCOL.md lists the fields of each reply type)"
        )
    if kind == "type_key":
        return (
            'give every message exactly one "type" key whose value is a string: "hello", or the '
            'turn\'s "decide" value in a reply'
        )
    if kind == "not_utf8":
        return (
            "write UTF-8 only: encode the whole line as UTF-8 (Python: json.dumps(...) then "
            '.encode("utf-8"); C: never copy raw bytes into a JSON string; card and family names '
            "come from the turn message, send them back unchanged)"
        )
    if kind == "empty":
        return "write no blank lines: every line on stdout must be exactly one JSON message"
    if kind == "too_long":
        return "end every message with a newline: one message per line, far below the line limit"
    if kind == "too_deep":
        return "a message is one flat JSON object with the fields docs/PROTOCOL.md lists"
    if kind == "not_json":
        return FIXES["malformed"]
    # field_type with a compound type, not_object, invalid_value, wrong_reply (a first line that is not
    # a hello), other: the general rule
    return "write exactly one JSON protocol message per line to stdout, as docs/PROTOCOL.md describes"
