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
4. **per-game mode** - a fresh process for each of a few games, closed with
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
import signal
import subprocess
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


@dataclass
class Check:
    """One line of the checklist."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    bot_name: str | None = None
    bot_version: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)

    def add(self, name: str, ok: bool, detail: str, fix: str | None = None) -> Check:
        check = Check(name, ok, detail, None if ok else fix)
        self.checks.append(check)
        return check

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
    """A bot process driven line by line (no runtime), for the probes.

    Lines longer than ``max_line`` are cut (the probe then fails). :meth:`kill`
    (shielded) SIGKILLs the process group and reaps the process.
    """

    def __init__(self, proc: trio.Process, max_line: int = 65536) -> None:
        self.proc = proc
        self.max_line = max_line
        self.buf = bytearray()
        self.lineno = 0
        self.eof = False
        self.stderr = bytearray()
        self.plan: Any = None        # the sandbox plan (its temporary folder is removed after the kill)

    @classmethod
    async def open(cls, command: str | list[str], cwd: str | None, nursery: trio.Nursery,
                   name: str = "candidate") -> "RawBot":
        """Start the process in the same sandbox a league uses (raises
        :class:`_ProbeFailure` if it cannot be started)."""
        from referee.runtime import BotSpec
        from referee.runtime.sandbox import plan_spawn

        plan = plan_spawn(BotSpec(name=name, command=command, cwd=cwd))
        argv = plan.argv
        try:
            try:
                proc = await trio.lowlevel.open_process(
                    argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    cwd=plan.cwd, env=plan.env, preexec_fn=plan.preexec, start_new_session=True)
            except BaseException:
                plan.cleanup()
                raise
        except FileNotFoundError as exc:
            raise _ProbeFailure(f"cannot start {argv!r}: {exc.filename or argv[0]!r} not found",
                                "check the command and the working directory; a script needs its interpreter "
                                "(python bot.py, node bot.js) or a #! line and chmod +x") from None
        except PermissionError:
            raise _ProbeFailure(f"cannot start {argv!r}: {argv[0]!r} is not executable",
                                f"chmod +x {argv[0]}, or run it through its interpreter") from None
        except OSError as exc:
            raise _ProbeFailure(f"cannot start {argv!r}: {exc}", "check the command") from None
        bot = cls(proc)
        bot.plan = plan
        nursery.start_soon(bot._drain_stderr)
        return bot

    async def _drain_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        while True:
            try:
                data = await stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            if not data:
                return
            self.stderr += data
            if len(self.stderr) > 8192:
                del self.stderr[:-8192]

    def stderr_tail(self) -> str:
        text = self.stderr.decode("utf-8", "replace").strip()
        return text[-400:]

    async def send(self, msg: dict[str, Any]) -> None:
        """Write one message line. Raises :class:`_ProbeFailure` if the bot's stdin is closed."""
        assert self.proc.stdin is not None
        try:
            await self.proc.stdin.send_all(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise _ProbeFailure(f"the bot closed its stdin (exited?) before the referee's {msg.get('type')!r} message"
                                + self._stderr_hint(), FIXES["crash"]) from None

    async def read_line(self, timeout_s: float) -> bytes | None:
        """The next stdout line (without the newline), or None on timeout.
        Raises :class:`_ProbeFailure` at end of output."""
        assert self.proc.stdout is not None
        with trio.move_on_after(timeout_s):
            while True:
                nl = self.buf.find(b"\n")
                if nl >= 0:
                    line = bytes(self.buf[:nl])
                    del self.buf[: nl + 1]
                    self.lineno += 1
                    return line
                if len(self.buf) > self.max_line:
                    self.lineno += 1
                    raise _ProbeFailure(f"line {self.lineno} is longer than {self.max_line} bytes",
                                        "end every message with a newline, one message per line")
                try:
                    data = await self.proc.stdout.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                if not data:
                    self.eof = True
                    raise _ProbeFailure("the bot closed stdout (exited?)" + self._stderr_hint(), FIXES["crash"])
                self.buf += data
        return None

    def _stderr_hint(self) -> str:
        tail = self.stderr_tail()
        return f"; its stderr ends: {tail[-300:]!r}" if tail else ""

    async def read_message(self, timeout_s: float, what: str) -> dict[str, Any]:
        """Read and decode one message; failures name the line and the fix."""
        line = await self.read_line(timeout_s)
        if line is None:
            raise _ProbeFailure(f"no {what} within {int(timeout_s * 1000)} ms" + self._stderr_hint(),
                                "answer at once and flush stdout after every line (Python: print(..., flush=True) "
                                "or the SDK; C: fflush(stdout); Node: process.stdout.write)")
        return decode_probe_line(line, self.lineno)

    async def wait_exit(self, timeout_s: float) -> int | None:
        with trio.move_on_after(timeout_s):
            return await self.proc.wait()
        return None

    async def close_stdin(self) -> None:
        if self.proc.stdin is not None:
            try:
                await self.proc.stdin.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass

    async def kill(self) -> None:
        with trio.CancelScope(shield=True):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            await self.proc.wait()
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    try:
                        await stream.aclose()
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                        pass
            if self.plan is not None:
                self.plan.cleanup()


def decode_probe_line(line: bytes, lineno: int) -> dict[str, Any]:
    """Decode one bot line; :class:`_ProbeFailure` says why it is not a message."""
    try:
        msg = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):  # deeply nested JSON: RecursionError
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
        raise _ProbeFailure(f"a {turn['decide']!r} turn was answered with type {msg.get('type')!r}",
                            f"answer a turn with \"type\": the turn's \"decide\" value ({turn['decide']!r})")
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


