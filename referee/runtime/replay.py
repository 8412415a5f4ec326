"""Re-simulate a game log with the rules engine alone and check it.

:func:`load_log` reads and sanity-checks a log (raises ``UserError`` for a
missing, corrupt or truncated file, naming the line). :func:`replay` rebuilds
every hand from the header and the hand records (seed or deal, match
bookkeeping), applies the recorded actions in order (the ``fallback`` ones
too) and compares:

* every event each seat was sent (fault events, which come from the runtime,
  are skipped) with the engine's events as that seat sees them;
* the ``start`` hands and the ``end`` scores and ranks of each hand;
* the footer's scores and ranks with the engine's (match totals for matches).

The result is a :class:`ReplayReport` with the mismatches (empty = verified)
and a readable transcript. No bots, no trio, no I/O besides reading the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from referee.errors import UserError
from referee.rules import Ask, Deal, Play, Take, event_for_seat, get_variant, ranks_from_scores

from .gamelog import LOG_KIND, LOG_VERSION


@dataclass
class ReplayReport:
    header: dict[str, Any]
    footer: dict[str, Any]
    mismatches: list[str] = field(default_factory=list)
    transcript: list[str] = field(default_factory=list)
    actions: int = 0
    hands: int = 0
    faults: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches


def load_log(path: str | Path) -> list[dict[str, Any]]:
    """Read a game log. Raises ``UserError`` if it is missing, not JSON Lines,
    not a card-referee game log, or truncated (no footer)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise UserError(f"log file {str(p)!r} not found") from None
    except OSError as exc:
        raise UserError(f"cannot read log {str(p)!r}: {exc.strerror}") from None
    records: list[dict[str, Any]] = []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    decode = msgspec.json.decode
    for i, line in enumerate(lines, 1):
        try:
            rec = decode(line)
        except msgspec.DecodeError:
            what = "the last line is cut off" if i == len(lines) else "it is corrupt"
            raise UserError(f"{p}: line {i} is not JSON ({what}); this log cannot be replayed") from None
        if not isinstance(rec, dict):
            raise UserError(f"{p}: line {i} is not a JSON object; this is not a card-referee game log")
        records.append(rec)
    if not records:
        raise UserError(f"{p} is empty; this is not a card-referee game log")
    head = records[0]
    if head.get("log") != LOG_KIND:
        raise UserError(f"{p}: the first line is not a card-referee game log header")
    if head.get("log_version") != LOG_VERSION:
        raise UserError(f"{p}: log version {head.get('log_version')!r}; this referee reads version {LOG_VERSION}")
    if "footer" not in records[-1]:
        raise UserError(f"{p} is truncated: it has no footer (the referee stopped before the game ended)")
    return records


def _action(decide: str, a: dict[str, Any]) -> Any:
    if decide == "ask":
        return Ask(target=a["target"], card=a.get("card"), family=a.get("family"), please=bool(a.get("please", False)))
    if decide == "play":
        return Play(card=a["card"])
    return Take(card=a["card"])


def _strip(msg: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in msg.items() if k not in ("type", "game", "seq")}


class _Hand:
    def __init__(self, rec: dict[str, Any]) -> None:
        self.rec = rec
        self.game: str = rec["game"]
        self.seats: list[int] = list(rec["seats"])
        self.sent: dict[int, list[dict[str, Any]]] = {s: [] for s in self.seats}
        self.starts: dict[int, dict[str, Any]] = {}
        self.ends: dict[int, dict[str, Any]] = {}
        self.acts: list[dict[str, Any]] = []
        self.faults: list[dict[str, Any]] = []


