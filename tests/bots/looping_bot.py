#!/usr/bin/env python3
"""The example bot of docs/WRITING-A-BOT.md section 1 as it was written before issue 10: it never
remembers a miss, so two copies of it ask each other the same questions in circles forever (a kwartet
table with the tracker, seed 1, never ends without the stalemate rule). Used to test the stalemate
rule end to end and check-bot's self-play check. Deterministic: no random choice in ask games.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # protocol/sdk.py
from protocol.sdk import Ask, Bot, GameView  # noqa: E402


class LoopingBot(Bot):
    name = "LoopingBot"
    version = "0.1"

    def ask(self, view: GameView) -> Ask:
        # Ask the seat with the most cards for a card of the family we hold most of.
        target = max(view.ask_targets(), key=lambda s: view.counts[s])

        def held(option: str) -> int:  # how many cards of that option's family we hold
            fam = option if view.ask_mode == "family" else view.family_of(option)
            return sum(1 for c in view.hand if view.family_of(c) == fam)

        wanted = max(view.ask_options(), key=held)
        if view.ask_mode == "family":
            return Ask(target=target, family=wanted)
        return Ask(target=target, card=wanted)  # polite by default (please=True)

    def play(self, view: GameView) -> str:  # chickens: a card from view.options
        return self.rng.choice(view.play_options())

    def take(self, view: GameView) -> str:  # chickens: the best noble in the centre
        return max(view.play_options(), key=lambda c: view.rules["cards"][c])


if __name__ == "__main__":
    sys.exit(LoopingBot().run())