def _gone(bot: RawBot, report: Report, name: str) -> bool:
    """True (and a "not run" line) when an earlier probe left the bot dead."""
    if bot.eof or bot.proc.poll() is not None:
        report.add(name, False, "not run: the bot is no longer running (see the failure above)",
                   "fix the failure above first")
        return True
    return False


async def _drain(bot: RawBot) -> None:
    """Skip leftover lines of a failed probe (until 0.1 s of quiet)."""
    try:
        while await bot.read_line(0.1) is not None:
            pass
    except _ProbeFailure:
        pass


async def _probes(bot: RawBot, report: Report, move_s: float, grace_s: float) -> None:
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
        msg = await bot.read_message(move_s, "reply to turn id 1")
        if msg.get("type") != "ask":
            # something came before the reply
            raise _ProbeFailure(f"the bot wrote {json.dumps(msg)[:80]} where the reply to turn id 1 was expected",
                                "write nothing but the hello reply and one reply per turn; start, event and end "
                                "messages get no answer (and ignore fields you do not know)")
        report.add("probe: quiet until its turn", True, "no output after start and events; unknown fields ignored")
    except _ProbeFailure as exc:
        report.add("probe: quiet until its turn", False, exc.detail, exc.fix)
        return
    # reply: legal, echoes the id
    try:
        probe_game = rules.new_game(4, seed=20240601)
        _check_reply(msg, turn, probe_game, seat)
        report.add("probe: legal reply with the turn's id", True, f"answered turn id 1 with {json.dumps(msg)}")
    except _ProbeFailure as exc:
        report.add("probe: legal reply with the turn's id", False, exc.detail, exc.fix)
    # after an error: the next turn (a new id, same situation) is answered
    if _gone(bot, report, "probe: keeps going after an error"):
        return
    await drain_after_failure()
    try:
        await bot.send({"type": "error", "game": gid, "id": 1, "fault": "illegal",
                        "detail": "check-bot probe: pretend your reply was illegal; keep going"})
        turn2 = _turn_msg(gid, game, seat, 2)
        await bot.send(turn2)
        msg2 = await bot.read_message(move_s, "reply to turn id 2 after an error message")
        _check_reply(msg2, turn2, rules.new_game(4, seed=20240601), seat)
        report.add("probe: keeps going after an error", True, "answered the next turn after an error message")
    except _ProbeFailure as exc:
        rc = await bot.wait_exit(1.0)
        if rc is not None:
            tail = bot.stderr_tail()
            report.add("probe: keeps going after an error", False,
                       f"the bot exited (status {rc}) after an error message"
                       + (f"; its stderr ends: {tail[-300:]!r}" if tail else ""),
                       "an error message needs no answer: log it to stderr and keep reading stdin")
        else:
            report.add("probe: keeps going after an error", False, exc.detail,
                       "an error message needs no answer: log it to stderr and keep reading; " + exc.fix)
    # current id: a timeout error, then a new turn: the last reply must carry the new id
    if _gone(bot, report, "probe: answers only with the current id"):
        return
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
            m = await bot.read_message(move_s, "reply to turn id 4")
            ids.append(m.get("id"))
            if m.get("id") not in (3, 4) or len(ids) > 2:
                raise _ProbeFailure(f"turns 3 and 4 were answered with ids {ids}", FIXES["stale"])
        _check_reply(m, turn4, rules.new_game(4, seed=20240601), seat)
        extra = await bot.read_line(0.1)
        if extra is not None:
            raise _ProbeFailure(f"an extra line after the reply to turn 4: {extra[:80]!r}",
                                "answer each turn exactly once")
        report.add("probe: answers only with the current id", True,
                   f"replies carried ids {ids} (the turn each one answers)")
    except _ProbeFailure as exc:
        report.add("probe: answers only with the current id", False, exc.detail, exc.fix)
    # end: no reply expected; then bye with stdin left open
    if _gone(bot, report, "probe: exits on bye"):
        return
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
        report.add("probe: exits on bye", False, exc.detail, exc.fix)
        return
    t0 = time.monotonic()
    rc = await bot.wait_exit(grace_s)
    if rc is not None:
        report.add("probe: exits on bye", True,
                   f"exited {1000 * (time.monotonic() - t0):.0f} ms after bye (status {rc})")
        return
    await bot.close_stdin()
    rc = await bot.wait_exit(grace_s)
    fix = ('exit as soon as you read {"type":"bye"} (and also at end of input); the referee kills a bot '
           f"that is still running {int(grace_s * 1000)} ms after bye")
    if rc is not None:
        report.add("probe: exits on bye", False,
                   f"still running {int(grace_s * 1000)} ms after bye; it exited only when stdin was closed", fix)
    else:
        report.add("probe: exits on bye", False,
                   f"still running {int(grace_s * 1000)} ms after bye, and after stdin was closed", fix)


