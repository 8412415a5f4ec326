"""The viewer's data ("frames", format version 1): made by the core that plays and replays the
game, checked and materialized here.

The frames builder is the hand machine's observer: through its hooks it takes a frame at every
step (a hand starting, every public event of every action - an ask, the family it completed, a
draw; a hidden chickens play, the reveal, each take, the next round - every fault and retry, and
every hand's end). During a night it is fed by the machine that plays the game
(:mod:`referee.view.live`, which writes the frames as they are made and the page at the end);
:func:`frames_from_log` feeds it from :func:`referee.runtime.replay.replay_records` for a game
without a page. The format is version 1 of ``docs/VIEWER-FORMAT.md`` (a frame's state is a patch on
the previous one).

The state a frame shows is derived from the events' public contents, with the engine's turn and
waiting seats after an action's last event; the derived state is checked against the engine's at
every hand's end, and after every action in the replay (``strict``), so the viewer can never
disagree with ``referee replay`` (and ``referee verify`` compares every page with its log's frames).

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
    "HEADER_FIELDS",
    "frames_document",
    "frames_from_log",
    "frames_from_records",
    "frames_header",
    "new_builder",
    "materialize",
]

FORMAT = "card-referee-frames"
VERSION = 1
#: the version of the documents that hold the game's events (:mod:`referee.view.events`)
EVENTS_VERSION = 2

#: what a game id must look like to be loaded by the viewer shell (``viewer.html?game=ID`` loads
#: ``ID.frames.js`` from the page's folder; anything else could name a file elsewhere)
GAME_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


def check_frames(data: Any) -> None:
    """Check the envelope of a frames document: format, version, seats and at least one frame (version
    1) or event (version 2, :mod:`referee.view.events`).

    Raises :class:`TypeError` when ``data`` is not a mapping and :class:`ValueError` saying what is
    wrong otherwise (the page would show the same problem as an error line instead of the table).
    The frames' contents are not validated here.
    """
    if not isinstance(data, Mapping):
        raise TypeError(f"frames data must be a JSON object, not {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise ValueError(f"not a frames document: format is {data.get('format')!r}, expected {FORMAT!r}")
    if data.get("version") == EVENTS_VERSION:
        events = data.get("events")
        if not isinstance(events, list) or not events:
            raise ValueError("frames data of version 2 has no events (a game has at least its start)")
    elif data.get("version") != VERSION:
        raise ValueError(
            f"frames version {data.get('version')!r} is not supported (this viewer reads versions {VERSION} and "
            f"{EVENTS_VERSION})"
        )
    else:
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
    state, then each later patch in turn). Raises as :func:`check_frames`; a version 2 document (its
    events) is expanded by the page (``assets/expand.js``), not here: :class:`ValueError`."""
    check_frames(data)
    if data.get("version") != VERSION:
        raise ValueError("a version 2 document holds events, not frames: the page expands them (assets/expand.js)")
    states: list[dict[str, Any]] = []
    state: dict[str, Any] = {}
    for frame in data["frames"]:
        state = apply_patch(state, frame.get("state"))
        states.append(state)
    return states


# ----------------------------------------------------------------------------- the producer


#: a frame's fields, in order, before its own values (:meth:`_Frames._put`)
_FRAME: dict[str, Any] = {
    "i": 0,
    "hand": 0,
    "game": None,
    "kind": "",
    "text": "",
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
    "state": None,
}
#: the state keys the events of an action change, checked against the engine
_CHECKED = ("hands", "counts", "laid", "scores", "stock", "faulted")
#: chickens: the same, where the engine's state is the events' (the end of a round clears
#: the centre and the takes at once; its frames show them as the events left them)
_CHECKED_CHICKENS = ("hands", "counts", "scores", "faulted")


def public_state(m: HandMachine, base: list[Any] | None) -> dict[str, Any]:
    """The public state of the game now, per match seat, read from the engine (as a version 1 frame
    shows it, and a version 2 hand start; ``base``: a match's totals before the hand)."""
    state = m.state
    n = m.spec.players
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
    if base is not None:
        snap["scores"] = [base[i] + (snap["scores"][i] if in_hand[i] else 0) for i in range(n)]
    return snap


