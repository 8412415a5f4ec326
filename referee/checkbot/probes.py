"""check-bot's probes: a raw bot process (the league's process type, no session) driven line by line
through hand-made but valid situations: the handshake, quiet until its turn, a legal reply, an error,
the current id, bye."""

from __future__ import annotations

import json
import time
from typing import Any

import msgspec
import trio

from protocol.encode import end_line, error_line, start_clock, start_line
from referee.core.errors import wrong_reply
from referee.rules import IllegalAction, get_variant

from .fixes import _DECIDES, _START_FIXES, FIXES, fix_for
from .report import Check, Report, plural

PROTOCOL_VERSION = 1
_ENCODER = msgspec.json.Encoder()

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

    def __init__(self, proc: Any, runtime: str | None = None) -> None:
        self.proc = proc  # referee.runtime.process.BotProcess
        self.eof = False
        self.runtime = runtime  # the runtime preset in use (--runtime), for the fixes
        self.seen: list[bytes] = []  # the last lines read from its stdout (what it wrote before dying)

    @property
    def lineno(self) -> int:
        return int(self.proc.reader.lineno)

    @classmethod
    async def open(
        cls,
        command: str | list[str],
        cwd: str | None,
        nursery: trio.Nursery,
        name: str = "candidate",
        *,
        limits: Any = None,
        env: dict[str, str] | None = None,
        runtime: str | None = None,
        data: tuple[str, ...] = (),
        max_line: int = 65536,
    ) -> RawBot:
        """Start the process in the same sandbox a league uses, with ``limits``
        and ``env`` (:class:`~referee.runtime.BotSpec`'s; ``runtime``: the preset
        they came from, for the fixes). Raises :class:`_ProbeFailure` if it cannot
        be started; its fix follows the start error's ``reason``."""
        from referee.runtime import BotSpec, BotStartError
        from referee.runtime.process import BotProcess

        spec = BotSpec(name=name, command=command, cwd=cwd, env=env, limits=limits, data=data)
        # probe_leftovers: the sandbox reports the processes the bot leaves behind when it exits
        try:
            proc = await BotProcess.spawn(spec, nursery, max_line=max_line, probe_leftovers=True)
        except BotStartError as exc:
            raise _ProbeFailure(exc.detail, _START_FIXES.get(exc.reason, "check the command")) from None
        return cls(proc, runtime)

    async def death(self, when: str) -> tuple[str, str] | None:
        """``(detail, fix)`` if the bot has died (waiting up to 1 s for it to
        exit): what it wrote on stdout (the lines read, then the rest) and
        stderr, its exit status or signal, and the likely cause
        (:func:`referee.runtime.runtimes.explain_death`); None while it runs."""
        from referee.runtime.runtimes import explain_death

        rc = await self.wait_exit(1.0)
        if rc is None:
            return None
        if not self.eof:
            try:
                while await self.read_line(0.2) is not None:
                    pass
            except _ProbeFailure:
                pass
        await self.proc.stderr_settled(0.5)
        out = b"\n".join(self.seen).decode("utf-8", "replace")
        return explain_death(
            rc,
            out,
            str(self.proc.stderr_tail()),
            when=when,
            command=self.proc.spec.command,
            limits=self.proc.spec.limits,
            runtime=self.runtime,
            default_fix=None if when.startswith("before answering hello") else FIXES["crash"],
        )

    def stderr_tail(self) -> str:
        return str(self.proc.stderr_tail()).strip()[-400:]

    async def send(self, msg: dict[str, Any] | bytes) -> None:
        """Write one message line (a dict, encoded as the league encodes its messages, or the
        encoded line). Raises :class:`_ProbeFailure` if the bot's stdin is closed."""
        data = msg if isinstance(msg, bytes) else _ENCODER.encode(msg) + b"\n"
        kind = (json.loads(msg) if isinstance(msg, bytes) else msg).get("type")
        try:
            await self.proc.send_bytes(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            died = await self.death(f"before the referee's {kind!r} message (it closed its stdin)")
            if died is not None:
                raise _ProbeFailure(*died) from None
            raise _ProbeFailure(
                f"the bot closed its stdin before the referee's {kind!r} message" + self._stderr_hint(),
                FIXES["crash"],
            ) from None

    async def read_line(self, timeout_s: float) -> bytes | None:
        """The next stdout line (without the newline), or None on timeout.
        Raises :class:`_ProbeFailure` at end of output or for a line too long."""
        from referee.runtime.framing import LineTooLong, StreamClosed

        closed = False
        with trio.move_on_after(timeout_s):
            try:
                line = bytes(await self.proc.reader.read_line())
                self.seen = [*self.seen[-19:], line[:2000]]
                return line
            except LineTooLong as exc:
                raise _ProbeFailure(
                    f"line {exc.lineno} is longer than {exc.limit} bytes",
                    "end every message with a newline, one message per line",
                ) from None
            except StreamClosed:
                self.eof = closed = True
        if closed:
            # outside the read's time limit: how it died is worth the wait
            died = await self.death("before its next line (it closed its stdout)")
            if died is not None:
                raise _ProbeFailure(*died)
            raise _ProbeFailure("the bot closed stdout" + self._stderr_hint(), FIXES["crash"])
        return None

    def _stderr_hint(self) -> str:
        tail = self.stderr_tail()
        return f"; its stderr ends: {tail[-300:]!r}" if tail else ""

    async def read_message(self, timeout_s: float, what: str, decide: str | None = None) -> dict[str, Any]:
        """Read and decode one message; failures name the line and the fix
        (``decide``: the ``decide`` of the turn being answered, if any)."""
        line = await self.read_line(timeout_s)
        if line is None:
            raise _ProbeFailure(
                f"no {what} within {int(timeout_s * 1000)} ms" + self._stderr_hint(),
                "answer at once and flush stdout after every line (Python: print(..., flush=True) "
                "or the SDK; C: fflush(stdout); Node: process.stdout.write)",
            )
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
        raise _ProbeFailure(exc.detail, fix_for("malformed", exc.problem, decide)) from None
    try:
        msg = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):  # msgspec accepted it: should not happen
        shown = line[:60].decode("utf-8", "replace")
        raise _ProbeFailure(f"line {lineno} is not JSON: {shown!r}", FIXES["malformed"]) from None
    if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
        raise _ProbeFailure(
            f'line {lineno} is JSON but not a message (an object with a "type"): '
            f"{line[:60].decode('utf-8', 'replace')!r}",
            FIXES["malformed"],
        )
    return msg


