"""The viewer's data ("frames", format version 1): made from a game log by the same
core that replays it, checked and materialized here.

:func:`frames_from_log` replays a game log with :func:`referee.runtime.replay.replay_records`
(the hand machine fed with the recorded replies) and, through the machine's
observer hooks, takes a frame at every step: a hand starting, every public
event of every action (an ask, the family it completed, a draw; a hidden
chickens play, the reveal, each take, the next round), every fault and
retry, and every hand's end. The format is version 1 of
``docs/VIEWER-FORMAT.md`` (a frame's state is a patch on the previous one).

What a frame shows between the events of one action (an ask and the family
it completes are one ``apply`` of the engine) is derived from the events'
public contents; after the action's last event the frame's state is the
engine's own, and the two are checked against each other, so the viewer can
never disagree with ``referee replay``.

The consumer side (:func:`check_frames`, :func:`apply_patch`, :func:`materialize`)
reads the format as the page's JavaScript does, for tests and tools.

Errors: a missing, unreadable, corrupt or truncated log raises
:class:`~referee.errors.UserError` (as replay does); a log that replay finds
inconsistent still gives its frames up to the mismatch, with ``verified``
false and the mismatch in ``mismatch``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.core.errors import public_fault_detail
from referee.rules import RulesError
from referee.rules.ask import AskRules
from referee.rules.registry import kind_of, style_of_wire

if TYPE_CHECKING:  # pragma: no cover
    from referee.core.machine import HandMachine
    from referee.core.spec import FaultRecord

__all__ = [
    "FORMAT",
    "VERSION",
    "GAME_ID_RE",
    "apply_patch",
    "check_frames",
    "frames_from_log",
    "frames_from_records",
    "materialize",
]

FORMAT = "card-referee-frames"
VERSION = 1

#: what a game id must look like to be loaded by the viewer shell (``viewer.html?game=ID`` loads
#: ``ID.frames.js`` from the page's folder; anything else could name a file elsewhere)
GAME_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


def check_frames(data: Any) -> None:
    """Check the envelope of a frames document: format, version, seats and at least one frame.

    Raises :class:`TypeError` when ``data`` is not a mapping and :class:`ValueError` saying what is
    wrong otherwise (the page would show the same problem as an error line instead of the table).
    The frames' contents are not validated here.
    """
    if not isinstance(data, Mapping):
        raise TypeError(f"frames data must be a JSON object, not {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise ValueError(f"not a frames document: format is {data.get('format')!r}, expected {FORMAT!r}")
    if data.get("version") != VERSION:
        raise ValueError(
            f"frames version {data.get('version')!r} is not supported (this viewer reads version {VERSION})"
        )
    frames = data.get("frames")
    if not isinstance(frames, list) or not frames:
        raise ValueError("frames data has no frames (a game has at least its start frame)")
    seats = data.get("seats")
    if not isinstance(seats, list) or not seats:
        raise ValueError("frames data has no seats")
    if not isinstance(data.get("game"), str) or not data["game"]:
        raise ValueError("frames data has no game id")


def apply_patch(state: Mapping[str, Any], patch: Mapping[str, Any] | None) -> dict[str, Any]:
    """The state after ``patch``: keys absent from the patch keep their value, ``hands`` merges
    per seat, every other key is replaced. Neither argument is modified."""
    out = dict(state)
    for key, value in (patch or {}).items():
        if key == "hands":
            out["hands"] = {**(state.get("hands") or {}), **(value or {})}
        else:
            out[key] = value
    return out


def materialize(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The full state at every frame of a frames document (frame 0's patch applied to an empty
    state, then each later patch in turn). Raises as :func:`check_frames`."""
    check_frames(data)
    states: list[dict[str, Any]] = []
    state: dict[str, Any] = {}
    for frame in data["frames"]:
        state = apply_patch(state, frame.get("state"))
        states.append(state)
    return states


# ----------------------------------------------------------------------------- the producer

_STATE_KEYS = (
    "hands",
    "counts",
    "laid",
    "scores",
    "turn",
    "waiting",
    "stock",
    "centre",
    "played",
    "round",
    "leader",
    "commissioner",
    "dealer",
    "faulted",
    "in_hand",
)


