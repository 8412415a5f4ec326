#!/usr/bin/env python3
"""The rememberer: the sample tracker bot plus a memory of the deals it has seen.

Started as ``python3 rememberer.py TRACKER [--honest] [ZOO-TAG]`` (``TRACKER``:
the path of sample_bots/tracker_bot.py, which it plays like). Duplicate play
deals every deal once in every seat rotation, to every table of a variant and
size; a bot that meets a deal again knows where the cards of the hand it held
the first time are now. So for every game it records where each card was at
the start (its own hand exactly; every card it saw handed over or drawn before
it had moved), keyed by the deal (the game id without table and rotation:
``kwartet-4p-d003``), and checks the key against its hand (no recorded card of
its hand may sit elsewhere). When it meets a deal it has a record of, it starts
the game knowing those cards' places.

It remembers in two ways: in the process (every game of one process), and in
a file ``rememberer-memory.json`` in every place it can write (its working
folder, ``$HOME``, ``$TMPDIR``, ``/tmp``, ``/var/tmp``, ``/dev/shm``, the
folder of this script), read back when a process starts - so a fresh process
per game, or a folder that outlives its process, would still let it remember.

``--honest``: the same bot without the memory (the copy it is measured
against). On stderr it says, once per game, whether it recognised the deal
(``rememberer: recognised DEAL``), for a test to look for.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from typing import Any

_TRACKER = sys.argv[1] if len(sys.argv) > 1 else ""
sys.path.insert(0, os.path.dirname(os.path.abspath(_TRACKER)))

from tracker_bot import STOCK, TrackerBot  # noqa: E402

HONEST = "--honest" in sys.argv[2:]
FILE = "rememberer-memory.json"

#: deal key -> card -> its place at the start (a seat, or STOCK)
MEMORY: dict[str, dict[str, int]] = {}


def _places() -> list[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.getcwd(), os.environ.get("HOME", ""), os.environ.get("TMPDIR", ""), tempfile.gettempdir()]
    out += ["/tmp", "/var/tmp", "/dev/shm", here]
    seen: list[str] = []
    for p in out:
        if p and p not in seen:
            seen.append(p)
    return seen


def _load() -> None:
    for place in _places():
        try:
            with open(os.path.join(place, FILE)) as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        for key, cards in data.items():
            MEMORY.setdefault(key, {}).update({c: int(s) for c, s in cards.items()})


def _save() -> None:
    text = json.dumps(MEMORY)
    for place in _places():
        try:
            with open(os.path.join(place, FILE), "w") as f:
                f.write(text)
        except OSError:
            continue


def deal_key(game_id: str) -> str:
    """``kwartet-4p-t0003-d002-r1`` -> ``kwartet-4p-d002`` (every table plays the same deals);
    a duel's ``PREFIX-00012-2`` -> ``PREFIX-00012`` (both games of a pair play one deal)."""
    if re.search(r"-\d{5}-[12]$", game_id):
        return game_id[:-2]
    return re.sub(r"-r\d+$", "", re.sub(r"-[tL]\d+-", "-", game_id))


class Rememberer(TrackerBot):
    name = "Rememberer"
    version = "honest" if HONEST else "remembers"

    def on_start(self, view: Any) -> None:
        super().on_start(view)
        self.start: dict[str, int] = {c: view.seat for c in view.hand}
        self.moved: set[str] = set()
        self.key = deal_key(view.game)
        self.applied = False

    def _init(self, view: Any) -> None:
        super()._init(view)
        if HONEST or self.applied:
            return
        self.applied = True
        known = MEMORY.get(self.key)
        if not known or any(known.get(c, view.seat) != view.seat for c in view.hand):
            return  # never seen, or not the deal it seemed to be
        assert self.loc is not None
        for c, place in known.items():
            if c in self.loc and c not in view.hand and place != view.seat:
                self.loc[c] = {place}
        self._propagate(view)
        sys.stderr.write(f"rememberer: recognised {self.key}\n")
        sys.stderr.flush()

    def on_event(self, view: Any, ev: dict[str, Any]) -> None:
        if view.kind == "ask":
            kind = ev.get("kind")
            if kind == "ask":
                for c in ev.get("cards") or []:
                    if c not in self.moved:
                        self.start.setdefault(c, ev["target"])
                    self.moved.add(c)
            elif kind == "draw" and ev.get("card"):
                c = ev["card"]
                if c not in self.moved:
                    self.start.setdefault(c, STOCK)
                self.moved.add(c)
        super().on_event(view, ev)

    def on_end(self, view: Any, result: dict[str, Any]) -> None:
        if HONEST:
            return
        MEMORY.setdefault(self.key, {}).update(self.start)
        _save()


if __name__ == "__main__":
    if not HONEST:
        _load()
    sys.exit(Rememberer().run())