class _Act:
    def __init__(self, d: dict[str, Any]) -> None:
        self.target = d.get("target")
        self.card = d.get("card")
        self.family = d.get("family")
        self.please = d.get("please", False)


def _start_msg(game_id: str, rules: Any, game: Any, seat: int, names: list[str], clock: Any) -> bytes:
    """The ``start`` line, encoded as a league's (:func:`protocol.encode.start_line`)."""
    return (
        start_line(
            game_id,
            rules.name,
            rules.to_wire(len(names)),
            seat,
            names,
            getattr(game, "dealer", 0),
            game.dealt_hand(seat),
            start_clock(clock.move_ms, clock.bank_ms, clock.mode),
        )
        + b"\n"
    )


def _turn_msg(game_id: str, game: Any, seat: int, turn_id: int, clock: Any) -> dict[str, Any]:
    """A ``turn``, its fields in a league's order (:class:`protocol.encode.TurnEncoder`): the
    clock a league's first turn of a game shows (the whole bank left, or the move limit)."""
    left = clock.bank_ms if clock.bank_ms is not None else clock.move_ms
    return {
        "type": "turn",
        "game": game_id,
        "id": turn_id,
        "decide": game.decision(),
        **game.view(seat),
        "clock": {"left_ms": left, "move_ms": clock.move_ms},
    }