def _own(v: Any) -> Any:
    """A copy of a state value as JSON would give it back (lists of lists of cards, numbers,
    booleans; tuples become lists), without encoding it: the viewer takes thousands a night."""
    if isinstance(v, (list, tuple)):
        return [_own(x) if isinstance(x, (list, tuple, dict)) else x for x in v]
    if isinstance(v, dict):
        return {str(k): _own(x) for k, x in v.items()}
    return v


class _Frames:
    """The machine's observer during the viewer's replay: builds the frames."""

    def __init__(self, players: int, kind: str) -> None:
        self.n = players
        self.kind = kind
        self.frames: list[dict[str, Any]] = []
        self.full: dict[str, Any] = {}  # the state shown by the last frame
        self.hand_no = 0
        self.base: list[Any] = [0] * players  # match totals before the current hand
        self.names: list[str] = []
        self.deck_order: dict[str, int] = {}
        self.values: dict[str, int] = {}
        #: the first disagreement between the events and the engine (a bug: never expected)
        self.problem: str | None = None
        #: faults the machine records before the first hand's start frame (a bot whose process
        #: never started: its crash is recorded as the hand begins), shown right after that frame
        self.early: list[FaultRecord] = []

    # ---------------------------------------------------------------- snapshots
    def _snapshot(self, m: HandMachine) -> dict[str, Any]:
        """The state of the game now, per match seat, read from the engine."""
        state = m.state
        n = self.n
        seats = m.hand_seats
        hands: list[Any] = [None] * n
        counts: list[Any] = [None] * n
        in_hand = [False] * n
        for s in seats:
            hands[s.index] = list(state.hand(s.hs))
            counts[s.index] = len(hands[s.index])
            in_hand[s.index] = True
        pending = [seats[p].index for p in state.pending()] if m.playing and not state.terminal else []
        snap: dict[str, Any] = {
            "hands": hands,
            "counts": counts,
            "in_hand": in_hand,
            "faulted": [s.index for s in m.seats if s.faulted],
            "waiting": pending,
        }
        # the engine's public state, as its kind registers it (referee.rules.registry), per match seat
        kind = kind_of(m.rules)
        public = kind.snapshot(state, state.pending() if pending else ())
        for key, value in public.items():
            if key in kind.per_seat:
                per_seat: list[Any] = [[] if key == "laid" else (0 if key == "scores" else False) for _ in range(n)]
                for s in seats:
                    per_seat[s.index] = value[s.hs]
                value = per_seat
            elif key in kind.seat_refs and value is not None:
                value = seats[value].index
            snap[key] = value
        if m.match is not None:  # a match's scores: the totals before this hand plus this hand's
            snap["scores"] = [self.base[i] + (snap["scores"][i] if in_hand[i] else 0) for i in range(n)]
        return snap

    def _frame(
        self, m: HandMachine, kind: str, text: str, state: dict[str, Any], owned: bool = True, **extra: Any
    ) -> None:
        """``owned``: ``state`` is fresh and nobody changes it afterwards (a snapshot, a ``_copy()``);
        otherwise the frame takes its own copy (the caller goes on changing its lists)."""
        if not owned:
            state = {k: _own(v) for k, v in state.items()}
        patch: dict[str, Any] = {}
        if not self.frames:
            patch = {k: v for k, v in state.items()}
            patch["hands"] = {str(i): h for i, h in enumerate(state["hands"])}
        else:
            for k, v in state.items():
                if k == "hands":
                    changed = {str(i): h for i, h in enumerate(v) if h != self.full["hands"][i]}
                    if changed:
                        patch["hands"] = changed
                elif self.full.get(k) != v:
                    patch[k] = v
        # the frame's own copy is the state shown from now on (nothing changes it in place: _copy copies)
        self.full = state
        frame = {
            "i": len(self.frames),
            "hand": self.hand_no,
            "game": m.gid,
            "kind": kind,
            "text": text,
            "actor": None,
            "target": None,
            "ask": None,
            "please": None,
            "hit": None,
            "rude": None,
            "cards": None,
            "fallback": False,
            "think_ms": None,
            "fault": None,
            "retry": None,
            "end": None,
            "state": patch,
        }
        frame.update(extra)
        self.frames.append(frame)

    def _copy(self) -> dict[str, Any]:
        out = {k: (list(v) if isinstance(v, list) else v) for k, v in self.full.items()}
        out["hands"] = [list(h) if h is not None else None for h in self.full["hands"]]
        out["laid"] = [list(x) for x in self.full["laid"]]
        return out

    def _sorted(self, cards: list[str]) -> list[str]:
        order = self.deck_order
        return sorted(cards, key=lambda c: order.get(c, 1 << 30))

    # ---------------------------------------------------------------- observer hooks
    def hand_started(self, m: HandMachine) -> None:
        self.hand_no += 1
        if not self.names:
            self.names = [s.name for s in m.seats]
            rules = m.rules
            self.deck_order = {c: i for i, c in enumerate(kind_of(rules).deck(rules))}
            if self.kind == "chickens":
                from referee.rules.chickens import CARD_VALUES

                self.values = dict(CARD_VALUES)
        if m.match is not None:
            self.base = list(m.match.totals)
        snap = self._snapshot(m)
        who = ", ".join(self.names[s.index] for s in m.hand_seats)
        what = "a tie-break hand" if self.hand_no > 1 and len(m.hand_seats) < self.n else "the cards are dealt"
        self._frame(m, "start", f"hand {self.hand_no} ({m.gid}): {what}; seats {who}", snap)
        early, self.early = self.early, []
        for rec in early:
            self.faulted(m, rec)

    def applied(
        self,
        m: HandMachine,
        seat: int,
        decide: str,
        action: Any,
        events: list[dict[str, Any]],
        fallback: bool,
        ms: float | None,
    ) -> None:
        name = self.names[seat]
        who = f"{name} (the referee's fallback)" if fallback else name
        common = {"actor": seat, "fallback": fallback, "think_ms": None if ms is None else round(ms, 3)}
        if self.kind == "chickens":
            self._chickens(m, seat, decide, action, events, who, common)
        else:
            self._ask(m, seat, action, events, who, common)

    def _ask(
        self, m: HandMachine, seat: int, action: Any, events: list[dict[str, Any]], who: str, common: dict[str, Any]
    ) -> None:
        hseats = m.hand_seats
        st = self._copy()
        last = len(events) - 1
        polite_rules = isinstance(m.rules, AskRules) and m.rules.please
        then = ""  # who asks next, said after the last event the ask caused (a lay, a draw)
        for k, ev in enumerate(events):
            kind = ev["kind"]
            if kind == "ask":
                s, t = hseats[ev["seat"]].index, hseats[ev["target"]].index
                cards = list(ev.get("cards") or [])
                st["hands"][t] = [c for c in st["hands"][t] if c not in cards]
                st["hands"][s] = self._sorted(st["hands"][s] + cards)
                st["counts"][t] -= len(cards)
                st["counts"][s] += len(cards)
                what = ev.get("card") or ev.get("family")
                # "please" means something only in a politeness variant
                please = bool(ev.get("please")) and polite_rules
                polite = " please" if please else ""
                if ev.get("rude"):
                    result = "rude (no please): nothing moves"
                elif cards:
                    result = "hit: gets " + ", ".join(cards)
                else:
                    result = "miss"
                nxt = ev.get("next")
                turn_to = f"; {self.names[hseats[nxt].index]} asks next" if nxt is not None else ""
                if k != last:
                    then, turn_to = turn_to, ""
                extra = dict(
                    common,
                    target=t,
                    ask={"card": what} if ev.get("card") else {"family": what},
                    please=please,
                    hit=bool(cards),
                    rude=bool(ev.get("rude")),
                    cards=cards,
                )
                self._emit(
                    m, k == last, "ask", f"{who} asks {self.names[t]} for {what}{polite}: {result}{turn_to}", st, extra
                )
            elif kind == "laid":
                s = hseats[ev["seat"]].index
                fam = ev["family"]
                members = [c for c in st["hands"][s] if self._family(m, c) == fam]
                st["hands"][s] = [c for c in st["hands"][s] if c not in members]
                st["counts"][s] -= len(members)
                st["laid"][s] = st["laid"][s] + [fam]
                points = kind_of(m.rules).family_points(m.rules)
                st["scores"][s] += points
                self._emit(
                    m,
                    k == last,
                    "laid",
                    f"{self.names[s]} lays family {fam} (+{points})" + (then if k == last else ""),
                    st,
                    {"actor": s, "cards": members},
                )
            elif kind == "draw":
                s = hseats[ev["seat"]].index
                card = ev.get("card")
                if card is not None:
                    st["hands"][s] = self._sorted(st["hands"][s] + [card])
                st["counts"][s] += 1
                st["stock"] = (st.get("stock") or 1) - 1
                self._emit(
                    m,
                    k == last,
                    "draw",
                    f"{self.names[s]} draws a card from the stock" + (then if k == last else ""),
                    st,
                    {"actor": s, "cards": [card] if card else None},
                )
            else:
                self._emit(m, k == last, kind, f"{kind}", st, {})

    @staticmethod
    def _family(m: HandMachine, card: str) -> str:
        family_of = kind_of(m.rules).family_of
        assert family_of is not None  # an ask-style kind registers it
        return family_of(m.rules, card)

    def _chickens(
        self,
        m: HandMachine,
        seat: int,
        decide: str,
        action: Any,
        events: list[dict[str, Any]],
        who: str,
        common: dict[str, Any],
    ) -> None:
        card = action.card
        st = self._copy()
        # at the end of a round the engine discards the centre and the round's takes: the
        # frame of the action's last event then shows them as the events left them
        round_over = m.state.terminal or any(ev["kind"] == "round" for ev in events)
        if decide == "play":
            st["played"] = list(st["played"])
            st["played"][seat] = True
            self._emit(m, not events, "play", f"{who} plays a card face down", st, dict(common, cards=[card]))
        last = len(events) - 1
        for k, ev in enumerate(events):
            kind = ev["kind"]
            if kind == "reveal":
                plays = ev["plays"]
                for s, c in enumerate(plays):
                    st["hands"][s] = [x for x in st["hands"][s] if x != c]
                    st["counts"][s] = len(st["hands"][s])
                st["centre"] = list(ev["centre"])
                st["played"] = [False] * self.n
                shown = ", ".join(f"{self.names[s]} {c}" for s, c in enumerate(plays))
                self._emit(
                    m,
                    k == last and not round_over,
                    "reveal",
                    f"reveal: {shown}; centre: {', '.join(ev['centre']) or 'empty'}",
                    st,
                    {"cards": list(plays)},
                )
            elif kind == "take":
                s = ev["seat"]
                c = ev["card"]
                st["laid"][s] = st["laid"][s] + [c]
                st["scores"] = list(st["scores"])
                st["scores"][s] += self.values.get(c, 0)
                st["centre"] = list(ev["centre"])
                value = self.values.get(c, 0)
                extra = dict(common, cards=[c]) if s == seat else {"actor": s, "cards": [c]}
                self._emit(
                    m,
                    k == last and not round_over,
                    "take",
                    f"{self.names[s] if s != seat else who} takes {c} ({value:+d})",
                    st,
                    extra,
                )
            elif kind == "round":
                self._emit(
                    m,
                    True,
                    "round",
                    f"round {ev['round']}: leader {self.names[ev['leader']]}, "
                    f"commissioner {self.names[ev['commissioner']]}; scores {ev['scores']}",
                    st,
                    {},
                    authoritative=True,
                )

    def _emit(
        self,
        m: HandMachine,
        last: bool,
        kind: str,
        text: str,
        st: dict[str, Any],
        extra: dict[str, Any],
        authoritative: bool = False,
    ) -> None:
        """A frame for one event. After an action's last event the engine's own
        state is shown, and the state derived from the events must equal it."""
        if last or authoritative:
            snap = self._snapshot(m)
            if not authoritative and self.problem is None:
                for key in ("hands", "counts", "laid", "scores", "centre", "stock"):
                    if key in st and key in snap and st[key] != snap[key]:
                        self.problem = (
                            f"frame {len(self.frames)}: the {key} derived from the events of {m.gid} "
                            f"differ from the engine's ({st[key]} vs {snap[key]})"
                        )
                        break
            self._frame(m, kind, text, snap, **extra)
            return
        if m.playing:
            st = dict(st, waiting=[], turn=st.get("turn"))
        self._frame(m, kind, text, st, owned=False, **extra)

    def faulted(self, m: HandMachine, rec: FaultRecord) -> None:
        if not self.frames:  # before the start frame: there is no state to mark yet
            self.early.append(rec)
            return
        st = self._copy()
        st["faulted"] = sorted(set(st.get("faulted") or []) | {rec.seat})
        # the text says what every seat was told (the public fault event); the bot's own detail is in "fault"
        self._frame(
            m,
            "fault",
            f"{rec.bot} faults ({rec.fault}): {public_fault_detail(rec.fault)}",
            st,
            actor=rec.seat,
            fault={"fault": rec.fault, "detail": rec.detail},
        )

    def retried(self, m: HandMachine, seat: int, fault: str, detail: str, left: int) -> None:
        # only that bot learns of a refused reply: the text names no detail (it is in "retry")
        self._frame(
            m,
            "retry",
            f"{self.names[seat]}'s reply is refused ({fault}); it may try again "
            f"({left} more {'retry' if left == 1 else 'retries'} after this one)",
            self._copy(),
            actor=seat,
            retry={"fault": fault, "detail": detail, "left": left},
        )

    def hand_ended(self, m: HandMachine, scores: list[Any], ranks: list[int], reason: str, detail: str | None) -> None:
        st = self._copy()
        st["waiting"] = []
        st["turn"] = None
        what = {
            "complete": "ends",
            "stalled": "ends by the stalemate rule (no card moved for too long)",
            "aborted": "is aborted",
        }.get(reason, reason)
        shown = ", ".join(f"{self.names[s.index]} {scores[s.hs]}" for s in m.hand_seats)
        self._frame(
            m,
            "end",
            f"hand {self.hand_no} {what}: {shown}" + (f" ({detail})" if detail else ""),
            st,
            end={"scores": list(scores), "ranks": list(ranks), "reason": reason, "detail": detail},
        )


