"""Play one game (or one match of several hands) with running bot sessions.

:func:`play_game` drives a rules engine (``GameState``) and the bots:

* sends ``start`` to every seat, then the engine's events, then a ``turn`` to
  each seat whose decision is pending; a single pending seat is awaited alone,
  several pending seats (a chickens ``play``) are awaited concurrently, each
  under its own limit, and their plays are applied in seat order once all are
  in (so nobody's choice is applied or revealed early and fallback draws stay
  deterministic);
* times each decision from the moment the ``turn`` line is written to the
  moment the reply line is read (wall clock, or the bot's CPU time in "cpu"
  mode with a wall ceiling), against ``move_ms`` and the optional bank;
* turns every bot failure into a fault: the bot gets an ``error`` message if
  its pipe is open, every seat gets a ``fault`` event, the seat is played by
  the seeded fallback (``state.fallback_rng()``, i.e.
  ``Rng(derive(seed, "fallback"))``, consumed in decision order, seat order
  for simultaneous plays) until the end of the game (all remaining hands of a
  match), and the bot forfeits the game. A faulted bot still receives events
  and ``end`` while its pipe is open;
* a bot that timed out is killed after the game (its output is out of sync):
  until then its late lines are read and discarded as ``stale`` (logged and
  recorded, not broadcast); a crashed or timed-out session is left with
  ``alive == False`` and the caller starts a fresh one for its next game;
* event lines for a seat are buffered and written together with that seat's
  next turn or ``end`` (or when ``FaultPolicy.event_buffer`` bytes are queued);
* logs everything to one JSON Lines file (see :mod:`referee.runtime.gamelog`).

Cancellation (Ctrl-C): the log gets an ``aborted`` footer and is closed; the
sessions are left to their owner, whose ``close()`` kills them (shielded).
"""

from __future__ import annotations

import copy
import math
import os
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

import msgspec
import trio

from protocol.messages import BOT_DECODER, ENCODER, PROTOCOL_VERSION, REPLY_FOR_DECISION, BotHello
from referee.rules import IllegalAction, Rng, derive, ranks_from_scores

from .errors import (BotCrashed, BotError, BotIllegal, BotMalformed, BotStale, BotTimeout, public_fault_detail,
                     retry_note)
from .framing import LineTooLong, StreamClosed, decode_line
from .gamelog import LOG_KIND, LOG_VERSION, GameLog
from .session import BotSession
from .spec import ClockSpec, FaultRecord, GameResult, GameSpec, ThinkStats

_RETRYABLE = ("malformed", "illegal")
_DECIDE_FRAG = {d: b',"decide":"%s",' % d.encode() for d in ("ask", "play", "take")}
_NEWLINE = b"\n"
# lazy re-arming of the hand's reply deadline (see _Runner._ask_bot): the armed
# deadline may be early by up to this fraction of the move limit, at most SLACK_MAX_S
SLACK_FRACTION = 0.25
SLACK_MAX_S = 1.0


def action_json(decide: str, action: Any) -> dict[str, Any]:
    """The log form of an action (protocol reply field names, no ``type``/``id``)."""
    if decide == "ask":
        out: dict[str, Any] = {"target": action.target}
        if action.card is not None:
            out["card"] = action.card
        if action.family is not None:
            out["family"] = action.family
        out["please"] = bool(action.please)
        return out
    return {"card": action.card}


def share_wins(scores: Sequence[float], forfeits: Sequence[int]) -> list[float]:
    """Forfeited seats get 0; the best score among the others shares one win."""
    bad = set(forfeits)
    ok = [s for i, s in enumerate(scores) if i not in bad]
    if not ok:
        return [0.0] * len(scores)
    best = max(ok)
    k = sum(1 for i, s in enumerate(scores) if i not in bad and s == best)
    return [1.0 / k if i not in bad and s == best else 0.0 for i, s in enumerate(scores)]


class _Seat:
    """A match seat: its session and per-game bookkeeping."""

    __slots__ = ("index", "name", "session", "faulted", "think", "out", "out_size", "hs", "bank_left",
                 "drain_scope", "drain_done", "drain_until", "stale_recorded", "in_hand", "clock")

    def __init__(self, index: int, session: BotSession, clock: ClockSpec) -> None:
        self.index = index
        self.clock = clock  # this seat's clock (GameSpec.seat_clocks[index] or GameSpec.clock)
        self.name = session.name
        self.session = session
        self.faulted = False
        self.think = ThinkStats()
        self.out: list[bytes] = []
        self.out_size = 0
        self.hs = index
        self.bank_left: float = 0.0
        self.drain_scope: trio.CancelScope | None = None
        self.drain_done: trio.Event | None = None
        self.drain_until = 0.0
        self.stale_recorded = False
        self.in_hand = False

    @property
    def writable(self) -> bool:
        return self.session.pipe_open and not self.session.closed