def _check_reply(msg: dict[str, Any], turn: dict[str, Any], game: Any, seat: int) -> None:
    """Raise :class:`_ProbeFailure` unless ``msg`` is a legal reply to ``turn``."""
    if msg.get("type") != turn["decide"]:
        detail, problem = wrong_reply(turn["id"], turn["decide"], str(msg.get("type")))
        raise _ProbeFailure(detail, fix_for("illegal", problem))
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
    from referee.runtime.session import hello_line

    try:
        await bot.send(hello_line(name))
        t0 = time.monotonic()
        msg = await bot.read_message(startup_s, "hello reply")
        ms = (time.monotonic() - t0) * 1000
    except _ProbeFailure as exc:
        died = await bot.death("before answering hello")
        if died is None:
            report.add("handshake", False, exc.detail, exc.fix)
        else:
            detail, fix = died
            plan = getattr(bot.proc, "_plan", None)
            unseen = plan.view_hint(str(bot.proc.stderr_tail())[-2000:]) if plan is not None else ""
            report.add("handshake", False, detail, f"{unseen[2:]}; {fix}" if unseen else fix)
        return False
    if msg.get("type") != "hello":
        report.add(
            "handshake",
            False,
            f"the first line was a {msg.get('type')!r} message, not a hello",
            'answer {"type":"hello","protocol":1,...} with {"type":"hello","protocol":1,"name":"YourBot"}',
        )
        return False
    if msg.get("protocol") != PROTOCOL_VERSION:
        report.add(
            "handshake",
            False,
            f"the bot speaks protocol version {msg.get('protocol')!r}; this referee speaks protocol "
            f"version {PROTOCOL_VERSION}",
            f'reply "protocol": {PROTOCOL_VERSION} in your hello (and follow docs/PROTOCOL.md)',
        )
        return False
    bot_name = msg.get("name")
    if not isinstance(bot_name, str) or not bot_name:
        report.add("handshake", False, 'the hello reply has no "name"', 'add "name": "YourBot" to your hello reply')
        return False
    report.bot_name = bot_name
    report.bot_version = msg.get("version") if isinstance(msg.get("version"), str) else None
    version = f" {report.bot_version}" if report.bot_version else ""
    report.add("handshake", True, f"hello from {bot_name!r}{version}, protocol {PROTOCOL_VERSION}, in {ms:.0f} ms")
    return True


#: the probe checks, in order (a probe that cannot run is reported as skipped, with the reason)
PROBES = (
    "probe: quiet until its turn",
    "probe: legal reply with the turn's id",
    "probe: keeps going after an error",
    "probe: answers only with the current id",
    "probe: exits on bye",
)
#: the probes' error message after a legal reply: worded as a league's for an illegal reply (the
#: bot's reply to turn 1 is its line 2), so that nothing in it says check-bot
_ERROR_TEXT = "line 2: turn 1: you cannot ask yourself: ask another seat that holds cards"
_LEFTOVER_FIX = (
    "leave nothing running when you exit: wait for (or kill) every child process first, and never "
    "daemonize (double fork, setsid); the league's sandbox kills whatever a bot leaves behind"
)
_MISHANDLED_FIX = (
    "an error message needs no answer: log it to stderr (never stdout) and keep reading stdin; "
    "the next turn comes as usual"
)


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
    return _Mishandled(
        f"the bot exited{status} {when}" + (f"; its stderr ends: {tail[-300:]!r}" if tail else ""),
        "an error message needs no answer and is no reason to stop: log it to stderr and keep reading stdin until bye",
    )


