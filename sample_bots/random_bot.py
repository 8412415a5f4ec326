#!/usr/bin/env python3
"""A random bot: every move is a uniformly random LEGAL move.

How to run it:
    referee check-bot -- python3 sample_bots/random_bot.py      # put it through its paces
    python3 sample_bots/random_bot.py                           # talks the protocol on stdin/stdout

It works from any directory: it finds the SDK (protocol/sdk.py) next to this
folder. It plays every variant, custom ask variants included, because it reads
the rules from the `start` message and the legal choices from each `turn`.
Copy it to start your own bot: change `ask`, `play` and `take`.
"""

import os
import sys

# Make `protocol.sdk` importable when run as `python3 sample_bots/random_bot.py` from anywhere.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from protocol.sdk import Ask, Bot, GameView  # noqa: E402


class RandomBot(Bot):
    name = "RandomBot"
    version = "1.0"

    def ask(self, view: GameView) -> Ask:
        # Ask games: pick a seat that holds cards, and something we may ask for
        # (card mode: a card of a family we hold but that we lack; family mode: a family we hold).
        target = self.rng.choice(view.ask_targets())
        wanted = self.rng.choice(view.ask_options())
        if view.ask_mode == "family":
            return Ask(target=target, family=wanted)
        return Ask(target=target, card=wanted)  # please=True by default: polite

    def play(self, view: GameView) -> str:
        # Chickens: any card still in our hand this round.
        return self.rng.choice(view.play_options())

    def take(self, view: GameView) -> str:
        # Chickens: any noble in the centre.
        return self.rng.choice(view.play_options())


if __name__ == "__main__":
    # optional first argument: a seed, for repeatable play (python3 sample_bots/random_bot.py 42)
    seed = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].lstrip("-").isdigit() else None
    sys.exit(RandomBot(seed).run())
