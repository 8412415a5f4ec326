"""``referee check-bot``: put a bot through everything a league will ask of it.

:func:`check_bot` runs, in order:

1. **handshake** - a raw ``hello``; the bot must answer with protocol 1 within
   the startup limit, and nothing but that line.
2. **probes** on the same process, with hand-made but valid situations from the
   real rules engine:
   * *quiet*: after ``start`` and ``event`` lines (with an unknown extra field,
     which bots must ignore) the bot writes nothing until its ``turn``;
   * *reply*: the answer to a ``turn`` is one legal reply echoing its ``id``;
   * *after error*: after an ``error`` message it answers the next turn, with
     the new id;
   * *current id*: after a timeout ``error`` and a new ``turn``, its last reply
     carries the new id (never a made-up or old one);
   * *bye*: it exits within the grace time after ``bye`` (stdin left open), and
     not only at end of input.
3. **games in session mode** - real games through the runtime's ``play_game``
   (every variant, presets and two custom ask variants, at several table sizes,
   the bot in a different seat each game, the other seats played by the SDK's
   instant random bot), all in one bot process.
4. **self-play** - in every ask variant checked, two copies of the bot at one
   table (with instant bots filling the variant's smallest table) and three
   copies: every hand must end by the rules. A hand that stalls (the stalemate
   rule: ``stall`` asks in a row moved no card) or is aborted (no end after
   :data:`SELF_PLAY_MAX_DECISIONS` decisions) fails: copies of one bot that
   ask each other the same questions in circles would wipe out games in a
   league.
5. **per-game mode** - a fresh process for each of a few games, closed with
   ``bye`` after each.

Every check gives a pass/fail line; every failure carries a fix in words a bot
author can act on. Errors: a bot that cannot be started at all fails the
handshake check (the report says why); the rest is then not run. Bad options
raise :class:`~referee.errors.UserError`. Cancellation (Ctrl-C) kills every
process this module started: each one runs in its own process group and is
reaped in a shielded scope.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import trio

from referee.errors import UserError
from referee.rules import IllegalAction, get_variant

PROTOCOL_VERSION = 1
ROOT = Path(__file__).resolve().parent.parent
INSTANT_BOT = [sys.executable, str(ROOT / "protocol" / "sdk.py")]

#: custom ask variants check-bot also plays (a bot must read the rules from ``start``)
CUSTOM_VARIANTS: list[dict[str, Any]] = [
    {"name": "checkbot-generations", "families": ["Ox", "Elk", "Yak", "Emu", "Gnu"],
     "members": ["I", "II", "III", "IV", "V", "VI"], "ask": "card", "miss": "next", "please": True,
     "stock": 6, "first": "dealer", "players": [2, 6]},
    {"name": "checkbot-tens", "families": ["10", "1", "2", "3", "4"], "members": ["a", "b", "c"],
     "ask": "family", "miss": "asked", "please": False, "stock": 3, "players": [2, 5]},
]
PRESETS = ["happy-families", "happy-families-jaques", "authors", "kwartet", "chickens"]

#: self-play: the hand a bot plays against copies of itself is aborted after this many decisions
#: (a long normal hand takes a few hundred; see docs/PERFORMANCE.md "Hand lengths")
SELF_PLAY_MAX_DECISIONS = 2000
#: self-play: the seed of every table (seed 1 is issue 10's endless kwartet game)
SELF_PLAY_SEED = 1
SELF_PLAY_FIX = ("remember misses; vary target or card: a seat that just said it lacks a card still lacks it "
                 "until a card moves to it, so do not ask it again; ask another seat or for another card "
                 "(the example bot in docs/WRITING-A-BOT.md section 1 shows how)")

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
_JSON_TYPE_WORDS = {"int": "an integer", "str": "a string", "bool": "true or false", "float": "a number",
                    "array": "an array", "object": "an object", "null": "null"}
_FIELD_HINTS = {"target": " (a seat number from turn.targets)", "id": " (the id of the turn you answer)",
                "card": " (a card name from turn.options)", "family": " (a family name from turn.options)",
                "please": " (true or false)", "protocol": " (1)", "name": " (your bot's name)"}
_EXPECTED_FIELD = re.compile(r"field `([^`]*)` expected (\S+), got (\S+)")
_MISSING_FIELD = re.compile(r"missing field `([^`]*)`")
_UNKNOWN_TYPE = re.compile(r"unknown message type (\S+)")
_WRONG_REPLY = re.compile(r"asks for a `(\w+)` reply, got `(\w+)`")


def _json_type(word: str) -> str:
    return _JSON_TYPE_WORDS.get(word, word)


def _decide_phrase(decide: str | None, choices: Sequence[str] = ()) -> str:
    if decide:
        return f'this turn had "decide": "{decide}", so reply with "type": "{decide}"'
    allowed = ", ".join(f'"{d}"' for d in (choices or _DECIDES))
    return f"the reply types are {allowed}: use the one the turn's \"decide\" names"


def fix_for(fault: str, detail: str, decide: str | None = None, choices: Sequence[str] = ()) -> str:
    """The fix for one problem, chosen from its precise ``detail`` (as
    :func:`referee.runtime.framing.decode_line` and the runtime word it).
    ``decide`` is the ``decide`` value of the turn being answered, when known;
    ``choices`` the values this variant's turns can have."""
    if fault == "malformed":
        m = _EXPECTED_FIELD.search(detail)
        if m:
            name, exp, got = m.groups()
            return (f"send the field `{name}` as {_json_type(exp)}{_FIELD_HINTS.get(name.split('.')[-1], '')}, "
                    f"not as {_json_type(got)}: copy values from the turn message with their JSON type"
                    + (f" (e.g. \"{name}\": 2, not \"{name}\": \"2\")" if exp == "int" else ""))
        m = _UNKNOWN_TYPE.search(detail)
        if m:
            return (f"{m.group(1)} is not a message type of the protocol: a bot sends only hello (once, "
                    f"first) and one reply per turn whose \"type\" is the turn's \"decide\" value; "
                    + _decide_phrase(decide, choices))
        m = _MISSING_FIELD.search(detail)
        if m:
            name = m.group(1)
            return (f"include the field `{name}`{_FIELD_HINTS.get(name.split('.')[-1], '')} in the message "
                    "(docs/PROTOCOL.md lists the fields of each reply type)")
        if "field `type`" in detail or "key `type`" in detail:
            return ('give every message exactly one "type" key whose value is a string: "hello", or the '
                    "turn's \"decide\" value in a reply")
        if "not valid UTF-8" in detail:
            return ("write UTF-8 only: encode the whole line as UTF-8 (Python: json.dumps(...) then "
                    ".encode(\"utf-8\"); C: never copy raw bytes into a JSON string; card and family names "
                    "come from the turn message, send them back unchanged)")
        if "is empty" in detail:
            return "write no blank lines: every line on stdout must be exactly one JSON message"
        if "longer than" in detail:
            return "end every message with a newline: one message per line, far below the line limit"
        if "too deeply" in detail:
            return "a message is one flat JSON object with the fields docs/PROTOCOL.md lists"
        if "not JSON" in detail or "not a message" in detail:
            return FIXES["malformed"]
        return "write exactly one JSON protocol message per line to stdout, as docs/PROTOCOL.md describes"
    if fault == "illegal":
        m = _WRONG_REPLY.search(detail)
        if m:
            want, got = m.groups()
            return (f"reply with the message type the turn's \"decide\" names: this turn had "
                    f"\"decide\": \"{want}\", so reply {{\"type\": \"{want}\", ...}}, not \"{got}\" "
                    "(ask turns get ask, play turns get play, take turns get take)")
        return FIXES["illegal"]
    return FIXES.get(fault, "see docs/PROTOCOL.md")