async def _after_error(
    bot: RawBot, report: Report, legal: Check, turn2: dict[str, Any], probe_game: Any, seat: int, move_s: float
) -> bool:
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
            await bot.send(error_line("illegal", _ERROR_TEXT, turn2["game"], 1) + b"\n")
            # anything written before the next turn exists answers the error message
            early = await bot.read_line(min(move_s, 0.3))
        except _ProbeFailure:
            raise await _exited_after_error(bot, "after an error message") from None
        if early is not None:
            raise _Mishandled(
                f"the bot answered the error message (before any new turn) with line {bot.lineno}: "
                f"{early[:80].decode('utf-8', 'replace')!r}"
            )
        try:
            await bot.send(turn2)
            line = await bot.read_line(move_s)
        except _ProbeFailure:
            if not bot.proc.exited() and not bot.eof:
                raise
            # it read the error message and went on; it died on the new turn: its own crash
            rc = await bot.wait_exit(1.0)
            tail = bot.stderr_tail()
            raise _ProbeFailure(
                f"the bot exited (status {rc}) on turn id 2 (it had read an error message "
                "before, without trouble)" + (f"; its stderr ends: {tail[-300:]!r}" if tail else ""),
                FIXES["crash"],
            ) from None
        if line is None:
            raise _Mishandled(
                f"no reply to turn id 2 within {int(move_s * 1000)} ms after an error message" + bot._stderr_hint(),
                _MISHANDLED_FIX + "; if the error message is not what stopped the bot, answer every "
                "turn within move_ms and flush stdout after every line",
                silent=True,
            )
        if _ERROR_TEXT.encode() in line or b'"type":"error"' in line.replace(b" ", b""):
            raise _Mishandled(
                f"the bot wrote the error message back to stdout (line {bot.lineno}): "
                f"{line[:80].decode('utf-8', 'replace')!r}"
            )
        msg = decode_probe_line(line, bot.lineno, turn2["decide"])
        if msg.get("id") == 1 and msg.get("type") in _DECIDES and legal.ok:
            # an extra reply with the error's id, then the real one: it answered the error message
            try:
                follow = await bot.read_line(min(move_s, 0.3))
            except _ProbeFailure:
                follow = None
            if follow is not None and b'"id":2' in follow.replace(b" ", b""):
                raise _Mishandled(
                    f"the bot answered the error message (id 1) with line {bot.lineno - 1}: "
                    f"{line[:80].decode('utf-8', 'replace')!r}, then turn id 2"
                )
        _check_reply(msg, turn2, probe_game, seat)
        report.add(name, True, "answered the next turn after an error message")
    except _Mishandled as exc:
        report.add(name, False, exc.detail, exc.fix)
        return exc.silent
    except _ProbeFailure as exc:
        # its own mistake on turn 2: error handling is fine, the reply is not
        report.add(
            name,
            True,
            "read the error message without answering it and went on to turn id 2 (its reply "
            f"to that turn has a problem of its own: see {legal.name!r})",
        )
        if legal.ok:
            legal.ok = False
            legal.detail = f"turn id 1 was answered correctly, but turn id 2 was not: {exc.detail}"
            legal.fix = exc.fix
    return False


async def _probes(bot: RawBot, report: Report, move_s: float, grace_s: float, name: str, clock: Any) -> None:
    """The probes on ``bot`` (named ``name``, its messages showing the games' ``clock``)."""
    skip_reason = ""
    try:
        skip_reason = await _run_probes(bot, report, move_s, grace_s, _Table(name, clock))
    finally:
        done = {c.name for c in report.checks}
        for name in PROBES:
            if name not in done:
                report.skip(name, skip_reason or "not run: an earlier probe was interrupted")


class _Table:
    """The probes' hand-made situation: a 4-seat kwartet hand (a fixed seed), the
    candidate (``name``) in the seat whose turn it is, the other seats named as
    check-bot's games name its helpers, the game id made as a league's (table 0 of
    :func:`~referee.checkbot.games.game_id`), the games' ``clock``;
    :meth:`fresh` is a copy to check a reply against."""

    SEED = 20240601

    def __init__(self, name: str, clock: Any) -> None:
        from .games import game_id, helper_name

        self.rules = get_variant("kwartet")
        self.game = self.rules.new_game(4, seed=self.SEED)
        self.seat: int = self.game.pending()[0]
        self.gid = game_id(self.rules, 4, 0, self.seat)
        others = iter(range(3))
        self.names = [name if i == self.seat else helper_name(next(others)) for i in range(4)]
        self.clock = clock

    def fresh(self) -> Any:
        return self.rules.new_game(4, seed=self.SEED)

    def turn(self, turn_id: int) -> dict[str, Any]:
        return _turn_msg(self.gid, self.game, self.seat, turn_id, self.clock)