def frames_from_records(records: list[tuple[int, Any, dict[str, Any]]], name: str = "log") -> dict[str, Any]:
    """The viewer data of a loaded log (see the module docstring)."""
    header = records[0][2]
    footer = records[-1][2]["footer"]
    players = int(header.get("players", 0))
    try:
        kind = style_of_wire(header.get("rules") or {})
    except RulesError:  # an unknown game: replay says so (its mismatch), the page shows the ask layout
        kind = "ask"
    obs = _Frames(players, kind)
    from referee.runtime.replay import replay_records

    report = replay_records(records, name, observer=obs)
    return {
        "format": FORMAT,
        "version": VERSION,
        "game": header.get("game"),
        "variant": header.get("variant"),
        "kind": kind,
        "rules": header.get("rules"),
        "players": players,
        "seats": [
            {"seat": s.get("seat"), "bot": s.get("bot"), "hello": s.get("hello")} for s in header.get("seats", [])
        ],
        "match": header.get("match"),
        "seed": header.get("seed"),
        "started": header.get("started"),
        "result": {k: footer.get(k) for k in ("scores", "ranks", "win_shares", "forfeits", "reason", "detail")},
        "log_capped": bool(footer.get("log_capped")),
        "verified": report.ok and obs.problem is None,
        "mismatch": report.mismatches[0] if report.mismatches else obs.problem,
        "frames": obs.frames,
    }


def frames_from_log(path: str | Path) -> dict[str, Any]:
    """The viewer data of the game log at ``path``. Raises ``UserError`` for a
    missing, unreadable, corrupt or truncated log."""
    from referee.runtime.replay import load_log

    return frames_from_records(load_log(path), str(path))
