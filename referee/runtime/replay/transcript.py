"""The readable transcript of a replay (the machine's observer), and two observers in one."""

from __future__ import annotations

from typing import Any

from referee.core.machine import HandMachine
from referee.core.spec import FaultRecord

from .report import ReplayReport


class _Transcript:
    """The machine's observer during a replay: the readable transcript."""

    def __init__(self, report: ReplayReport, names: list[str]) -> None:
        self.report = report
        self.names = names

    def hand_started(self, m: HandMachine) -> None:
        self.report.hands += 1
        seats = ", ".join(f"{s.hs}={s.name}" for s in m.hand_seats)
        self.report.transcript.append(f"== {m.gid}: seats {seats}, dealer {getattr(m.state, 'dealer', 0)}")

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
        self.report.actions += 1
        who = self.names[seat] + (" (fallback)" if fallback else "")
        took = "" if ms is None else f" [{ms:.2f} ms]"
        hs = m.seats[seat].hs
        self.report.transcript.append(f" {hs}:{who} {decide} {_fmt_action(action)}{took}")
        for ev in events:
            if ev.get("kind") != "fault":
                self.report.transcript.append("   " + _describe(ev))

    def faulted(self, m: HandMachine, rec: FaultRecord) -> None:
        self.report.transcript.append(f" !! fault: seat {rec.seat} ({rec.bot}) {rec.fault}: {rec.detail}")

    def retried(self, m: HandMachine, seat: int, fault: str, detail: str, left: int) -> None:
        self.report.transcript.append(f" !! retry: seat {seat} ({self.names[seat]}) {fault}: {detail}")

    def hand_ended(self, m: HandMachine, scores: list[Any], ranks: list[int], reason: str, detail: str | None) -> None:
        note = "" if reason == "complete" else f" ({reason}{': ' + detail if detail else ''})"
        self.report.transcript.append(f"== {m.gid} ends: scores {scores}, ranks {ranks}{note}")


def _fmt_action(a: Any) -> str:
    target = getattr(a, "target", None)
    if target is not None:
        what = getattr(a, "card", None) or getattr(a, "family", None)
        return f"seat {target} for {what}" + (" (please)" if getattr(a, "please", False) else "")
    return str(getattr(a, "card", a))


def _describe(ev: dict[str, Any]) -> str:
    kind = ev.get("kind")
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
    rest = {k: v for k, v in ev.items() if k != "kind"}
    return f"{kind}: " + ", ".join(f"{k}={v}" for k, v in rest.items())


class _Both:
    """Two observers in one."""

    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b

    def __getattr__(self, name: str) -> Any:
        fa, fb = getattr(self.a, name), getattr(self.b, name)

        def both(*args: Any) -> None:
            fa(*args)
            fb(*args)

        return both