class _Frames:
    """The machine's observer that builds the frames: during the night the playing game's machine
    (:mod:`referee.view.live`), and the replay's for an older log (:func:`frames_from_log`).

    The state shown is kept here (``full``) and changed by what each event says (a hit moves the
    cards between two hands, a lay takes a family out of one, a draw adds one card); a frame's patch
    holds only the keys its event changed. Nothing is copied: a value in ``full`` is never changed in
    place once shown (a change makes a new list), so a frame's patch can share it. After an action's
    last event the engine's own turn, waiting seats, scores and stock are shown. The derived hands,
    counts and laid families are checked against the engine's at every hand's end and, with
    ``strict`` (the replay's builder), after every action; the first difference is ``problem``."""

    def __init__(self, players: int, kind: str, strict: bool = False) -> None:
        self.n = players
        self.kind = kind
        self.strict = strict
        self.frames: list[dict[str, Any]] = []
        self.full: dict[str, Any] = {}  # the state shown by the last frame
        self.hands: list[Any] = []  # full["hands"], per seat (the list itself is never shown)
        self.hand_no = 0
        self.base: list[Any] = [0] * players  # match totals before the current hand
        self.names: list[str] = []
        self.deck_order: dict[str, int] = {}
        self.values: dict[str, int] = {}
        self.family: dict[str, str] = {}
        self.points = 1
        self.polite = False
        self.gid: str | None = None
        #: the first disagreement between the events and the engine (a bug: never expected)
        self.problem: str | None = None
        #: faults the machine records before the first hand's start frame (a bot whose process
        #: never started: its crash is recorded as the hand begins), shown right after that frame
        self.early: list[FaultRecord] = []

    # ---------------------------------------------------------------- snapshots
    def _snapshot(self, m: HandMachine) -> dict[str, Any]:
        """The state of the game now, per match seat, read from the engine."""
        return public_state(m, self.base if m.match is not None else None)

    def _check(self, m: HandMachine, keys: tuple[str, ...] = _CHECKED) -> None:
        """Compare the state shown with the engine's (the first difference becomes ``problem``)."""
        if self.problem is not None:
            return
        snap = self._snapshot(m)
        full = self.full
        for key in keys:
            if key in snap and key in full and full[key] != snap[key]:
                self.problem = (
                    f"frame {len(self.frames) - 1}: the {key} derived from the events of {m.gid} "
                    f"differ from the engine's ({full[key]} vs {snap[key]})"
                )
                return

    def _shown(self, m: HandMachine) -> dict[str, Any]:
        """After an action's last event: the engine's waiting seats and turn (chickens: and who has
        played face down), to be shown with the state the events left."""
        state = m.state
        pending = state.pending()
        if pending and m.playing and not state.terminal:
            seats = m.hand_seats
            waiting = [seats[p].index for p in pending]
        else:
            waiting = []
        if self.kind == "ask":
            return {"waiting": waiting, "turn": waiting[0] if waiting else None}
        decision = state.decision() if not state.terminal else ""
        playing = decision == "play"
        return {
            "waiting": waiting,
            "played": [playing and i not in waiting for i in range(self.n)],
            "turn": waiting[0] if len(waiting) == 1 and decision == "take" else None,
        }

    def _put(self, kind: str, text: str, changes: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        """A frame: ``changes`` holds new values of state keys (``hands``: a dict of seat to its
        new hand); the patch keeps those that differ from the state shown."""
        full = self.full
        patch: dict[str, Any] = {}
        for k, v in changes.items():
            if k == "hands":
                old = self.hands
                changed = {}
                for i, h in v.items():
                    if h != old[i]:
                        old[i] = h
                        changed[str(i)] = h
                if changed:
                    patch["hands"] = changed
            elif full.get(k) != v:
                full[k] = v
                patch[k] = v
        frame = _FRAME.copy()
        frame["i"] = len(self.frames)
        frame["hand"] = self.hand_no
        frame["game"] = self.gid
        frame["kind"] = kind
        frame["text"] = text
        if extra:
            frame.update(extra)
        frame["state"] = patch
        self.frames.append(frame)

    def _sorted(self, cards: list[str]) -> list[str]:
        try:
            return sorted(cards, key=self.deck_order.__getitem__)
        except KeyError:  # a card not in the deck (never in a valid game): last
            order = self.deck_order
            return sorted(cards, key=lambda c: order.get(c, 1 << 30))

    # ---------------------------------------------------------------- observer hooks
    def hand_started(self, m: HandMachine) -> None:
        self.hand_no += 1
        self.gid = m.gid
        if not self.names:
            self.names = [s.name for s in m.seats]
            rules = m.rules
            game = kind_of(rules)
            deck = game.deck(rules)
            self.deck_order = {c: i for i, c in enumerate(deck)}
            if self.kind == "ask":
                self.points = game.family_points(rules)
                self.polite = bool(getattr(rules, "please", False))
                family_of = game.family_of
                assert family_of is not None  # an ask-style kind registers it
                self.family = {c: family_of(rules, c) for c in deck}
            else:
                from referee.rules.chickens import CARD_VALUES

                self.values = dict(CARD_VALUES)
        if m.match is not None:
            self.base = list(m.match.totals)
        snap = self._snapshot(m)
        who = ", ".join(self.names[s.index] for s in m.hand_seats)
        what = "a tie-break hand" if self.hand_no > 1 and len(m.hand_seats) < self.n else "the cards are dealt"
        text = f"hand {self.hand_no} ({m.gid}): {what}; seats {who}"
        hands = snap.pop("hands")
        if not self.frames:
            self.hands = list(hands)
            self.full = {"hands": self.hands}
            first = {"hands": {str(i): h for i, h in enumerate(hands)}, **snap}
            self.full.update(snap)
            frame = _FRAME.copy()
            frame.update(i=0, hand=self.hand_no, game=m.gid, kind="start", text=text, state=first)
            self.frames.append(frame)
        else:
            self._put("start", text, {"hands": dict(enumerate(hands)), **snap})
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
            self._ask(m, seat, events, who, common)
        if self.strict:
            self._check(m, _CHECKED if self.kind == "ask" else _CHECKED_CHICKENS)

    def _between(self, m: HandMachine, changes: dict[str, Any]) -> dict[str, Any]:
        """``changes`` of an event that is not its action's last: no seat is awaited in between."""
        if m.playing:
            changes["waiting"] = []
        return changes

    def _ask(self, m: HandMachine, seat: int, events: list[dict[str, Any]], who: str, common: dict[str, Any]) -> None:
        hseats = m.hand_seats
        names = self.names
        hands = self.hands
        full = self.full
        last = len(events) - 1
        then = ""  # who asks next, said after the last event the ask caused (a lay, a draw)
        for k, ev in enumerate(events):
            kind = ev["kind"]
            changes: dict[str, Any]
            if kind == "ask":
                s, t = hseats[ev["seat"]].index, hseats[ev["target"]].index
                cards = ev.get("cards") or []
                if cards:
                    cards = list(cards)
                    counts = full["counts"][:]
                    counts[t] -= len(cards)
                    counts[s] += len(cards)
                    changes = {
                        "hands": {t: [c for c in hands[t] if c not in cards], s: self._sorted(hands[s] + cards)},
                        "counts": counts,
                    }
                else:
                    cards = []
                    changes = {}
                card = ev.get("card")
                what = card or ev.get("family")
                # "please" means something only in a politeness variant
                please = self.polite and bool(ev.get("please"))
                rude = bool(ev.get("rude"))
                if rude:
                    result = "rude (no please): nothing moves"
                elif cards:
                    result = "hit: gets " + ", ".join(cards)
                else:
                    result = "miss"
                nxt = ev.get("next")
                turn_to = f"; {names[hseats[nxt].index]} asks next" if nxt is not None else ""
                if k != last:
                    then, turn_to = turn_to, ""
                extra = common.copy()
                extra["target"] = t
                extra["ask"] = {"card": what} if card else {"family": what}
                extra["please"] = please
                extra["hit"] = bool(cards)
                extra["rude"] = rude
                extra["cards"] = cards
                text = f"{who} asks {names[t]} for {what}{' please' if please else ''}: {result}{turn_to}"
            elif kind == "laid":
                s = hseats[ev["seat"]].index
                fam = ev["family"]
                family = self.family
                held = hands[s]
                members = [c for c in held if family.get(c) == fam]
                counts = full["counts"][:]
                counts[s] -= len(members)
                laid = full["laid"][:]
                laid[s] = laid[s] + [fam]
                scores = full["scores"][:]
                scores[s] += self.points
                changes = {
                    "hands": {s: [c for c in held if c not in members]},
                    "counts": counts,
                    "laid": laid,
                    "scores": scores,
                }
                extra = {"actor": s, "cards": members}
                text = f"{names[s]} lays family {fam} (+{self.points})" + (then if k == last else "")
            elif kind == "draw":
                s = hseats[ev["seat"]].index
                card = ev.get("card")
                counts = full["counts"][:]
                counts[s] += 1
                changes = {"counts": counts, "stock": (full.get("stock") or 1) - 1}
                if card is not None:
                    changes["hands"] = {s: self._sorted(hands[s] + [card])}
                extra = {"actor": s, "cards": [card] if card else None}
                text = f"{names[s]} draws a card from the stock" + (then if k == last else "")
            else:
                changes, extra, text = {}, {}, f"{kind}"
            if k == last:
                changes.update(self._shown(m))
            elif m.playing:
                changes["waiting"] = []  # no seat is awaited between the events of one action
            self._put(kind, text, changes, extra)

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
        full = self.full
        names = self.names
        # at the end of a round the engine discards the centre and the round's takes: the
        # frame of the action's last event then shows them as the events left them
        round_over = m.state.terminal or any(ev["kind"] == "round" for ev in events)
        if decide == "play":
            played = list(full["played"])
            played[seat] = True
            changes: dict[str, Any] = {"played": played}
            if not events:
                changes.update(self._shown(m))
            else:
                self._between(m, changes)
            self._put("play", f"{who} plays a card face down", changes, dict(common, cards=[card]))
        last = len(events) - 1
        for k, ev in enumerate(events):
            kind = ev["kind"]
            final = k == last and not round_over
            if kind == "reveal":
                plays = ev["plays"]
                hands = self.hands
                new = {s: [x for x in hands[s] if x != c] for s, c in enumerate(plays)}
                counts = list(full["counts"])
                for s in new:
                    counts[s] = len(new[s])
                changes = {
                    "hands": new,
                    "counts": counts,
                    "centre": list(ev["centre"]),
                    "played": [False] * self.n,
                }
                shown = ", ".join(f"{names[s]} {c}" for s, c in enumerate(plays))
                text = f"reveal: {shown}; centre: {', '.join(ev['centre']) or 'empty'}"
                extra = {"cards": list(plays)}
            elif kind == "take":
                s = ev["seat"]
                c = ev["card"]
                value = self.values.get(c, 0)
                laid = list(full["laid"])
                laid[s] = laid[s] + [c]
                scores = list(full["scores"])
                scores[s] += value
                changes = {"laid": laid, "scores": scores, "centre": list(ev["centre"])}
                extra = dict(common, cards=[c]) if s == seat else {"actor": s, "cards": [c]}
                text = f"{names[s] if s != seat else who} takes {c} ({value:+d})"
            elif kind == "round":
                # the engine's own state (a new round: its hands, the takes and centre cleared)
                snap = self._snapshot(m)
                snap["hands"] = dict(enumerate(snap["hands"]))
                text = (
                    f"round {ev['round']}: leader {names[ev['leader']]}, "
                    f"commissioner {names[ev['commissioner']]}; scores {ev['scores']}"
                )
                self._put("round", text, snap)
                continue
            else:
                continue
            if final:
                changes.update(self._shown(m))
            else:
                self._between(m, changes)
            self._put(kind, text, changes, extra)

    def faulted(self, m: HandMachine, rec: FaultRecord) -> None:
        if not self.frames:  # before the start frame: there is no state to mark yet
            self.early.append(rec)
            return
        faulted = sorted(set(self.full.get("faulted") or []) | {rec.seat})
        # the text says what every seat was told (the public fault event); the bot's own detail is in "fault"
        self._put(
            "fault",
            f"{rec.bot} faults ({rec.fault}): {public_fault_detail(rec.fault)}",
            {"faulted": faulted},
            {"actor": rec.seat, "fault": {"fault": rec.fault, "detail": rec.detail}},
        )

    def retried(self, m: HandMachine, seat: int, fault: str, detail: str, left: int) -> None:
        # only that bot learns of a refused reply: the text names no detail (it is in "retry")
        self._put(
            "retry",
            f"{self.names[seat]}'s reply is refused ({fault}); it may try again "
            f"({left} more {'retry' if left == 1 else 'retries'} after this one)",
            {},
            {"actor": seat, "retry": {"fault": fault, "detail": detail, "left": left}},
        )

    def hand_ended(self, m: HandMachine, scores: list[Any], ranks: list[int], reason: str, detail: str | None) -> None:
        what = {
            "complete": "ends",
            "stalled": "ends by the stalemate rule (no card moved for too long)",
            "aborted": "is aborted",
        }.get(reason, reason)
        shown = ", ".join(f"{self.names[s.index]} {scores[s.hs]}" for s in m.hand_seats)
        self._put(
            "end",
            f"hand {self.hand_no} {what}: {shown}" + (f" ({detail})" if detail else ""),
            {"waiting": [], "turn": None},
            {"end": {"scores": list(scores), "ranks": list(ranks), "reason": reason, "detail": detail}},
        )
        self._check(m, _CHECKED if self.kind == "ask" else _CHECKED_CHICKENS)


#: the fields of a frames document taken from the game (its log's header): the first line of a
#: live frames file (:mod:`referee.view.live`) holds exactly these
HEADER_FIELDS = (
    "format",
    "version",
    "game",
    "variant",
    "kind",
    "rules",
    "players",
    "seats",
    "match",
    "seed",
    "started",
)
#: the footer fields a frames document's ``result`` repeats
RESULT_FIELDS = ("scores", "ranks", "win_shares", "forfeits", "reason", "detail")


def game_kind(header: Mapping[str, Any]) -> str:
    """``"chickens"`` or ``"ask"``: which of the builder's two families a game (its log header) is."""
    try:
        return style_of_wire(header.get("rules") or {})
    except RulesError:  # an unknown game: replay says so (its mismatch), the page shows the ask layout
        return "ask"


def frames_header(header: Mapping[str, Any]) -> dict[str, Any]:
    """The :data:`HEADER_FIELDS` of the frames document of the game whose log header is ``header``."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "game": header.get("game"),
        "variant": header.get("variant"),
        "kind": game_kind(header),
        "rules": header.get("rules"),
        "players": int(header.get("players", 0)),
        "seats": [
            {"seat": s.get("seat"), "bot": s.get("bot"), "hello": s.get("hello")} for s in header.get("seats", [])
        ],
        "match": header.get("match"),
        "seed": header.get("seed"),
        "started": header.get("started"),
    }


def frames_document(
    header: Mapping[str, Any],
    footer: Mapping[str, Any],
    frames: list[Any],
    *,
    verified: bool,
    mismatch: str | None,
) -> dict[str, Any]:
    """A frames document: the game's :func:`frames_header`, its result (the log footer's fields), whether
    it is verified, and ``frames`` (dicts, or already encoded ``msgspec.Raw`` values)."""
    doc = frames_header(header)
    doc["result"] = {k: footer.get(k) for k in RESULT_FIELDS}
    doc["log_capped"] = bool(footer.get("log_capped"))
    doc["verified"] = verified
    doc["mismatch"] = mismatch
    doc["frames"] = frames
    return doc


def new_builder(header: Mapping[str, Any], strict: bool = False) -> _Frames:
    """A frames builder (the machine's observer) for the game whose log header is ``header``;
    ``strict``: check its state against the engine's after every action (see :class:`_Frames`)."""
    return _Frames(int(header.get("players", 0)), game_kind(header), strict)


def frames_from_records(records: list[tuple[int, Any, dict[str, Any]]], name: str = "log") -> dict[str, Any]:
    """The viewer data of a loaded log (see the module docstring)."""
    header = records[0][2]
    footer = records[-1][2]["footer"]
    obs = new_builder(header, strict=True)
    from referee.runtime.replay import replay_records

    report = replay_records(records, name, observer=obs)
    return frames_document(
        header,
        footer,
        obs.frames,
        verified=report.ok and obs.problem is None,
        mismatch=report.mismatches[0] if report.mismatches else obs.problem,
    )


def frames_from_log(path: str | Path) -> dict[str, Any]:
    """The viewer data of the game log at ``path``. Raises ``UserError`` for a
    missing, unreadable, corrupt or truncated log."""
    from referee.runtime.replay import load_log

    return frames_from_records(load_log(path), str(path))