class _Runner:
    def __init__(self, spec: GameSpec, bots: Sequence[BotSession], log_dir: str | None) -> None:
        self.spec = spec
        self.rules = spec.rules
        if spec.seat_clocks is not None and len(spec.seat_clocks) != len(bots):
            raise ValueError(f"play_game: {len(spec.seat_clocks)} seat_clocks for {len(bots)} bot sessions")
        self.seats = [_Seat(i, b, spec.clock_for(i) if spec.seat_clocks is not None else spec.clock)
                      for i, b in enumerate(bots)]
        self.clock = spec.clock
        self.policy = spec.policy
        self.faults: list[FaultRecord] = []
        self.log: GameLog | None = None
        self.log_dir = log_dir
        self._now = trio.lowlevel.current_clock().current_time  # trio's clock, without the run-context lookup
        self.t0 = self._now()
        self.nursery: trio.Nursery | None = None
        # per hand
        self.gid = spec.game_id
        self.state: Any = None
        self.hand_seats: list[_Seat] = []
        self.seq = 0
        self._fallback: Rng | None = None  # the hand's fallback generator, made on first use
        self._gid_frag = b""
        self._turn_frag = b""
        self._event_frag = b""
        self._fields: Callable[[int], bytes] | None = None
        # the hand's reply-deadline scope (see _decide_all): its armed deadline and
        # the sequential wait it guards, if one is in progress
        self._reply_scope: trio.CancelScope | None = None
        self._armed = math.inf
        self._waiting: tuple[_Seat, str, int, float, float] | None = None
        self._stash: tuple[bytes | None, BotError | None] | None = None
        self._budget = 0

    # ------------------------------------------------------------------ run
    async def run(self) -> GameResult:
        spec = self.spec
        if len(self.seats) != spec.players:
            raise ValueError(f"play_game: {spec.players} players but {len(self.seats)} bot sessions")
        self.clock.validate()
        for seat in self.seats:
            seat.clock.validate()
        if self.log_dir is not None:
            self.log = GameLog(os.path.join(self.log_dir, f"{spec.game_id}.jsonl"), _monotonic())
            self.log.record(self._header())
        reason, detail = "complete", None
        scores: list[float] = [0] * spec.players
        ranks: list[int] = [1] * spec.players
        finished = False
        try:
            async with trio.open_nursery() as nursery:
                self.nursery = nursery
                try:
                    scores, ranks = await self._play_all()
                except _Aborted as exc:
                    reason, detail = "aborted", str(exc)
                await self._finish_drains()
                if nursery.child_tasks:  # stale-line drains still running
                    nursery.cancel_scope.cancel()
            finished = True
        finally:
            if self.log is not None:
                if not finished:
                    reason, detail = "aborted", "the referee was interrupted"
                self._write_tail(scores, ranks, reason, detail)
                self.log.close()
        # sessions whose output is out of sync (timeout) or that crashed are killed now
        for seat in self.seats:
            if not seat.session.alive and not seat.session.closed:
                await seat.session.kill()
        forfeits = sorted({f.seat for f in self.faults})
        return GameResult(
            game_id=spec.game_id,
            scores=list(scores),
            ranks=list(ranks),
            win_shares=share_wins(scores, forfeits),
            forfeits=forfeits,
            faults=list(self.faults),
            think_ms=[s.think for s in self.seats],
            log_path=str(self.log.path) if self.log is not None else None,
            reason=reason,
            detail=detail,
        )

    def _header(self) -> dict[str, Any]:
        spec = self.spec
        fmt = spec.match
        return {
            "log": LOG_KIND, "log_version": LOG_VERSION, "protocol": PROTOCOL_VERSION,
            "referee": _version(), "game": spec.game_id, "started": _utc_now(), "variant": self.rules.name,
            "rules": _wire(self.rules)[0], "players": spec.players, "seed": spec.seed,
            "deal": spec.deal.to_json() if spec.deal is not None else None,
            "match": _match_json(fmt),
            "seats": [
                {"seat": s.index, "bot": s.name, "command": s.session.spec.command,
                 "hello": ({"name": s.session.hello.name, "version": s.session.hello.version}
                           if isinstance(s.session.hello, BotHello) else None),
                 "sandbox": s.session.sandbox_info()}
                for s in self.seats
            ],
            "clock": self.clock.to_json(), "policy": self.policy.to_json(),
            "seat_clocks": ([s.clock.to_json() for s in self.seats] if spec.seat_clocks is not None else None),
        }

    def _write_tail(self, scores: list[float], ranks: list[int], reason: str, detail: str | None) -> None:
        assert self.log is not None
        for s in self.seats:
            self.log.record({"stderr": {"seat": s.index, "bot": s.name, "tail": s.session.stderr_tail()}})
        forfeits = sorted({f.seat for f in self.faults})
        self.log.record({"footer": {
            "scores": scores, "ranks": ranks, "win_shares": share_wins(scores, forfeits), "forfeits": forfeits,
            "reason": reason, "detail": detail, "faults": [f.to_json() for f in self.faults],
            "think_ms": [s.think.to_json() for s in self.seats],
        }})

    async def _play_all(self) -> tuple[list[float], list[int]]:
        spec = self.spec
        fmt = spec.match
        if fmt is None or getattr(fmt, "kind", "single") == "single":
            seed = spec.seed
            try:
                state = self.rules.new_game(spec.players, seed=seed, deal=spec.deal)
            except Exception as exc:
                raise _Aborted(f"cannot set up the game: {exc}") from exc
            self._log_rec({"hand": {"index": 1, "game": spec.game_id, "seats": list(range(spec.players)),
                                    "dealer": getattr(state, "dealer", 0), "seed": getattr(state, "seed", seed),
                                    "deal": spec.deal.to_json() if spec.deal is not None else None}})
            scores = await self._play_hand(spec.game_id, state, self.seats)
            return list(scores), ranks_from_scores(scores)
        from referee.rules.match import Match

        if spec.deal is not None:
            raise _Aborted("a match deals its own hands from the seed; an explicit deal is for single games")
        match = Match(self.rules, spec.players, fmt, spec.seed if spec.seed is not None else 0)
        while True:
            hand = match.next_hand()
            if hand is None:
                break
            gid = f"{spec.game_id}.h{hand.index + 1}"
            seats = [self.seats[i] for i in hand.seats]
            try:
                state = match.new_game(hand)
            except Exception as exc:
                raise _Aborted(f"cannot set up hand {hand.index + 1}: {exc}") from exc
            self._log_rec({"hand": {"index": hand.index, "game": gid, "seats": list(hand.seats),
                                    "dealer": getattr(state, "dealer", 0), "seed": hand.seed, "deal": None,
                                    "tiebreak": hand.tiebreak}})
            hand_scores = await self._play_hand(gid, state, seats)
            match.record(hand_scores)
        return list(match.scores()), list(match.ranks())

    def _log_rec(self, rec: dict[str, Any]) -> None:
        if self.log is not None:
            self.log.record(rec)

    # ------------------------------------------------------------------ one hand
    async def _play_hand(self, gid: str, state: Any, seats: list[_Seat]) -> list[int]:
        self.gid = gid
        self._gid_frag = ENCODER.encode(gid)
        self._turn_frag = b'{"type":"turn","game":' + self._gid_frag + b',"id":'
        self._event_frag = b'{"type":"event","game":' + self._gid_frag + b',"seq":'
        self.state = state
        # the turn's view, pre-encoded by the engine when it can (AskGame.turn_fields)
        self._fields = getattr(state, "turn_fields", None)
        self.seq = 0
        self.hand_seats = seats
        self._fallback = None
        for s in self.seats:
            s.in_hand = False
        for hs, seat in enumerate(seats):
            seat.hs = hs
            seat.in_hand = True
            bank = seat.clock.bank_ms
            seat.bank_left = float(bank) if bank is not None else 0.0
        names = ENCODER.encode([s.name for s in seats])
        _, wire_rules = _wire(self.rules, len(seats))  # chickens: rounds = this table's size
        variant = ENCODER.encode(self.rules.name)
        dealer = getattr(state, "dealer", 0)
        for hs, seat in enumerate(seats):
            if not seat.session.alive and not seat.faulted:
                why = seat.session.death
                await self._fault(seat, BotCrashed("the bot process is not running at the start of the game"
                                                   + (f" ({why})" if why else ""), bot=seat.name, seat=seat.index))
            clock = seat.clock
            clock_msg: dict[str, Any] = {"move_ms": clock.move_ms}
            if clock.bank_ms is not None:
                clock_msg["bank_ms"] = clock.bank_ms
            if clock.mode != "wall":
                clock_msg["mode"] = clock.mode
            self._queue(seat, b'{"type":"start","game":%b,"variant":%b,"rules":%b,"seat":%d,"seats":%b,'
                              b'"dealer":%d,"hand":%b,"clock":%b}' % (
                                  self._gid_frag, variant, wire_rules, hs, names, dealer,
                                  ENCODER.encode(state.hand(hs)), ENCODER.encode(clock_msg)))
        try:
            await self._broadcast(state.initial_events())
            self._budget = self.policy.max_decisions
            while True:
                with trio.CancelScope() as scope:
                    self._reply_scope = scope
                    self._armed = math.inf
                    await self._decide_all(state, seats)
                self._reply_scope = None
                if not scope.cancelled_caught:
                    break
                await self._resume_wait()  # a reply deadline fired: finish that decision, then go on
            scores = list(state.scores())
            ranks = ranks_from_scores(scores)
            reason, detail = "complete", None
        except _Aborted:
            raise
        except _Stalled as exc:
            scores, ranks = [0] * len(seats), [1] * len(seats)
            reason, detail = "aborted", str(exc)
        except Exception as exc:  # an engine bug must not leave the bots hanging
            scores, ranks = [0] * len(seats), [1] * len(seats)
            reason, detail = "aborted", f"internal error: {type(exc).__name__}: {exc}"
        forfeits = [s.hs for s in seats if s.faulted]
        for seat in seats:
            end: dict[str, Any] = {"type": "end", "game": gid, "scores": scores, "ranks": ranks, "reason": reason}
            if detail:
                end["detail"] = detail
            if forfeits:
                end["forfeits"] = forfeits
            self._queue(seat, ENCODER.encode(end))
        stuck = []
        for seat in seats:
            if seat.out:
                rest = self._flush_nowait(seat)
                if rest is not None:
                    stuck.append((seat, rest))
        if stuck:  # pipes that are full: finish those writes concurrently, each under its own limit
            async with trio.open_nursery() as n:
                for seat, rest in stuck:
                    n.start_soon(self._flush_rest, seat, rest)
        self._log_rec({"hand_end": {"game": gid, "scores": scores, "ranks": ranks, "reason": reason}})
        if reason != "complete":
            raise _Aborted(detail or "aborted")
        return scores

    async def _decide_all(self, state: Any, seats: list[_Seat]) -> None:
        """Ask for decisions until the hand ends, inside the hand's reply-deadline
        scope (``self._reply_scope``).

        A sequential decision's wait for the reply does not open a cancel scope of
        its own (entering and leaving one costs more than the rest of a decision's
        bookkeeping): it arms the deadline of this long-lived scope instead
        (:meth:`_ask_bot`). When that deadline fires, the scope unwinds out of
        this loop with nothing of the interrupted decision applied, and
        :meth:`_resume_wait` (called by :meth:`_play_hand` outside the scope)
        finishes that decision; then the loop runs again in a fresh scope. Every
        other await in here (full pipes, faults, retries, concurrent plays, the
        CPU clock) first disarms the scope (:meth:`_disarm`) and uses its own
        ``trio.move_on_at``/``move_on_after`` at the call site, so the armed
        deadline can only fire in a sequential wait. Outer cancellation (Ctrl-C)
        passes through untouched.
        """
        budget = self._budget
        try:
            while True:
                pending = state.pending()
                if not pending:
                    return
                budget -= 1
                if budget < 0:
                    raise _Stalled(f"no end after {self.policy.max_decisions} decisions (FaultPolicy.max_decisions)")
                decide = state.decision()
                if len(pending) == 1:
                    await self._sequential(seats[pending[0]], decide)
                else:
                    await self._simultaneous([seats[p] for p in pending], decide)
        finally:
            self._budget = budget

    async def _read_reply(self, seat: _Seat, tid: int, fresh: bool = False) -> tuple[bytes | None, BotError | None]:
        """Read ``seat``'s next line for turn ``tid``: ``(line, None)``, or ``(None,
        error)`` for an over-long line (malformed) or the end of its stdout (a
        crash, whose detail the general path fills in). ``fresh``: see
        :meth:`LineReader.read_line`. Cancellation propagates; the reader keeps
        any partial line."""
        try:
            return await seat.session.reader.read_line(fresh), None
        except LineTooLong as exc:
            return None, BotMalformed(str(exc), bot=seat.name, seat=seat.index, turn_id=tid)
        except StreamClosed:
            return None, BotCrashed("", bot=seat.name, seat=seat.index, turn_id=tid)

    def _disarm(self) -> None:
        """Clear the hand scope's armed reply deadline before an await that is
        not a sequential reply wait (it has its own deadline at its call site)."""
        scope = self._reply_scope
        if scope is not None and self._armed != math.inf:
            scope.deadline = math.inf
            self._armed = math.inf

    async def _resume_wait(self) -> None:
        """Finish the sequential decision whose reply wait the hand scope's
        deadline interrupted. The deadline is armed lazily (up to a quarter of the
        limit, at most 1 s, early: see :meth:`_ask_bot`), so the bot may still
        have time: wait out the rest of its exact limit under its own scope,
        then judge the reply (or the timeout) on the general path."""
        waiting, self._waiting = self._waiting, None
        if waiting is None:  # cannot happen: every other await disarms the scope first
            raise _Aborted("internal error: a reply deadline fired outside a reply wait")
        seat, decide, tid, t0, limit_ms = waiting
        deadline = t0 + limit_ms / 1000
        line: bytes | None = None
        early: BotError | None = None
        stash, self._stash = self._stash, None
        if stash is not None:  # the outcome arrived just as the deadline fired
            line, early = stash
        elif self._now() < deadline:
            with trio.move_on_at(deadline):
                line, early = await self._read_reply(seat, tid)
        events = await self._ask_slow(seat, decide, None, True, tid, t0, limit_ms, line, early)
        await self._after_sequential(seat, decide, events)

    # ------------------------------------------------------------------ events
    def _queue(self, seat: _Seat, line: bytes) -> None:
        if seat.writable:
            seat.out.append(line)
            seat.out_size += len(line)

    async def _broadcast(self, events: list[dict[str, Any]]) -> None:
        """Queue the events for every seat of the hand whose pipe is open (a
        ``draw`` event's card only for the drawer); write out a seat's queue
        when it exceeds ``FaultPolicy.event_buffer`` bytes."""
        for s in self._enqueue(events):
            await self._flush(s)

    def _enqueue(self, events: list[dict[str, Any]]) -> list[_Seat]:
        """The synchronous part of :meth:`_broadcast`: queue the event lines and
        return the seats whose queue is over ``FaultPolicy.event_buffer``."""
        if not events:
            return []
        targets = [s for s in self.hand_seats if s.session.pipe_open and not s.session._closed]
        prefix = self._event_frag
        enc = ENCODER.encode
        seq = self.seq
        for ev in events:
            seq += 1
            if ev["kind"] != "draw" or "card" not in ev:
                line = b"%b%d,%b" % (prefix, seq, enc(ev)[1:])
                n = len(line)
                for s in targets:
                    s.out.append(line)
                    s.out_size += n
            else:
                head = b"%b%d," % (prefix, seq)
                public = head + enc({k: v for k, v in ev.items() if k != "card"})[1:]
                private = head + enc(ev)[1:]
                who = ev.get("seat")
                for s in targets:
                    line = private if s.hs == who else public
                    s.out.append(line)
                    s.out_size += len(line)
        self.seq = seq
        limit = self.policy.event_buffer
        return [s for s in targets if s.out_size > limit]

    def _flush_nowait(self, seat: _Seat) -> memoryview | None:
        """Write the seat's queued lines in one ``write`` without waiting and log
        them. Returns None when everything was written (or the seat is not
        writable: the lines are dropped), else the unwritten rest (an empty
        view when the pipe is broken), which :meth:`_flush` finishes."""
        lines = seat.out
        seat.out = []
        seat.out_size = 0
        session = seat.session
        if not (session.pipe_open and not session._closed):
            return None
        n = len(lines)
        lines.append(b"")
        data = _NEWLINE.join(lines)
        try:
            sent = session.try_send(data)  # the usual case: the pipe has room, no waiting
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            sent = -1
        if self.log is not None:  # after the write: the bot is already reading while we log
            del lines[n]
            self.log.out(seat.index, lines)
        if sent == len(data):
            return None
        return memoryview(data)[sent:] if sent >= 0 else memoryview(b"")

    async def _flush(self, seat: _Seat) -> bool:
        """Write the seat's queued lines in one write. Returns False (after
        reporting a crash/timeout fault if the seat had none) if it failed.

        A write that does not fit the pipe waits up to the seat's wall limit
        plus 0.5 s (a bot that stops reading its stdin is a timeout fault)."""
        if not seat.out:
            return seat.writable
        if not seat.writable:
            seat.out = []
            seat.out_size = 0
            return False
        rest = self._flush_nowait(seat)
        if rest is None:
            return True
        return await self._flush_rest(seat, rest)

    async def _flush_rest(self, seat: _Seat, rest: memoryview) -> bool:
        """Finish a write :meth:`_flush_nowait` could not complete (see :meth:`_flush`)."""
        self._disarm()
        session = seat.session
        err: BotError | None = None
        with trio.move_on_after(seat.clock.ceiling_ms() / 1000 + 0.5) as scope:
            try:
                if not len(rest):
                    raise trio.BrokenResourceError
                await session.send_bytes(rest)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                session.pipe_open = False
                session.alive = False
                err = BotCrashed(f"its stdin is closed ({await session.exit_description()})",
                                 bot=seat.name, seat=seat.index)
        if scope.cancelled_caught:
            session.pipe_open = False
            session.alive = False
            err = BotTimeout("it stopped reading its stdin (a write to it blocked past the move limit)",
                             bot=seat.name, seat=seat.index)
        if err is not None:
            if not seat.faulted:
                await self._fault(seat, err)
            return False
        return True

    # ------------------------------------------------------------------ faults
    async def _fault(self, seat: _Seat, err: BotError, turn_t0: float | None = None) -> None:
        self._disarm()
        rec = FaultRecord(seat.index, seat.name, err.fault, err.detail, err.turn_id, self.gid)
        self.faults.append(rec)
        seat.faulted = True
        if self.log is not None:
            self.log.timed("fault", rec.to_json())
        session = seat.session
        if err.fault in ("timeout", "crash"):
            session.alive = False
        if session.pipe_open and not session.closed:
            # immediately, not buffered: the bot should learn why at once
            msg = {"type": "error", "game": self.gid, "fault": err.fault, "detail": err.detail}
            if err.turn_id is not None:
                msg["id"] = err.turn_id
            self._queue(seat, ENCODER.encode(msg))
            lines, seat.out, seat.out_size = seat.out, [], 0
            if self.log is not None:
                self.log.out(seat.index, lines)
            with trio.move_on_after(0.5) as scope:
                try:
                    await session.send_bytes(_NEWLINE.join(lines) + _NEWLINE)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    session.pipe_open = False
            if scope.cancelled_caught:
                session.pipe_open = False
        if err.fault == "timeout" and session.pipe_open and self.nursery is not None:
            seat.drain_done = trio.Event()
            seat.drain_until = trio.current_time() + min(max(seat.clock.ceiling_ms(), 250), 1000) / 1000
            self.nursery.start_soon(self._drain_stale, seat, err.turn_id, turn_t0 or trio.current_time())
        await self._broadcast([{"kind": "fault", "seat": seat.hs, "fault": err.fault,
                               "detail": public_fault_detail(err.fault)}])

    async def _drain_stale(self, seat: _Seat, turn_id: int | None, t_turn: float) -> None:
        """Read and discard what a timed-out bot still writes (its late reply is stale)."""
        session = seat.session
        done = seat.drain_done
        assert done is not None
        with trio.CancelScope() as scope:
            seat.drain_scope = scope
            try:
                while True:
                    try:
                        line = await session.reader.read_line()
                    except LineTooLong:
                        continue
                    ms = (trio.current_time() - t_turn) * 1000
                    if self.log is not None:
                        self.log.inbound(seat.index, line, ms, False)
                    if not seat.stale_recorded:
                        seat.stale_recorded = True
                        got = ""
                        try:
                            msg = msgspec.json.decode(line)
                            if isinstance(msg, dict) and "id" in msg:
                                got = f" (id {msg['id']!r})"
                        except (msgspec.DecodeError, RecursionError):
                            pass
                        detail = (f"line {session.reader.lineno}{got} arrived {ms:.0f} ms after turn {turn_id} "
                                  f"was sent, after its timeout: discarded as stale")
                        rec = FaultRecord(seat.index, seat.name, "stale", detail, turn_id, self.gid)
                        self.faults.append(rec)
                        if self.log is not None:
                            self.log.timed("fault", rec.to_json())
                        await session.send_error("stale", detail, self.gid, turn_id)
                        done.set()
            except StreamClosed:
                pass
            finally:
                done.set()

    async def _finish_drains(self) -> None:
        for seat in self.seats:
            if seat.drain_done is not None:
                with trio.move_on_at(seat.drain_until):
                    await seat.drain_done.wait()
                if seat.drain_scope is not None:
                    seat.drain_scope.cancel()

    # ------------------------------------------------------------------ decisions
    async def _sequential(self, seat: _Seat, decide: str) -> None:
        events: list[dict[str, Any]] | None = None
        if not seat.faulted:
            events = await self._ask_bot(seat, decide, None, in_hand_scope=True)
        await self._after_sequential(seat, decide, events)

    async def _after_sequential(self, seat: _Seat, decide: str, events: list[dict[str, Any]] | None) -> None:
        """Apply the fallback if the bot gave no valid reply (``events`` None), then
        queue the decision's events."""
        if events is None:
            state = self.state
            action = state.random_action(seat.hs, self.fallback())
            events = state.apply(seat.hs, action)
            self._log_act(seat, None, decide, action, True, 0.0)
        for s in self._enqueue(events):  # usually none: the events wait for each seat's next write
            await self._flush(s)

    async def _simultaneous(self, seats: list[_Seat], decide: str) -> None:
        self._disarm()
        state = self.state
        got: dict[int, Any] = {}

        def checker(hs: int) -> Callable[[Any], Any]:
            def check(action: Any) -> Any:
                card = action.card
                for legal in state.legal_actions(hs):
                    if legal.card == card:
                        return action
                trial = copy.deepcopy(state)
                trial.apply(hs, action)  # raises IllegalAction with the engine's reason
                raise IllegalAction(f"{card!r} is not one of your options now")
            return check

        async def one(seat: _Seat) -> None:
            reply = await self._ask_bot(seat, decide, checker(seat.hs), apply=False)
            if reply is not None:
                got[seat.hs] = reply

        async with trio.open_nursery() as n:
            for seat in seats:
                if not seat.faulted:
                    n.start_soon(one, seat)
        events: list[dict[str, Any]] = []
        for seat in seats:
            hs = seat.hs
            if hs in got:
                action, tid, ms, raw, wall = got[hs]
                events.extend(state.apply(hs, action))
                if self.log is not None:
                    self.log.act_raw(seat.index, tid, decide, raw, ms, wall)
            else:
                action = state.random_action(hs, self.fallback())
                events.extend(state.apply(hs, action))
                self._log_act(seat, None, decide, action, True, 0.0)
        await self._broadcast(events)

    def fallback(self) -> Rng:
        """The hand's fallback generator (``state.fallback_rng()``), made on first
        use: most hands never need it, and it is a pure function of the seed, so
        making it late draws exactly the same actions."""
        rng = self._fallback
        if rng is None:
            state = self.state
            fb = getattr(state, "fallback_rng", None)
            rng = self._fallback = fb() if callable(fb) else Rng(derive(getattr(state, "seed", None) or 0, "fallback"))
        return rng

    def _log_act(self, seat: _Seat, turn_id: int | None, decide: str, action: Any, fallback: bool, ms: float) -> None:
        if self.log is not None:
            self.log.timed("act", {"seat": seat.index, "id": turn_id, "decide": decide,
                                   "action": action_json(decide, action), "fallback": fallback, "ms": round(ms, 3)})

    async def _ask_bot(self, seat: _Seat, decide: str, check: Callable[[Any], Any] | None,
                       apply: bool = True, in_hand_scope: bool = False) -> Any:
        """Send a ``turn`` and wait for a valid reply.

        ``check`` None applies the reply to the game (``state.apply(seat, reply)``).
        Returns ``check(reply)`` (the events, for sequential decisions) or the
        reply itself (``apply=False``), or None after a fault (already handled).
        Cancellation propagates (nothing is applied).

        ``in_hand_scope`` (sequential decisions): the wall-clock wait arms the
        deadline of the hand's reply scope instead of opening a scope of its own;
        if it fires, the decision is finished by :meth:`_resume_wait`. The armed
        deadline is kept while it is at most ``slack`` (a quarter of the limit,
        at most 1 s) early, so it is re-armed about once per ``slack`` of play,
        not per decision; firing early only costs that decision a second wait.
        """
        state = self.state
        session = seat.session
        hs = seat.hs
        clock = seat.clock
        tid = session.next_id
        session.next_id = tid + 1
        move_ms = clock.move_ms
        limit_ms = float(move_ms)
        if clock.bank_ms is not None:
            limit_ms = max(0.0, min(limit_ms, seat.bank_left))
            left = int(seat.bank_left)
        else:
            left = move_ms
        # pre-encoded fragments: {"type":"turn","game":G,"id":N,"decide":D, <view>, "clock":{...}}
        fields = self._fields
        body = fields(hs) if fields is not None else ENCODER.encode(state.view(hs))[1:-1]
        seat.out.append(b'%b%d%b%b,"clock":{"left_ms":%d,"move_ms":%d}}' % (
            self._turn_frag, tid, _DECIDE_FRAG[decide], body, left, move_ms))
        if not (session.pipe_open and not session._closed):
            seat.out = []
            seat.out_size = 0
            return None
        rest = self._flush_nowait(seat)  # the usual case: the whole write fits the pipe at once
        if rest is not None and not await self._flush_rest(seat, rest):
            return None
        now = self._now
        t0 = now()
        expected = REPLY_FOR_DECISION[decide]
        if clock.mode != "cpu":
            # the usual case, wall clock: the wait for the reply line under a deadline (the hand's
            # reply scope for a sequential decision, else a scope of its own)
            deadline = t0 + limit_ms / 1000
            line: bytes | None = None
            early: BotError | None = None
            hand_scope = self._reply_scope if in_hand_scope else None
            if hand_scope is not None:
                armed = self._armed
                if armed > deadline or armed < deadline - min(limit_ms * SLACK_FRACTION / 1000, SLACK_MAX_S):
                    hand_scope.deadline = self._armed = deadline
                self._waiting = (seat, decide, tid, t0, limit_ms)
                line, early = await self._read_reply(seat, tid, True)  # True: the turn was just written
                if now() >= self._armed and hand_scope.cancel_called:
                    # the armed deadline expired while this reply was on its way to us: the
                    # scope will cancel our next checkpoint, so leave it now through one, and
                    # let _resume_wait judge this outcome (nothing is lost or applied twice)
                    self._stash = (line, early)
                    await trio.lowlevel.checkpoint()
                self._waiting = None
            else:
                with trio.move_on_at(deadline):
                    line, early = await self._read_reply(seat, tid, True)
            if line is not None:
                ms = (now() - t0) * 1000
                try:
                    msg = BOT_DECODER.decode(line)
                except (msgspec.DecodeError, RecursionError):  # deeply nested JSON recurses: malformed below
                    msg = None
                if type(msg) is expected and msg.id == tid:  # type: ignore[union-attr]
                    try:
                        action = state.apply(hs, msg) if check is None else check(msg)
                    except IllegalAction:
                        pass  # the general path below builds the error
                    else:
                        think = seat.think
                        think.count += 1
                        think.total_ms += ms
                        if ms > think.max_ms:
                            think.max_ms = ms
                        if clock.bank_ms is not None:
                            seat.bank_left -= ms
                        if apply:
                            if self.log is not None:  # the reply as received is the action record
                                self.log.act_raw(seat.index, tid, decide, line, ms)
                            return action
                        return (action, tid, ms, line, None)
            return await self._ask_slow(seat, decide, check, apply, tid, t0, limit_ms, line, early)
        return await self._ask_slow(seat, decide, check, apply, tid, t0, limit_ms, None, None)

    async def _ask_slow(self, seat: _Seat, decide: str, check: Callable[[Any], Any] | None, apply: bool, tid: int,
                        t0: float, limit_ms: float, first: bytes | None, first_err: BotError | None) -> Any:
        """The general reply loop of :meth:`_ask_bot`: CPU clock, retries, and every
        fault. In wall mode the first attempt's outcome (``first`` line or
        ``first_err``; both None = timed out) comes from the fast path."""
        self._disarm()
        if check is None:
            check = partial(self.state.apply, seat.hs)
        session = seat.session
        clock = seat.clock
        move_ms = clock.move_ms
        cpu_mode = clock.mode == "cpu"
        wall_limit = (clock.ceiling_ms() if cpu_mode else limit_ms) / 1000
        deadline = t0 + wall_limit
        cpu0 = session.cpu_seconds() if cpu_mode else None
        if cpu0 is None:
            cpu_mode = False
            deadline = t0 + limit_ms / 1000
        retries = self.policy.retries
        reader = session.reader
        expected = REPLY_FOR_DECISION[decide]
        fresh = True  # the turn was just written: the reply cannot be there yet
        replayed = clock.mode != "cpu"  # wall mode: the fast path did the first read
        while True:
            err: BotError | None = None
            line: bytes | None = None
            timed_out = False
            if replayed:
                replayed = False
                line, err = first, first_err
                if line is None and err is None:
                    timed_out = True
            elif cpu_mode:
                # wake up at the earliest moment the CPU budget could be spent, re-check, repeat
                while True:
                    used = (session.cpu_seconds() or 0.0) - cpu0  # type: ignore[operator]
                    remaining = limit_ms / 1000 - used
                    if remaining <= 0:
                        timed_out = True
                        break
                    with trio.move_on_at(min(deadline, trio.current_time() + remaining)):
                        line, err = await self._read_reply(seat, tid, fresh)
                        break
                    if trio.current_time() >= deadline:
                        timed_out = True
                        break
            else:
                with trio.move_on_at(deadline):
                    line, err = await self._read_reply(seat, tid, fresh)
                if line is None and err is None:
                    timed_out = True
            fresh = False
            now = trio.current_time()
            wall_ms = (now - t0) * 1000
            if cpu_mode:
                used_s = (session.cpu_seconds() or 0.0) - cpu0  # type: ignore[operator]
                ms = max(0.0, used_s * 1000)
                if line is not None and ms > limit_ms:
                    timed_out = True
            else:
                ms = wall_ms
            if timed_out:
                what = "CPU time" if cpu_mode else "time"
                lim = f"{limit_ms:.0f} ms" + (" (bank)" if clock.bank_ms is not None and limit_ms < move_ms else "")
                # the CPU actually used tells a CPU-limit timeout from a wall-ceiling one (overloaded machine)
                ceiling = (f", wall ceiling {wall_limit * 1000:.0f} ms (it used {ms:.0f} ms of CPU in "
                           f"{wall_ms:.0f} ms)" if cpu_mode else "")
                err = BotTimeout(f"no reply to turn {tid} ({decide}) within the {what} limit of {lim}{ceiling}",
                                 bot=seat.name, seat=seat.index, turn_id=tid)
                line = None
            elif isinstance(err, BotCrashed):
                err = BotCrashed(f"the bot closed its stdout during turn {tid} ({await session.exit_description()})"
                                 f"{_hint(session)}", bot=seat.name, seat=seat.index, turn_id=tid)
                session.pipe_open = False
            action: Any = None
            if line is not None:
                try:
                    msg = decode_line(line, reader.lineno, bot=seat.name, seat=seat.index, turn_id=tid)
                except BotMalformed as exc:
                    err = exc
                    if self.log is not None:
                        self.log.inbound(seat.index, line, ms, False)
                else:
                    mid = getattr(msg, "id", None)
                    if mid is not None and mid != tid:
                        err = BotStale(
                            f"line {reader.lineno}: reply id {mid} is not the current turn's id {tid}"
                            + (" (an earlier turn's reply)" if mid < tid else " (no such turn yet)"),
                            bot=seat.name, seat=seat.index, turn_id=tid)
                    elif type(msg) is not expected:
                        err = BotIllegal(
                            f"line {reader.lineno}: turn {tid} asks for a `{decide}` reply, got `{_tag(msg)}`",
                            bot=seat.name, seat=seat.index, turn_id=tid)
                    else:
                        try:
                            action = check(msg)
                        except IllegalAction as exc:
                            err = BotIllegal(f"line {reader.lineno}: turn {tid}: {exc.reason}", bot=seat.name,
                                            seat=seat.index, turn_id=tid)
                    if err is not None and self.log is not None:
                        self.log.inbound(seat.index, line, ms, True)
            if err is None:
                seat.think.add(ms)
                if clock.bank_ms is not None:
                    seat.bank_left -= ms
                wall = wall_ms if cpu_mode else None
                if apply:
                    if self.log is not None:  # the reply as received is the action record
                        self.log.act_raw(seat.index, tid, decide, line, ms, wall)  # type: ignore[arg-type]
                    return action
                return (action, tid, ms, line, wall)
            if err.fault in _RETRYABLE and retries > 0 and trio.current_time() < deadline:
                retries -= 1
                if self.log is not None:
                    self.log.timed("retry", {"seat": seat.index, "id": tid, "fault": err.fault, "detail": err.detail,
                                             "left": retries})
                msg = {"type": "error", "game": self.gid, "id": tid, "fault": err.fault,
                       "detail": err.detail + retry_note(retries)}
                line = ENCODER.encode(msg)
                if self.log is not None:
                    self.log.out(seat.index, [line])
                await session.send_error(msg["fault"], msg["detail"], self.gid, tid)
                continue
            seat.think.add(ms)
            if clock.bank_ms is not None:
                seat.bank_left -= ms
            await self._fault(seat, err, t0)
            return None


