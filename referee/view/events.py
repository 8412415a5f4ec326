"""The viewer's data, version 2: a game's public events, recorded as the machine plays it.

A version 2 page (``docs/VIEWER-FORMAT.md``) holds what happened, not what the table looked like
after every step: the cards of the game (:func:`deck_table`), the state dealt at each hand's start,
and per step the public event as the machine reported it (compact arrays). The page's script
(``assets/expand.js``) expands them into exactly the frames the version 1 builder
(:mod:`referee.view.frames`) makes, so the viewer shows the same steps; recording them costs no
snapshot of the state per action, no copy and no text.

:class:`EventRecorder` is the hand machine's observer that records them (during a night, fed by the
machine that plays the game, :mod:`referee.view.live`; for a log, by its replay,
:func:`events_from_log`). The records, in order (seats are match seats unless said otherwise):

* ``["S", gid, hand_seats, state]``: a hand starts (``hand_seats``: the match seat of each hand seat;
  ``state``: the whole public state, as frame 0 of a version 1 document holds it);
* ``["A", seat, decide, events, fallback, think_ms, pending, playing]`` and, for chickens, also
  ``card, decision, terminal, state``: an action applied (``events``: the machine's public events,
  their seats hand seats; ``pending``: the hand seats awaited after it, empty once the hand is over;
  ``playing``: 1 while the game goes on; chickens: the card played face down, the next decision,
  whether the hand is over, and the state after the action when it ended a round, else null);
* ``["F", seat, bot, fault, detail, said]``: a fault (``said``: what every seat was told);
* ``["R", seat, fault, detail, left]``: a refused reply the bot may try again;
* ``["E", scores, ranks, reason, detail]``: a hand's end (scores and ranks by hand seat).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from referee.core.errors import public_fault_detail
from referee.rules.registry import kind_of
from referee.view.frames import EVENTS_VERSION, FORMAT, RESULT_FIELDS, frames_header, game_kind, public_state

if TYPE_CHECKING:  # pragma: no cover
    from referee.core.machine import HandMachine
    from referee.core.spec import FaultRecord

__all__ = [
    "EVENTS_VERSION",
    "EventRecorder",
    "deck_table",
    "deck_table_of",
    "events_document",
    "events_from_log",
    "events_from_records",
    "events_header",
    "public_state",
]

_tables: dict[bytes, dict[str, Any]] = {}


def deck_table(rules: Any) -> dict[str, Any]:
    """The cards of a game with ``rules`` (an engine's rules record), as the expansion needs them:
    ``cards`` in deck order, and for ask games each card's ``families`` entry, the family
    ``points`` and whether asks may say ``polite``ly please; for chickens the card ``values``."""
    key = msgspec.json.encode(rules)
    table = _tables.get(key)
    if table is not None:
        return table
    game = kind_of(rules)
    deck = list(game.deck(rules))
    if game.style == "chickens":
        from referee.rules.chickens import CARD_VALUES

        table = {"cards": deck, "values": dict(CARD_VALUES)}
    else:
        family_of = game.family_of
        assert family_of is not None  # an ask-style kind registers it
        table = {
            "cards": deck,
            "families": [family_of(rules, c) for c in deck],
            "points": game.family_points(rules),
            "polite": bool(getattr(rules, "please", False)),
        }
    if len(_tables) < 256:
        _tables[key] = table
    return table


_wire_tables: dict[bytes, dict[str, Any]] = {}


def deck_table_of(wire: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`deck_table` of the rules a log header records (``header["rules"]``), remembered by their
    text (making the rules record again for every game would cost more than its page)."""
    from referee.rules.registry import from_record

    key = msgspec.json.encode(wire)
    table = _wire_tables.get(key)
    if table is None:
        table = deck_table(from_record(wire))
        if len(_wire_tables) < 256:
            _wire_tables[key] = table
    return table


class EventRecorder:
    """The machine's observer that records the game's public events (see the module docstring).
    ``records`` grows by one list per step; nothing in it is changed once there (the machine's
    event dicts are kept as they are: it never changes them after reporting them)."""

    def __init__(self, kind: str) -> None:
        self.chickens = kind == "chickens"
        self.records: list[list[Any]] = []
        self.table: dict[str, Any] | None = None

    def hand_started(self, m: HandMachine) -> None:
        if self.table is None:
            self.table = deck_table(m.rules)
        base = list(m.match.totals) if m.match is not None else None
        self.records.append(["S", m.gid, [s.index for s in m.hand_seats], public_state(m, base)])

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
        state = m.state
        playing = m.playing
        terminal = state.terminal
        pending = state.pending() if playing and not terminal else ()
        think = None if ms is None else round(ms, 3)
        if not self.chickens:
            self.records.append(["A", seat, decide, events, fallback, think, pending, playing])
            return
        snap = None
        if any(ev["kind"] == "round" for ev in events):
            snap = public_state(m, None)
        decision = state.decision() if not terminal else ""
        self.records.append(
            ["A", seat, decide, events, fallback, think, pending, playing, action.card, decision, terminal, snap]
        )

    def faulted(self, m: HandMachine, rec: FaultRecord) -> None:
        self.records.append(["F", rec.seat, rec.bot, rec.fault, rec.detail, public_fault_detail(rec.fault)])

    def retried(self, m: HandMachine, seat: int, fault: str, detail: str, left: int) -> None:
        self.records.append(["R", seat, fault, detail, left])

    def hand_ended(self, m: HandMachine, scores: list[Any], ranks: list[int], reason: str, detail: str | None) -> None:
        self.records.append(["E", list(scores), list(ranks), reason, detail])


def events_header(header: Mapping[str, Any], table: Mapping[str, Any] | None) -> dict[str, Any]:
    """The header of a version 2 document (or live file) of the game whose log header is ``header``:
    the frames header with version 2 and the game's ``deck`` (:func:`deck_table`)."""
    doc = frames_header(header)
    doc["version"] = EVENTS_VERSION
    doc["deck"] = table
    return doc


def events_document(
    header: Mapping[str, Any],
    footer: Mapping[str, Any],
    table: Mapping[str, Any] | None,
    events: list[Any],
    *,
    verified: bool,
    mismatch: str | None,
) -> dict[str, Any]:
    """A version 2 document: :func:`events_header`, the result (the log footer's fields), whether it is
    verified, and ``events`` (the records, or already encoded ``msgspec.Raw`` values)."""
    doc = events_header(header, table)
    doc["result"] = {k: footer.get(k) for k in RESULT_FIELDS}
    doc["log_capped"] = bool(footer.get("log_capped"))
    doc["verified"] = verified
    doc["mismatch"] = mismatch
    doc["events"] = events
    return doc


def recorded(records: list[tuple[int, Any, dict[str, Any]]], name: str = "log") -> tuple[Any, EventRecorder]:
    """Replay a loaded log with an :class:`EventRecorder`: the replay's report and the recorder."""
    from referee.runtime.replay import replay_records

    rec = EventRecorder(game_kind(records[0][2]))
    return replay_records(records, name, observer=rec), rec


def events_from_records(records: list[tuple[int, Any, dict[str, Any]]], name: str = "log") -> dict[str, Any]:
    """The version 2 viewer data of a loaded log (its replay's events; ``verified`` when the replay is)."""
    report, rec = recorded(records, name)
    doc = events_document(
        records[0][2],
        records[-1][2]["footer"],
        rec.table,
        rec.records,
        verified=report.ok,
        mismatch=report.mismatches[0] if report.mismatches else None,
    )
    # (a JSON round trip: the engine's tuples become lists, as on the page)
    return msgspec.json.decode(msgspec.json.encode(doc))  # type: ignore[no-any-return]


def events_from_log(path: str | Path) -> dict[str, Any]:
    """The version 2 viewer data of the game log at ``path``. Raises ``UserError`` for a missing,
    unreadable, corrupt or truncated log (as :func:`referee.view.frames.frames_from_log`)."""
    from referee.runtime.replay import load_log

    return events_from_records(load_log(path), str(path))


def is_events(data: Any) -> bool:
    """Whether ``data`` is a version 2 viewer document."""
    return isinstance(data, Mapping) and data.get("format") == FORMAT and data.get("version") == EVENTS_VERSION