def _table_sizes(rules: Any) -> list[int]:
    lo, hi = rules.min_players, rules.max_players
    return sorted({lo, max(lo, min(hi, 4)), hi})


def _describe_faults(faults: Sequence[Any], seat: int, tail: str) -> tuple[str, str]:
    mine = [f for f in faults if f.seat == seat]
    first = mine[0]
    detail = f"{first.fault}: {first.detail}"
    if len(mine) > 1:
        detail += f" (+{len(mine) - 1} more)"
    fix = FIXES.get(first.fault, "see docs/PROTOCOL.md")
    if first.fault == "crash" and tail and "stderr" not in detail:
        detail += f"; its stderr ends: {tail.strip()[-300:]!r}"
    return detail, fix


async def _games(command: list[str] | str, name: str, cwd: str | None, report: Report, variants: list[Any],
                 move_ms: int, startup_ms: int, grace_ms: int, log_dir: Path | None,
                 progress: Callable[[str], None]) -> None:
    from referee.runtime import BotSession, BotSpec, ClockSpec, GameSpec, play_game, start_bots
    from referee.runtime.errors import BotError

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
                        detail, fix = _describe_faults(result.faults, seat, cand.stderr_tail())
                        problems.append((f"{n} seats, seat {seat}: {detail}", fix))
                    # an instant bot never faults; restart one if it died anyway
                    for i, b in enumerate(instants):
                        if not b.alive:
                            await b.close()
                            instants[i] = await BotSession.start(
                                BotSpec(name=f"instant-{i}", command=[*INSTANT_BOT, str(i)]), clock, nursery)
                label = f"game: {rules.name}"
                if problems:
                    report.add(label, False, problems[0][0] + (f" (and {len(problems) - 1} more games)"
                                                                if len(problems) > 1 else ""), problems[0][1])
                else:
                    report.add(label, True, f"{played} games at {', '.join(map(str, sizes))} seats, "
                                            f"{decisions} decisions, no faults (session mode)")
            if cand is not None:
                await cand.close()
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
                    detail, fix = _describe_faults(result.faults, seat, fresh.stderr_tail())
                    problems.append((f"{rules.name}: {detail}", fix))
                await fresh.close()
            if problems:
                report.add("per-game mode", False, problems[0][0], problems[0][1])
            else:
                report.add("per-game mode", True, f"{len(per_game)} games, a fresh process for each")
        finally:
            with trio.CancelScope(shield=True):
                for b in instants:
                    await b.close()
            nursery.cancel_scope.cancel()


def parse_command(command: Sequence[str]) -> list[str] | str:
    """The bot command from the CLI: several words are an argv list; one word with
    spaces is a shell string. Raises :class:`UserError` when empty."""
    words = [w for w in command]
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise UserError("give the bot's command after --, e.g. referee check-bot -- python my_bot.py")
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
                return report
            if await _handshake(bot, report, startup_ms / 1000, name):
                progress("probes")
                await _probes(bot, report, max(move_ms, 1000) / 1000, grace_ms / 1000)
        finally:
            if bot is not None:
                await bot.kill()
            nursery.cancel_scope.cancel()
    if report.bot_name is not None:
        await _games(command, name, cwd, report, chosen, move_ms, startup_ms, grace_ms, log_dir, progress)
    report.seconds = time.monotonic() - t0
    return report