def _split_hands(records: list[dict[str, Any]], report: ReplayReport) -> list[_Hand]:
    hands: list[_Hand] = []
    by_game: dict[str, _Hand] = {}
    for rec in records[1:]:
        if "hand" in rec:
            h = _Hand(rec["hand"])
            hands.append(h)
            by_game[h.game] = h
        elif "out" in rec:
            seat = rec["to"]
            for msg in rec["out"]:
                h = by_game.get(msg.get("game"))
                if h is None or seat not in h.sent:
                    continue
                t = msg.get("type")
                if t == "event" and msg.get("kind") != "fault":
                    h.sent[seat].append(_strip(msg))
                elif t == "start":
                    h.starts[seat] = msg
                elif t == "end":
                    h.ends[seat] = msg
        elif "act" in rec:
            if not hands:
                report.mismatches.append("an action is recorded before any hand starts")
                continue
            hands[-1].acts.append(rec["act"])
        elif "fault" in rec:
            report.faults.append(rec["fault"])
            if hands:
                hands[-1].faults.append(rec["fault"])
    return hands


def replay(path: str | Path) -> ReplayReport:
    """Replay the log at ``path``; see the module docstring. Raises ``UserError``
    for unreadable logs; differences are returned as mismatches."""
    records = load_log(path)
    header, footer = records[0], records[-1]["footer"]
    report = ReplayReport(header=header, footer=footer)
    try:
        rules = get_variant(header["rules"])
    except Exception as exc:
        raise UserError(f"{path}: the header's rules are not a valid variant: {exc}") from None
    players = header["players"]
    names = [s["bot"] for s in header["seats"]]
    hands = _split_hands(records, report)
    report.hands = len(hands)
    match = None
    if header.get("match"):
        from referee.rules.match import Match, MatchFormat

        fmt = MatchFormat.from_params(header["match"])
        match = Match(rules, players, fmt, header.get("seed") or 0)
    mism = report.mismatches
    tr = report.transcript
    final_scores: list[Any] = []
    for hand in hands:
        hr = hand.rec
        tr.append(f"== {hand.game}: seats {', '.join(f'{i}={names[s]}' for i, s in enumerate(hand.seats))}, "
                  f"dealer {hr.get('dealer')}")
        try:
            if match is not None:
                spec = match.next_hand()
                if spec is None:
                    mism.append(f"{hand.game}: the match should already be over")
                    break
                if list(spec.seats) != hand.seats or spec.seed != hr.get("seed"):
                    mism.append(f"{hand.game}: logged seats/seed {hand.seats}/{hr.get('seed')} differ from the "
                                f"match's {list(spec.seats)}/{spec.seed}")
                state = match.new_game(spec)
            elif hr.get("deal") is not None:
                state = rules.new_game(len(hand.seats), seed=hr.get("seed"), deal=Deal.from_json(hr["deal"]))
            else:
                state = rules.new_game(len(hand.seats), seed=hr.get("seed"))
        except Exception as exc:
            mism.append(f"{hand.game}: cannot rebuild the game: {exc}")
            break
        if getattr(state, "dealer", 0) != hr.get("dealer"):
            mism.append(f"{hand.game}: dealer {hr.get('dealer')} logged, the engine says {getattr(state, 'dealer', 0)}")
        n = len(hand.seats)
        seat_of = {s: i for i, s in enumerate(hand.seats)}
        for g, start in hand.starts.items():
            if start.get("hand") != state.hand(seat_of[g]):
                mism.append(f"{hand.game}: seat {seat_of[g]}'s start hand differs from the engine's deal")
        sim: list[list[dict[str, Any]]] = [[] for _ in range(n)]

        def emit(events: list[dict[str, Any]]) -> None:
            for ev in events:
                for hs in range(n):
                    sim[hs].append(event_for_seat(ev, hs))
                tr.append("   " + _describe(ev, [names[s] for s in hand.seats]))

        emit(state.initial_events())
        broken = False
        for act in hand.acts:
            g = act["seat"]
            hs = seat_of.get(g)
            pending = state.pending()
            if hs is None or hs not in pending:
                mism.append(f"{hand.game}: action by seat {g} recorded, but the engine awaits {list(pending)}")
                broken = True
                break
            if state.decision() != act["decide"]:
                mism.append(f"{hand.game}: a {act['decide']} recorded, the engine awaits a {state.decision()}")
                broken = True
                break
            try:
                events = state.apply(hs, _action(act["decide"], act["action"]))
            except Exception as exc:
                mism.append(f"{hand.game}: recorded action {act['action']} of seat {hs} is not legal: {exc}")
                broken = True
                break
            report.actions += 1
            who = f"{names[g]}" + (" (fallback)" if act.get("fallback") else "")
            ms = f" [{act.get('ms', 0):.2f} ms]" if not act.get("fallback") else ""
            tr.append(f" {hs}:{who} {act['decide']} {_fmt_action(act['action'])}{ms}")
            emit(events)
        for f in hand.faults:
            tr.append(f" !! fault: seat {f['seat']} ({f['bot']}) {f['fault']}: {f['detail']}")
        if broken:
            break
        if not state.terminal:
            mism.append(f"{hand.game}: the recorded actions end before the game does")
        scores = list(state.scores())
        ranks = ranks_from_scores(scores)
        for g, got in hand.sent.items():
            hs = seat_of[g]
            want = sim[hs]
            complete = g in hand.ends
            if (complete and got != want) or (not complete and got != want[: len(got)]):
                k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
                mism.append(f"{hand.game}: seat {hs} ({names[g]}) event {k + 1}: sent "
                            f"{got[k] if k < len(got) else 'nothing'}, the engine says "
                            f"{want[k] if k < len(want) else 'nothing'}")
        for g, end in hand.ends.items():
            if end.get("reason") == "complete" and (end.get("scores") != scores or end.get("ranks") != ranks):
                mism.append(f"{hand.game}: end sent to seat {seat_of[g]} says {end.get('scores')}/{end.get('ranks')}, "
                            f"the engine says {scores}/{ranks}")
        tr.append(f"== {hand.game} ends: scores {scores}, ranks {ranks}")
        if match is not None:
            match.record(scores)
        final_scores = scores
    if footer.get("reason") == "complete" and not mism:
        if match is not None:
            if match.next_hand() is not None:
                mism.append("the log ends before the match does")
            want_s, want_r = match.scores(), match.ranks()
        else:
            want_s, want_r = final_scores, ranks_from_scores(final_scores) if final_scores else []
        if footer.get("scores") != want_s or footer.get("ranks") != want_r:
            mism.append(f"footer says scores {footer.get('scores')} ranks {footer.get('ranks')}, "
                        f"the engine says {want_s} {want_r}")
    return report