@dataclass
class Check:
    """One line of the checklist."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None
    skipped: bool = False    # not run (``detail`` says why); counts neither as passed nor as failed


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    bot_name: str | None = None
    bot_version: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Every check ran and passed."""
        return bool(self.checks) and all(c.ok for c in self.checks)

    def add(self, name: str, ok: bool, detail: str, fix: str | None = None) -> Check:
        check = Check(name, ok, detail, None if ok else fix)
        self.checks.append(check)
        return check

    def skip(self, name: str, why: str) -> Check:
        """Record a check that was not run (``why`` says why)."""
        check = Check(name, False, why, None, skipped=True)
        self.checks.append(check)
        return check

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.ok and not c.skipped]

    @property
    def skipped(self) -> list[Check]:
        return [c for c in self.checks if c.skipped]

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "bot": self.bot_name, "version": self.bot_version, "seconds": round(self.seconds, 2),
                "checks": [c.__dict__ for c in self.checks]}


# --------------------------------------------------------------------------
# a raw connection for the probes


class _ProbeFailure(Exception):
    def __init__(self, detail: str, fix: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.fix = fix


class RawBot:
    """A bot process driven line by line (no session, no handshake), for the probes:
    a :class:`referee.runtime.process.BotProcess` (the league's process type:
    the same sandbox, stderr drain and group kill) read with probe timeouts.

    A line longer than ``max_line`` fails the probe. :meth:`kill` (shielded)
    SIGKILLs the process group and reaps the process.
    """

    def __init__(self, proc: Any) -> None:
        self.proc = proc            # referee.runtime.process.BotProcess
        self.eof = False

    @property
    def lineno(self) -> int:
        return int(self.proc.reader.lineno)

    @classmethod
    async def open(cls, command: str | list[str], cwd: str | None, nursery: trio.Nursery,
                   name: str = "candidate") -> "RawBot":
        """Start the process in the same sandbox a league uses (raises
        :class:`_ProbeFailure` if it cannot be started; its fix follows the
        start error's ``reason``)."""
        from referee.runtime import BotSpec, BotStartError
        from referee.runtime.process import BotProcess

        # probe_leftovers: the sandbox reports the processes the bot leaves behind when it exits
        try:
            proc = await BotProcess.spawn(BotSpec(name=name, command=command, cwd=cwd), nursery,
                                          probe_leftovers=True)
        except BotStartError as exc:
            raise _ProbeFailure(exc.detail, _START_FIXES.get(exc.reason, "check the command")) from None
        return cls(proc)

    def stderr_tail(self) -> str:
        return str(self.proc.stderr_tail()).strip()[-400:]

    async def send(self, msg: dict[str, Any]) -> None:
        """Write one message line. Raises :class:`_ProbeFailure` if the bot's stdin is closed."""
        try:
            await self.proc.send_bytes(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise _ProbeFailure(f"the bot closed its stdin (exited?) before the referee's {msg.get('type')!r} message"
                                + self._stderr_hint(), FIXES["crash"]) from None

    async def read_line(self, timeout_s: float) -> bytes | None:
        """The next stdout line (without the newline), or None on timeout.
        Raises :class:`_ProbeFailure` at end of output or for a line too long."""
        from referee.runtime.framing import LineTooLong, StreamClosed

        with trio.move_on_after(timeout_s):
            try:
                return bytes(await self.proc.reader.read_line())
            except LineTooLong as exc:
                raise _ProbeFailure(f"line {exc.lineno} is longer than {exc.limit} bytes",
                                    "end every message with a newline, one message per line") from None
            except StreamClosed:
                self.eof = True
                raise _ProbeFailure("the bot closed stdout (exited?)" + self._stderr_hint(), FIXES["crash"]) from None
        return None

    def _stderr_hint(self) -> str:
        tail = self.stderr_tail()
        return f"; its stderr ends: {tail[-300:]!r}" if tail else ""

    async def read_message(self, timeout_s: float, what: str, decide: str | None = None) -> dict[str, Any]:
        """Read and decode one message; failures name the line and the fix
        (``decide``: the ``decide`` of the turn being answered, if any)."""
        line = await self.read_line(timeout_s)
        if line is None:
            raise _ProbeFailure(f"no {what} within {int(timeout_s * 1000)} ms" + self._stderr_hint(),
                                "answer at once and flush stdout after every line (Python: print(..., flush=True) "
                                "or the SDK; C: fflush(stdout); Node: process.stdout.write)")
        return decode_probe_line(line, self.lineno, decide)

    async def wait_exit(self, timeout_s: float) -> int | None:
        rc: int | None = await self.proc.wait_exit(timeout_s)
        return rc

    async def close_stdin(self) -> None:
        await self.proc.close_stdin()

    async def kill(self) -> None:
        await self.proc.kill()


def decode_probe_line(line: bytes, lineno: int, decide: str | None = None) -> dict[str, Any]:
    """Decode one bot line; :class:`_ProbeFailure` says why it is not a message,
    in the same words a game uses (:func:`referee.runtime.framing.decode_line`).
    ``decide``: the ``decide`` of the turn being answered, if any (for the fix)."""
    from referee.core.errors import BotMalformed
    from referee.runtime.framing import decode_line

    try:
        decode_line(line, lineno)
    except BotMalformed as exc:
        detail = exc.detail
        raise _ProbeFailure(detail, fix_for("malformed", detail, decide)) from None
    try:
        msg = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):  # msgspec accepted it: should not happen
        shown = line[:60].decode("utf-8", "replace")
        raise _ProbeFailure(f"line {lineno} is not JSON: {shown!r}", FIXES["malformed"]) from None
    if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
        raise _ProbeFailure(f"line {lineno} is JSON but not a message (an object with a \"type\"): "
                            f"{line[:60].decode('utf-8', 'replace')!r}", FIXES["malformed"])
    return msg


class _Act:
    def __init__(self, d: dict[str, Any]) -> None:
        self.target = d.get("target")
        self.card = d.get("card")
        self.family = d.get("family")
        self.please = d.get("please", False)


def _start_msg(game_id: str, rules: Any, game: Any, seat: int, n: int) -> dict[str, Any]:
    return {"type": "start", "game": game_id, "variant": rules.name, "rules": rules.to_wire(n), "seat": seat,
            "seats": [f"checkbot-{i}" if i != seat else "you" for i in range(n)],
            "dealer": getattr(game, "dealer", 0), "hand": game.hand(seat),
            "clock": {"move_ms": 1000, "bank_ms": 60000}}


def _turn_msg(game_id: str, game: Any, seat: int, turn_id: int) -> dict[str, Any]:
    return {"type": "turn", "game": game_id, "id": turn_id, "decide": game.decision(),
            "clock": {"left_ms": 60000, "move_ms": 1000}, **game.view(seat)}


def _check_reply(msg: dict[str, Any], turn: dict[str, Any], game: Any, seat: int) -> None:
    """Raise :class:`_ProbeFailure` unless ``msg`` is a legal reply to ``turn``."""
    if msg.get("type") != turn["decide"]:
        detail = f"turn {turn['id']} asks for a `{turn['decide']}` reply, got `{msg.get('type')}`"
        raise _ProbeFailure(detail, fix_for("illegal", detail))
    if msg.get("id") != turn["id"]:
        raise _ProbeFailure(f"turn id {turn['id']} was answered with id {msg.get('id')!r}", FIXES["stale"])
    try:
        game.apply(seat, _Act(msg))
    except IllegalAction as exc:
        raise _ProbeFailure(f"illegal reply {json.dumps(msg)}: {exc.reason}", FIXES["illegal"]) from None
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise _ProbeFailure(f"unusable reply {json.dumps(msg)}: {exc}", FIXES["illegal"]) from None


# --------------------------------------------------------------------------
# the checks


async def _handshake(bot: RawBot, report: Report, startup_s: float, name: str) -> bool:
    try:
        await bot.send({"type": "hello", "protocol": PROTOCOL_VERSION, "name": name})
        t0 = time.monotonic()
        msg = await bot.read_message(startup_s, "hello reply")
        ms = (time.monotonic() - t0) * 1000
    except _ProbeFailure as exc:
        rc = await bot.wait_exit(1.0)
        if rc is None:
            report.add("handshake", False, exc.detail, exc.fix)
        else:
            tail = bot.stderr_tail()
            report.add("handshake", False,
                       f"the bot exited (status {rc}) before answering hello"
                       + (f"; its stderr ends: {tail[-300:]!r}" if tail else " and wrote nothing to stderr"),
                       "run the command by hand to see what goes wrong (a wrong path or a missing interpreter "
                       "is common); a bot must keep running, answer hello and then read stdin until bye")
        return False
    if msg.get("type") != "hello":
        report.add("handshake", False, f"the first line was a {msg.get('type')!r} message, not a hello",
                   'answer {"type":"hello","protocol":1,...} with {"type":"hello","protocol":1,"name":"YourBot"}')
        return False
    if msg.get("protocol") != PROTOCOL_VERSION:
        report.add("handshake", False,
                   f"the bot speaks protocol version {msg.get('protocol')!r}; this referee speaks protocol "
                   f"version {PROTOCOL_VERSION}",
                   f'reply "protocol": {PROTOCOL_VERSION} in your hello (and follow docs/PROTOCOL.md)')
        return False
    name = msg.get("name")
    if not isinstance(name, str) or not name:
        report.add("handshake", False, "the hello reply has no \"name\"",
                   'add "name": "YourBot" to your hello reply')
        return False
    report.bot_name = name
    report.bot_version = msg.get("version") if isinstance(msg.get("version"), str) else None
    version = f" {report.bot_version}" if report.bot_version else ""
    report.add("handshake", True, f"hello from {name!r}{version}, protocol {PROTOCOL_VERSION}, in {ms:.0f} ms")
    return True


#: the probe checks, in order (a probe that cannot run is reported as skipped, with the reason)
PROBES = ("probe: quiet until its turn", "probe: legal reply with the turn's id", "probe: keeps going after an error",
          "probe: answers only with the current id", "probe: exits on bye")
_ERROR_TEXT = "check-bot probe: pretend your reply was illegal; keep going"
_LEFTOVER_FIX = ("leave nothing running when you exit: wait for (or kill) every child process first, and never "
                 "daemonize (double fork, setsid); the league's sandbox kills whatever a bot leaves behind")
_MISHANDLED_FIX = ("an error message needs no answer: log it to stderr (never stdout) and keep reading stdin; "
                   "the next turn comes as usual")


def _is_gone(bot: RawBot) -> bool:
    return bot.eof or bot.proc.exited()


async def _drain(bot: RawBot) -> None:
    """Skip leftover lines of a failed probe (until 0.1 s of quiet)."""
    try:
        while await bot.read_line(0.1) is not None:
            pass
    except _ProbeFailure:
        pass


class _Mishandled(Exception):
    """The bot mishandled the probe's error message (as opposed to misbehaving on its own).
    ``silent``: it only went quiet (a later probe may show the error message was not the cause)."""

    def __init__(self, detail: str, fix: str = _MISHANDLED_FIX, silent: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.fix = fix
        self.silent = silent


async def _exited_after_error(bot: RawBot, when: str) -> _Mishandled:
    rc = await bot.wait_exit(1.0)
    tail = bot.stderr_tail()
    status = f" (status {rc})" if rc is not None else ""
    return _Mishandled(f"the bot exited{status} {when}" + (f"; its stderr ends: {tail[-300:]!r}" if tail else ""),
                       "an error message needs no answer and is no reason to stop: log it to stderr and keep "
                       "reading stdin until bye")


async def _after_error(bot: RawBot, report: Report, legal: Check, turn2: dict[str, Any], probe_game: Any,
                       seat: int, move_s: float) -> bool:
    """The "keeps going after an error" probe. Blames error handling only for
    what the error message caused: output written in answer to it (before the
    next turn was sent, or an extra reply with the error's id followed by the
    real reply), the error text echoed on stdout, exiting or going silent. A
    reply to the next turn that is wrong in itself is the bot's own problem: it
    is reported (with its own fix) under the legal-reply probe. Returns True
    when the only sign of trouble was silence (no reply to the next turn)."""
    name = PROBES[2]
    try:
        try:
            await bot.send({"type": "error", "game": turn2["game"], "id": 1, "fault": "illegal",
                            "detail": _ERROR_TEXT})
            # anything written before the next turn exists answers the error message
            early = await bot.read_line(min(move_s, 0.3))
        except _ProbeFailure:
            raise await _exited_after_error(bot, "after an error message") from None
        if early is not None:
            raise _Mishandled(f"the bot answered the error message (before any new turn) with line {bot.lineno}: "
                              f"{early[:80].decode('utf-8', 'replace')!r}")
        try:
            await bot.send(turn2)
            line = await bot.read_line(move_s)
        except _ProbeFailure:
            if not bot.proc.exited() and not bot.eof:
                raise
            # it read the error message and went on; it died on the new turn: its own crash
            rc = await bot.wait_exit(1.0)
            tail = bot.stderr_tail()
            raise _ProbeFailure(f"the bot exited (status {rc}) on turn id 2 (it had read an error message "
                                "before, without trouble)" + (f"; its stderr ends: {tail[-300:]!r}" if tail else ""),
                                FIXES["crash"]) from None
        if line is None:
            raise _Mishandled(f"no reply to turn id 2 within {int(move_s * 1000)} ms after an error message"
                              + bot._stderr_hint(),
                              _MISHANDLED_FIX + "; if the error message is not what stopped the bot, answer every "
                              "turn within move_ms and flush stdout after every line", silent=True)
        if _ERROR_TEXT.encode() in line or b'"type":"error"' in line.replace(b" ", b""):
            raise _Mishandled(f"the bot wrote the error message back to stdout (line {bot.lineno}): "
                              f"{line[:80].decode('utf-8', 'replace')!r}")
        msg = decode_probe_line(line, bot.lineno, turn2["decide"])
        if msg.get("id") == 1 and msg.get("type") in _DECIDES and legal.ok:
            # an extra reply with the error's id, then the real one: it answered the error message
            try:
                follow = await bot.read_line(min(move_s, 0.3))
            except _ProbeFailure:
                follow = None
            if follow is not None and b'"id":2' in follow.replace(b" ", b""):
                raise _Mishandled(f"the bot answered the error message (id 1) with line {bot.lineno - 1}: "
                                  f"{line[:80].decode('utf-8', 'replace')!r}, then turn id 2")
        _check_reply(msg, turn2, probe_game, seat)
        report.add(name, True, "answered the next turn after an error message")
    except _Mishandled as exc:
        report.add(name, False, exc.detail, exc.fix)
        return exc.silent
    except _ProbeFailure as exc:
        # its own mistake on turn 2: error handling is fine, the reply is not
        report.add(name, True, "read the error message without answering it and went on to turn id 2 (its reply "
                               f"to that turn has a problem of its own: see {legal.name!r})")
        if legal.ok:
            legal.ok = False
            legal.detail = f"turn id 1 was answered correctly, but turn id 2 was not: {exc.detail}"
            legal.fix = exc.fix
    return False


async def _probes(bot: RawBot, report: Report, move_s: float, grace_s: float) -> None:
    skip_reason = ""
    try:
        skip_reason = await _run_probes(bot, report, move_s, grace_s)
    finally:
        done = {c.name for c in report.checks}
        for name in PROBES:
            if name not in done:
                report.skip(name, skip_reason or "not run: an earlier probe was interrupted")


async def _run_probes(bot: RawBot, report: Report, move_s: float, grace_s: float) -> str:
    """Run the probes in order; return why the ones not run were skipped ("" if all ran)."""
    def gone() -> str:
        if _is_gone(bot):
            return "not run: the bot is no longer running (see the failure above)"
        return ""

    async def drain_after_failure() -> None:
        if not all(c.ok for c in report.checks):
            await _drain(bot)

    rules = get_variant("kwartet")
    game = rules.new_game(4, seed=20240601)
    seat = game.pending()[0]
    gid = "checkbot-probe"
    # quiet: start + events (with a field from the future) + a turn: the first line must be the reply
    try:
        await bot.send(_start_msg(gid, rules, game, seat, 4))
        for seq, ev in enumerate(game.initial_events()):
            await bot.send({"type": "event", "game": gid, "seq": seq, **ev, "x_future_field": "ignore me"})
        turn = _turn_msg(gid, game, seat, 1)
        turn["x_future_field"] = {"ignore": ["me"]}
        await bot.send(turn)
        msg = await bot.read_message(move_s, "reply to turn id 1", turn["decide"])
        if msg.get("type") != "ask":
            # something came before the reply
            raise _ProbeFailure(f"the bot wrote {json.dumps(msg)[:80]} where the reply to turn id 1 was expected",
                                "write nothing but the hello reply and one reply per turn; start, event and end "
                                "messages get no answer (and ignore fields you do not know)")
        report.add(PROBES[0], True, "no output after start and events; unknown fields ignored")
    except _ProbeFailure as exc:
        report.add(PROBES[0], False, exc.detail, exc.fix)
        return gone() or ("not run: the bot's first reply went wrong (see above), so its later lines cannot be "
                          "matched to the probes' turns; fix the failure above first")
    # reply: legal, echoes the id
    try:
        probe_game = rules.new_game(4, seed=20240601)
        _check_reply(msg, turn, probe_game, seat)
        legal = report.add(PROBES[1], True, f"answered turn id 1 with {json.dumps(msg)}")
    except _ProbeFailure as exc:
        legal = report.add(PROBES[1], False, exc.detail, exc.fix)
    # after an error: the next turn (a new id, same situation) is answered
    if gone():
        return gone()
    await drain_after_failure()
    went_silent = await _after_error(bot, report, legal, _turn_msg(gid, game, seat, 2),
                                     rules.new_game(4, seed=20240601), seat, move_s)
    # current id: a timeout error, then a new turn: the last reply must carry the new id
    if gone():
        return gone()
    await drain_after_failure()
    try:
        turn3 = _turn_msg(gid, game, seat, 3)
        await bot.send(turn3)
        await bot.send({"type": "error", "game": gid, "id": 3, "fault": "timeout",
                        "detail": "check-bot probe: pretend your answer to turn 3 came too late"})
        turn4 = _turn_msg(gid, game, seat, 4)
        await bot.send(turn4)
        ids = []
        while 4 not in ids:
            m = await bot.read_message(move_s, "reply to turn id 4", "ask")
            ids.append(m.get("id"))
            if m.get("id") not in (3, 4) or len(ids) > 2:
                raise _ProbeFailure(f"turns 3 and 4 were answered with ids {ids}", FIXES["stale"])
        _check_reply(m, turn4, rules.new_game(4, seed=20240601), seat)
        extra = await bot.read_line(0.1)
        if extra is not None:
            raise _ProbeFailure(f"an extra line after the reply to turn 4: {extra[:80]!r}",
                                "answer each turn exactly once")
        report.add(PROBES[3], True, f"replies carried ids {ids} (the turn each one answers)")
        after = next(c for c in report.checks if c.name == PROBES[2])
        if went_silent and not after.ok:
            # it answered turn 4 after another error message: the error message did not stop it
            after.ok, after.fix = True, None
            after.detail = (f"answered turn id 4 after an error message (turn id 2 got no reply: not because "
                            f"of the error message, see {legal.name!r})")
            if legal.ok:
                legal.ok = False
                legal.detail = (f"turn id 1 was answered correctly, but turn id 2 got no reply within "
                                f"{int(move_s * 1000)} ms (the bot answered later turns, so it skipped this one)")
                legal.fix = FIXES["timeout"] + "; answer every turn, exactly once"
    except _ProbeFailure as exc:
        report.add(PROBES[3], False, exc.detail, exc.fix)
    # end: no reply expected; then bye with stdin left open
    if gone():
        return gone()
    await drain_after_failure()
    try:
        await bot.send({"type": "end", "game": gid, "scores": [0, 0, 0, 0], "ranks": [1, 1, 1, 1],
                        "reason": "aborted", "detail": "check-bot probe"})
        extra = await bot.read_line(0.1)
        if extra is not None:
            raise _ProbeFailure(f"the bot answered an end message with {extra[:80]!r}",
                                "end (like start and event) gets no answer")
        await bot.send({"type": "bye"})
    except _ProbeFailure as exc:
        report.add(PROBES[4], False, exc.detail, exc.fix)
        return ""
    t0 = time.monotonic()
    rc = await bot.wait_exit(grace_s)
    if rc is not None:
        exited = f"exited {1000 * (time.monotonic() - t0):.0f} ms after bye (status {rc})"
        left = bot.proc.leftovers()
        if left:
            report.add(PROBES[4], False, f"{exited}, but left {plural(len(left), 'process', 'processes')} running "
                       f"(PID COMMAND in its sandbox: {'; '.join(left[:5])})", _LEFTOVER_FIX)
        else:
            report.add(PROBES[4], True, exited)
        return ""
    await bot.close_stdin()
    rc = await bot.wait_exit(grace_s)
    fix = ('exit as soon as you read {"type":"bye"} (and also at end of input); the referee kills a bot '
           f"that is still running {int(grace_s * 1000)} ms after bye")
    if rc is not None:
        report.add(PROBES[4], False,
                   f"still running {int(grace_s * 1000)} ms after bye; it exited only when stdin was closed", fix)
    else:
        report.add(PROBES[4], False, f"still running {int(grace_s * 1000)} ms after bye, and after stdin was closed",
                   fix)
    return ""


def _table_sizes(rules: Any) -> list[int]:
    lo, hi = rules.min_players, rules.max_players
    return sorted({lo, max(lo, min(hi, 4)), hi})


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 game``, ``2 games`` (``words``: an irregular plural)."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def _turns_sent(log_dir: Path | None, game_id: str, seat: int) -> dict[int, str]:
    """The ``decide`` of every turn the game log shows sent to ``seat``, by turn id
    ({} without a log)."""
    if log_dir is None:
        return {}
    decides: dict[int, str] = {}
    try:
        with open(Path(log_dir) / f"{game_id}.jsonl", "rb") as f:
            for raw in f:
                if b'"out"' not in raw or b'"turn"' not in raw:
                    continue
                try:
                    rec = json.loads(raw)
                except ValueError:
                    continue
                if rec.get("to") != seat:
                    continue
                for m in rec.get("out") or []:
                    if isinstance(m, dict) and m.get("type") == "turn" and isinstance(m.get("id"), int):
                        decides[m["id"]] = str(m.get("decide"))
    except OSError:
        return {}
    return decides


def _describe_faults(faults: Sequence[Any], seat: int, tail: str,
                     decides: dict[int, str] | None = None) -> tuple[str, str]:
    """The first fault of ``seat`` (the cause; stale replies after a malformed
    or timed-out reply are its knock-on effects and said to be) and its fix."""
    decides = decides or {}
    mine = [f for f in faults if f.seat == seat]
    first = mine[0]
    detail = f"{first.fault}: {first.detail}"
    rest = mine[1:]
    if rest:
        stale = [f for f in rest if f.fault == "stale"]
        if first.fault in ("malformed", "timeout") and len(stale) == len(rest):
            detail += (f" (then {plural(len(stale), 'stale reply', 'stale replies')}: knock-on effects of that "
                       "first problem, which go away with it)")
        else:
            detail += f" (+{plural(len(rest), 'more fault')})"
    fix = fix_for(first.fault, first.detail, decides.get(first.decision_id) if first.decision_id is not None
                  else None, sorted(set(decides.values())))
    if first.fault == "crash" and tail and "stderr" not in detail:
        detail += f"; its stderr ends: {tail.strip()[-300:]!r}"
    return detail, fix


async def _games(command: list[str] | str, name: str, cwd: str | None, report: Report, variants: list[Any],
                 move_ms: int, startup_ms: int, grace_ms: int, log_dir: Path | None,
                 progress: Callable[[str], None]) -> None:
    from referee.runtime import BotSession, BotSpec, ClockSpec, GameSpec, play_game, start_bots
    from referee.core.errors import BotError

    clock = ClockSpec(move_ms=move_ms, startup_ms=startup_ms, grace_ms=grace_ms)
    spec = BotSpec(name=name, command=command, cwd=cwd)
    plans = []
    for v in variants:
        rules = get_variant(v)
        plans.append((rules, _table_sizes(rules)))
    max_seats = max(max(sizes) for _, sizes in plans)
    async with trio.open_nursery() as nursery:
        instants: list[Any] = []
        try:
            instants = await start_bots([BotSpec(name=f"instant-{i}", command=[*INSTANT_BOT, str(i)])
                                         for i in range(max_seats - 1)], clock, nursery)
            cand: Any = None
            game_no = 0
            for rules, sizes in plans:
                played, problems, decisions = 0, [], 0
                for n in sizes:
                    seat = game_no % n
                    game_no += 1
                    if cand is None or not cand.alive:
                        if cand is not None:
                            await cand.close()
                        try:
                            cand = await BotSession.start(spec, clock, nursery)
                        except BotError as exc:
                            problems.append((f"could not start the bot: {exc}", FIXES["crash"]))
                            cand = None
                            break
                    bots = list(instants[: n - 1])
                    bots.insert(seat, cand)
                    gspec = GameSpec(game_id=f"checkbot-{game_no:03d}", rules=rules, players=n,
                                     seed=1000 + game_no, clock=clock)
                    progress(f"{rules.name}: {n} seats, seat {seat}")
                    result = await play_game(gspec, bots, log_dir)
                    played += 1
                    decisions += result.think_ms[seat].count
                    if any(f.seat == seat for f in result.faults):
                        detail, fix = _describe_faults(result.faults, seat, cand.stderr_tail(),
                                                       _turns_sent(log_dir, gspec.game_id, seat))
                        problems.append((f"{n} seats, seat {seat}: {detail}", fix))
                        # its output may be out of step now (a reply still unread): the next game gets a
                        # fresh process, so one mistake is not reported again as stale ids in later games
                        await cand.close()
                        cand = None
                    # an instant bot never faults; restart one if it died anyway
                    for i, b in enumerate(instants):
                        if not b.alive:
                            await b.close()
                            instants[i] = await BotSession.start(
                                BotSpec(name=f"instant-{i}", command=[*INSTANT_BOT, str(i)]), clock, nursery)
                label = f"game: {rules.name}"
                if problems:
                    more = f" (and {plural(len(problems) - 1, 'more game')})" if len(problems) > 1 else ""
                    report.add(label, False, problems[0][0] + more, problems[0][1])
                else:
                    report.add(label, True, f"{plural(played, 'game')} at {', '.join(map(str, sizes))} seats, "
                                            f"{plural(decisions, 'decision')}, no faults (session mode)")
            if cand is not None:
                await cand.close()
            await _self_play(spec, clock, [rules for rules, _ in plans], instants, nursery, report, log_dir,
                             progress)
            # per-game mode: a fresh process per game
            problems = []
            per_game = [get_variant("kwartet"), get_variant("authors"), get_variant("chickens")]
            for k, rules in enumerate(per_game):
                n = rules.min_players
                seat = k % n
                progress(f"per-game mode: {rules.name}")
                try:
                    fresh = await BotSession.start(spec, clock, nursery)
                except BotError as exc:
                    problems.append((f"could not start the bot: {exc}", FIXES["crash"]))
                    break
                bots = list(instants[: n - 1])
                bots.insert(seat, fresh)
                result = await play_game(GameSpec(game_id=f"checkbot-fresh-{k}", rules=rules, players=n,
                                                  seed=77 + k, clock=clock), bots, log_dir)
                if any(f.seat == seat for f in result.faults):
                    detail, fix = _describe_faults(result.faults, seat, fresh.stderr_tail(),
                                                   _turns_sent(log_dir, f"checkbot-fresh-{k}", seat))
                    problems.append((f"{rules.name}: {detail}", fix))
                await fresh.close()
            if problems:
                report.add("per-game mode", False, problems[0][0], problems[0][1])
            else:
                report.add("per-game mode", True, f"{plural(len(per_game), 'game')}, a fresh process for each")
        finally:
            with trio.CancelScope(shield=True):
                for b in instants:
                    await b.close()
            nursery.cancel_scope.cancel()


async def _self_play(spec: Any, clock: Any, variants: list[Any], instants: list[Any], nursery: trio.Nursery,
                     report: Report, log_dir: Path | None, progress: Callable[[str], None]) -> None:
    """The self-play check: per ask variant, two copies of the bot (instant bots
    fill the variant's smallest table) and three copies at one table, in session
    mode (a copy that faulted is restarted for the next table). Adds one check
    line, ``self-play`` (none when no ask variant is chosen; skipped when a game
    check failed). The copies are closed (shielded) on the way out, also on
    cancellation."""
    from dataclasses import replace

    from referee.runtime import BotSession, FaultPolicy, GameSpec, play_game
    from referee.core.errors import BotError

    ask_variants = [r for r in variants if r.kind == "ask"]
    name = "self-play"
    if not ask_variants:
        return  # chickens only: no asking in circles, nothing to check
    if any(c.name.startswith("game: ") and not c.ok for c in report.checks):
        report.skip(name, "not run: fix the failed games above first (self-play needs a bot that plays legal "
                          "games without faults)")
        return
    policy = FaultPolicy(max_decisions=SELF_PLAY_MAX_DECISIONS)
    problems: list[tuple[str, str]] = []
    tables: list[str] = []  # "kwartet x2": the tables played
    copies: list[Any] = []

    async def ensure(k: int) -> None:
        """``copies[:k]`` are running copies of the bot (raises BotError if one cannot start)."""
        for i in range(k):
            if i < len(copies) and copies[i].alive:
                continue
            if i < len(copies):
                await copies[i].close()
            fresh = await BotSession.start(replace(spec, name=f"{spec.name}-{i + 1}"), clock, nursery)
            if i < len(copies):
                copies[i] = fresh
            else:
                copies.append(fresh)

    try:
        for rules in ask_variants:
            for k in sorted({2, min(3, rules.max_players)}):
                n = max(k, rules.min_players)
                if n > rules.max_players or n - k > len(instants):
                    continue
                progress(f"self-play: {rules.name}, {k} copies")
                try:
                    await ensure(k)
                except BotError as exc:
                    problems.append((f"could not start a copy of the bot: {exc}", FIXES["crash"]))
                    return
                bots = [*copies[:k], *instants[: n - k]]
                gid = f"checkbot-self-{len(tables) + 1:02d}"
                tables.append(f"{rules.name} x{k}")
                result = await play_game(GameSpec(game_id=gid, rules=rules, players=n, seed=SELF_PLAY_SEED,
                                                  clock=clock, policy=policy), bots, log_dir)
                who = (f"{rules.name}, {k} copies" + (f" and {plural(n - k, 'instant bot')}" if n > k else "")
                       + f", seed {SELF_PLAY_SEED}")
                mine = [f for f in result.faults if f.seat < k]
                if mine:
                    seat = mine[0].seat
                    detail, fix = _describe_faults(result.faults, seat, bots[seat].stderr_tail(),
                                                   _turns_sent(log_dir, gid, seat))
                    problems.append((f"{who}: {detail}", fix))
                    for c in copies[:k]:  # perhaps out of step now: fresh copies for the next table
                        await c.close()
                elif result.reason == "stalled":
                    problems.append((f"{who}: the hand stalled: {rules.stall} asks in a row moved no card (the "
                                     "copies kept asking for cards they had just been told were not there); "
                                     f"scores {_scores(result.scores)}", SELF_PLAY_FIX))
                elif result.reason != "complete":
                    problems.append((f"{who}: the hand was aborted: no end after {SELF_PLAY_MAX_DECISIONS} "
                                     "decisions (the copies ask in circles, or hand the same cards back and "
                                     "forth)", SELF_PLAY_FIX))
    finally:
        with trio.CancelScope(shield=True):
            for c in copies:
                await c.close()
        if problems:
            more = f" (and {plural(len(problems) - 1, 'more table')})" if len(problems) > 1 else ""
            report.add(name, False, problems[0][0] + more, problems[0][1])
        elif tables:
            report.add(name, True, f"{plural(len(tables), 'table')} with 2 or 3 copies of the bot in "
                                   f"{plural(len(ask_variants), 'ask variant')}: every hand ended by the rules")


def _scores(scores: Sequence[float]) -> str:
    return "[" + ", ".join(f"{s:g}" for s in scores) + "]"


def parse_command(command: Sequence[str]) -> list[str] | str:
    """The bot command from the CLI: several words are an argv list; one word with
    spaces is a shell string. Raises :class:`UserError` when empty."""
    words = [w for w in command]
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise UserError("give the bot's command after --, e.g. referee check-bot -- python3 my_bot.py")
    if len(words) == 1 and " " in words[0].strip():
        return words[0]
    return words


async def check_bot(command: list[str] | str, *, name: str = "candidate", cwd: str | None = None,
                    move_ms: int = 1000, startup_ms: int = 10000, grace_ms: int = 500,
                    variants: Sequence[Any] | None = None, log_dir: Path | None = None,
                    progress: Callable[[str], None] = lambda s: None) -> Report:
    """Run every check on the bot started by ``command``; return the :class:`Report`.

    Never raises for a misbehaving bot (that is what the report is for);
    raises :class:`UserError` for a bad ``cwd`` or bad variants.
    """
    if cwd is not None and not os.path.isdir(cwd):
        raise UserError(f"--cwd {cwd!r} is not a directory")
    chosen = list(variants) if variants else [*PRESETS, *CUSTOM_VARIANTS]
    for v in chosen:
        get_variant(v)  # RulesError for an unknown name
    missing = missing_script(command, cwd)
    if missing is not None:
        raise UserError(missing)
    report = Report()
    t0 = time.monotonic()
    async with trio.open_nursery() as nursery:
        bot: RawBot | None = None
        try:
            progress("handshake")
            try:
                bot = await RawBot.open(command, cwd, nursery, name)
            except _ProbeFailure as exc:
                report.add("handshake", False, exc.detail, exc.fix)
            else:
                if await _handshake(bot, report, startup_ms / 1000, name):
                    progress("probes")
                    await _probes(bot, report, max(move_ms, 1000) / 1000, grace_ms / 1000)
        finally:
            if bot is not None:
                await bot.kill()
            nursery.cancel_scope.cancel()
    if report.bot_name is not None:
        await _games(command, name, cwd, report, chosen, move_ms, startup_ms, grace_ms, log_dir, progress)
    else:
        why = "not run until the handshake works (every other check needs a bot that answers hello)"
        for probe in PROBES:
            report.skip(probe, why)
        for v in chosen:
            report.skip(f"game: {get_variant(v).name}", why)
        report.skip("self-play", why)
        report.skip("per-game mode", why)
    report.seconds = time.monotonic() - t0
    return report


#: interpreters whose first non-option argument is the script they open, with
#: their options that take a value (the next word) and those that mean "no script file"
_INTERPRETERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "python": (frozenset({"-W", "-X", "--check-hash-based-pycs"}), frozenset({"-m", "-c", "-V", "--version", "-h",
                                                                               "--help"})),
    "node": (frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader", "--conditions", "-C",
                        "--env-file", "--input-type", "--stack-size", "--max-old-space-size", "--title"}),
             frozenset({"-e", "--eval", "-p", "--print", "-i", "--interactive", "-v", "--version", "-h", "--help"})),
    "ruby": (frozenset({"-r", "-I", "-C", "-E", "--encoding"}), frozenset({"-e", "-v", "--version", "-h", "--help"})),
    "perl": (frozenset({"-I", "-M", "-m"}), frozenset({"-e", "-E", "-v", "-V", "-h"})),
    "sh": (frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}), frozenset({"-c", "-s", "-i",
                                                                                       "--version", "--help"})),
}
_INTERPRETER_NAMES = re.compile(r"^(?:(python|pypy)[0-9.]*|(node|nodejs)|(ruby)[0-9.]*|(perl)[0-9.]*|"
                                r"(sh|bash|dash|zsh|ksh))$")