class _Aborted(Exception):
    """The game cannot go on (engine failure); it ends with reason "aborted"."""


class _Stalled(Exception):
    """The hand exceeded ``FaultPolicy.max_decisions``."""


_WIRE_CACHE: dict[tuple[int, int | None], tuple[Any, dict[str, Any], bytes]] = {}


def _wire(rules: Any, players: int | None = None) -> tuple[dict[str, Any], bytes]:
    """``rules.to_wire(players)`` and its JSON, computed once per rules record and
    table size (a league plays thousands of games with the same few records).
    Without ``players``: the rules record of the log header. Callers must not
    modify the dict."""
    key = (id(rules), players)
    hit = _WIRE_CACHE.get(key)
    if hit is not None and hit[0] is rules:
        return hit[1], hit[2]
    wire = rules.to_wire() if players is None else rules.to_wire(players)
    if len(_WIRE_CACHE) >= 64:
        _WIRE_CACHE.clear()
    _WIRE_CACHE[key] = (rules, wire, ENCODER.encode(wire))
    return wire, _WIRE_CACHE[key][2]


def _tag(msg: Any) -> str:
    cfg = getattr(type(msg), "__struct_config__", None)
    return str(cfg.tag) if cfg is not None and cfg.tag is not None else type(msg).__name__