def _fmt_action(a: dict[str, Any]) -> str:
    if "target" in a:
        what = a.get("card") or a.get("family")
        return f"seat {a['target']} for {what}" + ("" if a.get("please", True) else " (rudely)")
    return str(a.get("card"))


def _describe(ev: dict[str, Any], names: list[str]) -> str:
    kind = ev.get("kind")
    rest = {k: v for k, v in ev.items() if k != "kind"}
    if kind == "ask":
        what = ev.get("card") or ev.get("family")
        got = ", ".join(ev.get("cards") or []) or ("nothing (rude)" if ev.get("rude") else "nothing")
        return f"ask: seat {ev['seat']} asks seat {ev['target']} for {what}: gets {got}; next {ev.get('next')}"
    if kind == "laid":
        return f"laid: seat {ev['seat']} lays family {ev['family']}"
    if kind == "draw":
        return f"draw: seat {ev['seat']} draws" + (f" {ev['card']}" if "card" in ev else "")
    if kind == "take":
        return f"take: seat {ev['seat']} takes {ev['card']}; centre {ev.get('centre')}"
    if kind == "reveal":
        return f"reveal: {ev.get('plays')}; centre {ev.get('centre')}"
    return f"{kind}: " + ", ".join(f"{k}={v}" for k, v in rest.items())
