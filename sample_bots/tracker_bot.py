#!/usr/bin/env python3
"""A tracking bot: it follows every public event and asks where cards must be.

How to run it:
    referee check-bot -- python3 sample_bots/tracker_bot.py
    referee run tournaments/tracker-vs-random.toml     # tracker vs random, four ask variants

What it knows (everything here is public information):
  * an asker holds at least one card of the family it asked about, and does not
    hold the card it asked for (card mode);
  * a hit shows exactly which cards moved, and to whom;
  * a (polite) miss shows that the asked seat lacks that card (family mode: the
    whole family); a family-mode hit shows the asked seat gave ALL of that family;
  * laid families leave play; a draw moves one stock card to the drawer;
  * hand sizes are public, so a seat whose known cards fill its hand holds
    nothing else, and a seat that can only hold exactly as many candidates as it
    has cards holds all of them.

For every card not in our hand it keeps the set of places it can be (seats, or
the stock) and narrows it with each event. On its turn it asks for a card whose
place is known for sure; otherwise it asks for the card/seat pair with the best
estimated chance. Chickens (not the point of this bot): takes the best noble,
plays at random.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from protocol.sdk import Ask, Bot, GameView  # noqa: E402

STOCK = -1  # the "seat" number we use for the stock
NOBLE_ORDER = ["ace", "king", "queen", "jack-red", "jack-black"]


class TrackerBot(Bot):
    name = "TrackerBot"
    version = "1.0"

    # ---- game state ----------------------------------------------------------

    def on_start(self, view: GameView) -> None:
        self.loc: dict[str, set[int]] | None = None  # card -> places it can be
        self.has_fam: list[set[str]] = [set() for _ in range(view.n)]
        self.stock_left = int(view.rules.get("stock", 0) or 0)

    def _init(self, view: GameView) -> None:
        """Start of a game: we know our own hand; every other card can be anywhere else."""
        laid = view.laid_families()
        anywhere = {s for s in range(view.n) if s != view.seat and view.counts[s] > 0}
        if self.stock_left > 0:
            anywhere.add(STOCK)
        mine = set(view.hand)
        self.loc = {}
        for c in view.deck():
            if view.family_of(c) in laid:
                continue
            self.loc[c] = {view.seat} if c in mine else set(anywhere)
        self._propagate(view)

    def on_event(self, view: GameView, ev: dict) -> None:
        if view.kind != "ask":
            return
        kind = ev.get("kind")
        if kind == "deal" or self.loc is None:
            self._init(view)
            if kind == "deal":
                return
        loc = self.loc
        assert loc is not None
        if kind == "ask":
            s, t, moved = ev["seat"], ev["target"], ev.get("cards") or []
            fam = ev.get("family") or view.family_of(ev["card"])
            self.has_fam[s].add(fam)
            for c in moved:
                loc[c] = {s}
            if moved:
                self.has_fam[t].discard(fam)
            if ev.get("card") is not None:
                c = ev["card"]
                if c in loc and not moved:
                    loc[c].discard(s)  # you may not ask for a card you hold
                    if not ev.get("rude"):
                        loc[c].discard(t)  # a polite miss: the target lacks it
            else:
                # family mode: after a hit or a miss, the target holds none of the family
                self.has_fam[t].discard(fam)
                for c in view.cards_of(fam):
                    if c in loc and c not in moved:
                        loc[c].discard(t)
        elif kind == "laid":
            fam = ev["family"]
            for c in view.cards_of(fam):
                loc.pop(c, None)
            for hf in self.has_fam:
                hf.discard(fam)
        elif kind == "draw":
            d = ev["seat"]
            self.stock_left = max(0, self.stock_left - 1)
            if d == view.seat and ev.get("card"):
                loc[ev["card"]] = {d}
            else:
                for places in loc.values():
                    if STOCK in places:
                        places.add(d)
            if self.stock_left == 0:
                for places in loc.values():
                    if len(places) > 1:
                        places.discard(STOCK)
        self._propagate(view)

    def _slots(self, view: GameView, h: int) -> int:
        return self.stock_left if h == STOCK else view.counts[h]

    def _propagate(self, view: GameView) -> None:
        """Narrow the places until nothing changes (hand sizes, family claims)."""
        loc = self.loc
        assert loc is not None
        mine = set(view.hand)
        for c, places in loc.items():  # our own hand is exact
            if c in mine:
                loc[c] = {view.seat}
            else:
                places.discard(view.seat)
        holders = [s for s in range(view.n) if s != view.seat] + [STOCK]
        changed = True
        while changed:
            changed = False
            for places in loc.values():
                if not places:  # contradiction (should not happen): forget what we knew
                    places.update(h for h in holders if self._slots(view, h) > 0)
                    places.discard(view.seat)
                for h in list(places):
                    if h != view.seat and self._slots(view, h) <= 0 and len(places) > 1:
                        places.discard(h)
                        changed = True
            for h in holders:
                slots = self._slots(view, h)
                known = [c for c, p in loc.items() if p == {h}]
                maybe = [c for c, p in loc.items() if h in p and len(p) > 1]
                if not maybe:
                    continue
                if len(known) >= slots:  # its hand is full of known cards
                    for c in maybe:
                        loc[c].discard(h)
                    changed = True
                elif len(known) + len(maybe) == slots:  # every candidate must be there
                    for c in maybe:
                        loc[c] = {h}
                    changed = True
            for s in range(view.n):
                for fam in list(self.has_fam[s]):
                    cards = [c for c in view.cards_of(fam) if c in loc]
                    if any(loc[c] == {s} for c in cards):
                        continue
                    cands = [c for c in cards if s in loc[c]]
                    if len(cands) == 1:
                        loc[cands[0]] = {s}
                        changed = True
                    elif not cands:
                        self.has_fam[s].discard(fam)

    def _weights(self, view: GameView) -> dict[int, float]:
        """Per place: its free slots divided by the number of open cards that may be there."""
        loc = self.loc
        assert loc is not None
        known: dict[int, int] = {}
        maybe: dict[int, int] = {}
        for places in loc.values():
            if len(places) == 1:
                (h,) = places
                known[h] = known.get(h, 0) + 1
            else:
                for h in places:
                    maybe[h] = maybe.get(h, 0) + 1
        holders = [s for s in range(view.n)] + [STOCK]
        return {h: max(0, self._slots(view, h) - known.get(h, 0)) / max(1, maybe.get(h, 0)) for h in holders}

    def _prob(self, view: GameView, card: str, seat: int, weight: dict[int, float]) -> float:
        """Estimated chance that ``card`` is held by ``seat`` now."""
        loc = self.loc
        assert loc is not None
        places = loc.get(card)
        if not places or seat not in places:
            return 0.0
        if len(places) == 1:
            return 1.0
        total = sum(weight[h] for h in places) or 1.0
        p = weight[seat] / total
        fam = view.family_of(card)
        if fam in self.has_fam[seat]:
            cands = [c for c in view.cards_of(fam) if c in loc and seat in loc[c]]
            p = max(p, 1.0 / max(1, len(cands)))
        return p

    # ---- decisions ----------------------------------------------------------------

    def ask(self, view: GameView) -> Ask:
        if self.loc is None:
            self._init(view)
        self._propagate(view)
        targets = view.ask_targets()
        options = view.ask_options()
        held = {}
        for c in view.hand:
            held[view.family_of(c)] = held.get(view.family_of(c), 0) + 1
        weight = self._weights(view)
        best, best_score = None, -1.0
        for t in targets:
            for o in options:
                if view.ask_mode == "family":
                    cards = [c for c in view.cards_of(o) if c in self.loc and view.seat not in self.loc[c]]
                    miss = 1.0
                    expected = 0.0
                    for c in cards:
                        p = self._prob(view, c, t, weight)
                        miss *= 1.0 - p
                        expected += p
                    p_hit = 1.0 if o in self.has_fam[t] else 1.0 - miss
                    score = p_hit + 0.01 * expected
                else:
                    score = self._prob(view, o, t, weight)
                score += 0.001 * held.get(o if view.ask_mode == "family" else view.family_of(o), 0)
                score += 1e-6 * self.rng.random()  # break ties at random
                if score > best_score:
                    best, best_score = (t, o), score
        assert best is not None
        t, o = best
        if view.ask_mode == "family":
            return Ask(target=t, family=o)
        return Ask(target=t, card=o)

    def play(self, view: GameView) -> str:
        return self.rng.choice(view.play_options())

    def take(self, view: GameView) -> str:
        options = view.play_options()
        return min(options, key=lambda c: NOBLE_ORDER.index(c) if c in NOBLE_ORDER else 99)


if __name__ == "__main__":
    # optional first argument: a seed, for repeatable play (python3 sample_bots/random_bot.py 42)
    seed = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].lstrip("-").isdigit() else None
    sys.exit(TrackerBot(seed).run())