def _hint(session: BotSession) -> str:
    tail = session.stderr_tail().strip()
    return f"; stderr ends: {tail[-300:]!r}" if tail else ""


def _monotonic() -> float:
    import time

    return time.monotonic()


def _utc_now() -> str:
    """The wall-clock date and time now, UTC, ISO 8601 to the millisecond (the
    log header's ``started``: record times ``t`` are relative to the game's start)."""
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _version() -> str:
    from referee import __version__

    return __version__


def _match_json(fmt: Any) -> dict[str, Any] | None:
    if fmt is None:
        return None
    if getattr(fmt, "kind", "single") == "single":
        return None
    out = {}
    for key in ("kind", "hands", "target", "max_hands"):
        if hasattr(fmt, key):
            out[key] = getattr(fmt, key)
    return out


async def play_game(spec: GameSpec, bots: Sequence[BotSession], log_dir: Path | str | None = None) -> GameResult:
    """Play ``spec`` with ``bots[i]`` in seat ``i``; return the result.

    Bot misbehaviour never raises: it becomes a fault in the result. Raises
    ``ValueError`` if the number of sessions (or of ``spec.seat_clocks``) does
    not match ``spec.players`` or a clock is invalid, and ``OSError`` if the
    log cannot be written. On cancellation the log is
    closed with an ``aborted`` footer and the exception propagates; closing
    the sessions is the caller's job (``BotSession.close`` is shielded).
    """
    runner = _Runner(spec, bots, os.fspath(log_dir) if log_dir is not None else None)
    return await runner.run()