async def _run_probes(bot: RawBot, report: Report, move_s: float, grace_s: float, table: _Table) -> str:
    """Run the probes in order; return why the ones not run were skipped ("" if all ran)."""

    def gone() -> str:
        if _is_gone(bot):
            return "not run: the bot is no longer running (see the failure above)"
        return ""

    async def drain_after_failure() -> None:
        if not all(c.ok for c in report.checks):
            await _drain(bot)

    first = await _probe_quiet(bot, report, table, move_s)
    if first is None:
        return gone() or (
            "not run: the bot's first reply went wrong (see above), so its later lines cannot be "
            "matched to the probes' turns; fix the failure above first"
        )
    legal = _probe_reply(report, table, *first)
    if gone():
        return gone()
    await drain_after_failure()
    went_silent = await _after_error(bot, report, legal, table.turn(2), table.fresh(), table.seat, move_s)
    if gone():
        return gone()
    await drain_after_failure()
    await _probe_current_id(bot, report, table, legal, went_silent, move_s)
    if gone():
        return gone()
    await drain_after_failure()
    await _probe_bye(bot, report, table, grace_s)
    return ""


async def _probe_quiet(
    bot: RawBot, report: Report, table: _Table, move_s: float
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The "quiet until its turn" probe: start + events (with a field from the future) + a
    turn: the first line must be the reply. Returns (the reply, the turn), or None if it failed."""
    rules, game, seat, gid = table.rules, table.game, table.seat, table.gid
    try:
        await bot.send(_start_msg(gid, rules, game, seat, table.names, table.clock))
        for seq, ev in enumerate(game.initial_events()):
            await bot.send({"type": "event", "game": gid, "seq": seq, **ev, "x_future_field": "ignore me"})
        turn = table.turn(1)
        turn["x_future_field"] = {"ignore": ["me"]}
        await bot.send(turn)
        msg = await bot.read_message(move_s, "reply to turn id 1", turn["decide"])
        if msg.get("type") != "ask":
            # something came before the reply
            raise _ProbeFailure(
                f"the bot wrote {json.dumps(msg)[:80]} where the reply to turn id 1 was expected",
                "write nothing but the hello reply and one reply per turn; start, event and end "
                "messages get no answer (and ignore fields you do not know)",
            )
        report.add(PROBES[0], True, "no output after start and events; unknown fields ignored")
    except _ProbeFailure as exc:
        report.add(PROBES[0], False, exc.detail, exc.fix)
        return None
    return msg, turn


def _probe_reply(report: Report, table: _Table, msg: dict[str, Any], turn: dict[str, Any]) -> Check:
    """The "legal reply with the turn's id" probe, on the reply to turn id 1; returns its check."""
    try:
        _check_reply(msg, turn, table.fresh(), table.seat)
        return report.add(PROBES[1], True, f"answered turn id 1 with {json.dumps(msg)}")
    except _ProbeFailure as exc:
        return report.add(PROBES[1], False, exc.detail, exc.fix)


async def _probe_current_id(
    bot: RawBot, report: Report, table: _Table, legal: Check, went_silent: bool, move_s: float
) -> None:
    """The "answers only with the current id" probe: a timeout error, then a new turn: the
    last reply must carry the new id. A bot that answers here after another error message
    clears the "keeps going after an error" probe of a mere silence (``went_silent``): the
    silence on turn id 2 is then blamed on the legal-reply probe (``legal``)."""
    try:
        await bot.send(table.turn(3))
        limit = f"{table.clock.move_ms} ms"
        await bot.send(
            error_line("timeout", f"no reply to turn 3 (ask) within the time limit of {limit}", table.gid, 3) + b"\n"
        )
        turn4 = table.turn(4)
        await bot.send(turn4)
        ids = []
        while 4 not in ids:
            m = await bot.read_message(move_s, "reply to turn id 4", "ask")
            ids.append(m.get("id"))
            if m.get("id") not in (3, 4) or len(ids) > 2:
                raise _ProbeFailure(f"turns 3 and 4 were answered with ids {ids}", FIXES["stale"])
        _check_reply(m, turn4, table.fresh(), table.seat)
        extra = await bot.read_line(0.1)
        if extra is not None:
            raise _ProbeFailure(
                f"an extra line after the reply to turn 4: {extra[:80]!r}", "answer each turn exactly once"
            )
        report.add(PROBES[3], True, f"replies carried ids {ids} (the turn each one answers)")
        after = next(c for c in report.checks if c.name == PROBES[2])
        if went_silent and not after.ok:
            # it answered turn 4 after another error message: the error message did not stop it
            after.ok, after.fix = True, None
            after.detail = (
                f"answered turn id 4 after an error message (turn id 2 got no reply: not because "
                f"of the error message, see {legal.name!r})"
            )
            if legal.ok:
                legal.ok = False
                legal.detail = (
                    f"turn id 1 was answered correctly, but turn id 2 got no reply within "
                    f"{int(move_s * 1000)} ms (the bot answered later turns, so it skipped this one)"
                )
                legal.fix = FIXES["timeout"] + "; answer every turn, exactly once"
    except _ProbeFailure as exc:
        report.add(PROBES[3], False, exc.detail, exc.fix)


async def _probe_bye(bot: RawBot, report: Report, table: _Table, grace_s: float) -> None:
    """The "exits on bye" probe: an end (no reply expected), then bye with stdin left
    open: the bot must exit within the grace time, leaving no process behind."""
    try:
        from referee.runtime.spec import max_decisions_for

        # an aborted hand's end, worded as a league's (a hand past max_decisions)
        cap = max_decisions_for(table.rules, 4)
        detail = f"no end after {cap} decisions (FaultPolicy.max_decisions)"
        await bot.send(end_line(table.gid, [0, 0, 0, 0], [1, 1, 1, 1], "aborted", detail, []) + b"\n")
        extra = await bot.read_line(0.1)
        if extra is not None:
            raise _ProbeFailure(
                f"the bot answered an end message with {extra[:80]!r}", "end (like start and event) gets no answer"
            )
        await bot.send({"type": "bye"})
    except _ProbeFailure as exc:
        report.add(PROBES[4], False, exc.detail, exc.fix)
        return
    t0 = time.monotonic()
    rc = await bot.wait_exit(grace_s)
    if rc is not None:
        exited = f"exited {1000 * (time.monotonic() - t0):.0f} ms after bye (status {rc})"
        left = bot.proc.leftovers()
        if left:
            report.add(
                PROBES[4],
                False,
                f"{exited}, but left {plural(len(left), 'process', 'processes')} running "
                f"(PID COMMAND in its sandbox: {'; '.join(left[:5])})",
                _LEFTOVER_FIX,
            )
        else:
            report.add(PROBES[4], True, exited)
        return
    await bot.close_stdin()
    rc = await bot.wait_exit(grace_s)
    fix = (
        'exit as soon as you read {"type":"bye"} (and also at end of input); the referee kills a bot '
        f"that is still running {int(grace_s * 1000)} ms after bye"
    )
    if rc is not None:
        report.add(
            PROBES[4],
            False,
            f"still running {int(grace_s * 1000)} ms after bye; it exited only when stdin was closed",
            fix,
        )
    else:
        report.add(
            PROBES[4], False, f"still running {int(grace_s * 1000)} ms after bye, and after stdin was closed", fix
        )
