"""How long is a hand? Decisions per hand for random and tracker bots, per variant and table size.

The figures behind ``FaultPolicy.max_decisions`` (docs/PERFORMANCE.md, "Hand lengths"). A decision
is what the runtime counts against ``max_decisions``: one ``turn`` round (a single ask or take, or
one simultaneous chickens play of every seat).

Players, all in this process (no subprocesses, no referee):

* ``random``: the engine's own uniformly random legal move for every seat (what
  ``sample_bots/random_bot.py`` and the fallback player do);
* ``tracker``: ``sample_bots/tracker_bot.py`` in every seat, fed the very messages the runtime
  would send it (``start``, each seat's events, ``turn``) and answering through the SDK.

Run: ``python3 docs/experiments/hand_lengths.py [--seeds 300] [--players 2 3 4 5 6] [--json]``.
Pure computation; Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sample_bots"))

from referee.rules import Play, Take, event_for_seat, get_variant  # noqa: E402

VARIANTS = ("happy-families", "happy-families-jaques", "authors", "kwartet", "chickens")


class _Reply:
    """A reply dict with the attributes the engine reads."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.target = d.get("target")
        self.card = d.get("card")
        self.family = d.get("family")
        self.please = d.get("please", False)


def _feed(bot: Any, msg: dict[str, Any]) -> dict[str, Any] | None:
    out = io.BytesIO()
    bot._out = out
    bot._handle(msg)
    data = out.getvalue()
    return json.loads(data) if data else None


def play_random(rules: Any, n: int, seed: int) -> tuple[int, str]:
    g = rules.new_game(n, seed=seed)
    rng = g.fallback_rng()
    decisions = 0
    while True:
        pending = g.pending()
        if not pending:
            return decisions, g.end_reason
        decisions += 1
        for s in pending:
            g.apply(s, g.random_action(s, rng))


def play_tracker(rules: Any, n: int, seed: int) -> tuple[int, str]:
    from tracker_bot import TrackerBot

    g = rules.new_game(n, seed=seed)
    bots = [TrackerBot(seed * 10 + s) for s in range(n)]
    wire = rules.to_wire(n)
    gid = f"h-{seed}"
    seq = 0
    for s, b in enumerate(bots):
        _feed(b, {"type": "start", "game": gid, "variant": rules.name, "rules": wire, "seat": s,
                  "seats": [f"t{i}" for i in range(n)], "dealer": getattr(g, "dealer", 0), "hand": g.hand(s),
                  "clock": {"move_ms": 1000}})

    def broadcast(events: list[dict[str, Any]]) -> None:
        nonlocal seq
        for ev in events:
            seq += 1
            for s, b in enumerate(bots):
                _feed(b, {"type": "event", "game": gid, "seq": seq, **event_for_seat(ev, s)})

    broadcast(g.initial_events())
    decisions = 0
    tid = 0
    while True:
        pending = g.pending()
        if not pending:
            return decisions, g.end_reason
        decisions += 1
        decide = g.decision()
        actions = []
        for s in pending:
            tid += 1
            reply = _feed(bots[s], {"type": "turn", "game": gid, "id": tid, "decide": decide, **g.view(s),
                                    "clock": {"left_ms": 1000, "move_ms": 1000}})
            assert reply is not None and reply["id"] == tid, reply
            actions.append((s, _Reply(reply) if decide == "ask" else (Play if decide == "play" else Take)(
                reply["card"])))
        events: list[dict[str, Any]] = []
        for s, a in actions:
            events += g.apply(s, a)
        broadcast(events)


def summary(lengths: list[int], reasons: list[str]) -> dict[str, Any]:
    q = sorted(lengths)

    def pct(p: float) -> int:
        return q[min(len(q) - 1, int(p * len(q)))]

    return {"games": len(q), "mean": round(statistics.fmean(q), 1), "median": pct(0.5), "p99": pct(0.99),
            "max": q[-1], "stalled": reasons.count("stalled")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=300, help="hands per variant, size and player (default 300)")
    ap.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 5, 6])
    ap.add_argument("--variant", action="append", default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    t0 = time.monotonic()
    for name in args.variant or VARIANTS:
        rules = get_variant(name)
        for n in args.players:
            if not rules.min_players <= n <= rules.max_players:
                continue
            for player, fn in (("random", play_random), ("tracker", play_tracker)):
                lengths, reasons = [], []
                for seed in range(args.seeds):
                    d, r = fn(rules, n, seed)
                    lengths.append(d)
                    reasons.append(r)
                rows.append({"variant": name, "players": n, "bots": player, **summary(lengths, reasons)})
                if not args.json:
                    r = rows[-1]
                    print(f"{name:22s} {n}  {player:8s} mean {r['mean']:7.1f}  median {r['median']:5d}  "
                          f"p99 {r['p99']:5d}  max {r['max']:5d}  stalled {r['stalled']}", flush=True)
    if args.json:
        print(json.dumps({"seeds": args.seeds, "rows": rows}, indent=2))
    else:
        print(f"longest hand: {max(r['max'] for r in rows)} decisions ({time.monotonic() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