#: option letters that, inside a cluster of short options (perl -ne, bash -lc), mean "code, not a file"
_CLUSTER_CODE = {"ruby": "e", "perl": "eE", "sh": "c"}
#: suffixes of script files (an argument ending in one names a file to open)
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".rb", ".pl", ".sh", ".bash", ".php", ".lua", ".ts", ".jar")


def _interpreter(word: str) -> str | None:
    m = _INTERPRETER_NAMES.match(os.path.basename(word))
    if m is None:
        return None
    python, node, ruby, perl, shell = m.groups()
    return "python" if python else "node" if node else "ruby" if ruby else "perl" if perl else "sh"


def missing_script(command: list[str] | str, cwd: str | None) -> str | None:
    """A message (the path as the author typed it) if ``command`` names a script
    file that does not exist, else None. A script is the first non-option
    argument after a known interpreter (python, node, ruby, perl, sh/bash...),
    or any other non-option argument ending in a script suffix (.py, .js, ...).
    Paths are relative to ``cwd`` (the current directory if None). Shell strings
    (one word with spaces) are not looked into."""
    if isinstance(command, str) or not command:
        return None
    base = os.path.abspath(cwd) if cwd else os.getcwd()
    where = f"relative to --cwd {base}" if cwd else f"relative to {base}"
    candidates: list[str] = []
    kind = _interpreter(command[0])
    rest = list(command[1:])
    if kind is not None:
        takes_value, no_script = _INTERPRETERS[kind]
        i = 0
        while i < len(rest):
            word = rest[i]
            if word == "--":
                if i + 1 < len(rest):
                    candidates.append(rest[i + 1])
                break
            if word in no_script or (kind == "python" and word[:2] in ("-c", "-m")) or (
                    kind in _CLUSTER_CODE and word[:1] == "-" and word[1:2] != "-"
                    and any(ch in _CLUSTER_CODE[kind] for ch in word[1:])):
                break  # -c CODE, -m MODULE, -e CODE, perl -le, bash -lc...: no script file
            if word in takes_value:
                i += 2
                continue
            if word.startswith("-") or word.startswith("+"):
                i += 1
                continue
            candidates.append(word)
            break
    candidates += [w for w in rest if not w.startswith("-") and w.endswith(SCRIPT_SUFFIXES) and w not in candidates]
    for word in candidates:
        if word and not os.path.exists(os.path.join(base, os.path.expanduser(word))):
            return f"{word} not found ({where}): check the path to the bot's script"
    return None
