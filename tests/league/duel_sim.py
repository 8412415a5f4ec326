"""In-process duels on the real rules engine, for the SPRT tests.

Small policies written on ``referee.rules`` only (no bot processes: the
statistics are under test here, not the runtime):

* :class:`RandomPolicy` - the engine's uniform ``random_action``;
* :class:`TrackerPolicy` - remembers where cards went (a hit shows the card
  now in the asker's hand, a miss shows the target lacks it, an ask shows the
  asker holds the family) and asks where a card is known to be; otherwise at
  random. A card-mode ask player (kwartet, happy families).

:func:`play_pair` plays one deal twice with A and B in mirrored seats and the
field in the other seats, exactly as a duel does, and returns A's two game
scores against B.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from referee.league.sprt import game_score
from referee.rules import Ask, GameState, Rng, derive, event_for_seat, get_variant


class RandomPolicy:
    def start(self, game: GameState, seat: int, rng: Rng) -> None:
        self.rng = rng

    def observe(self, event: dict[str, Any]) -> None:
        pass

    def act(self, game: GameState, seat: int) -> Any:
        return game.random_action(seat, self.rng)


class TrackerPolicy:
    def start(self, game: GameState, seat: int, rng: Rng) -> None:
        self.rng = rng
        self.seat = seat
        self.members = len(game.rules.members)
        self.at: dict[str, int] = {}  # card -> seat known to hold it
        self.lacks: set[tuple[int, str]] = set()  # (seat, card): seat missed when asked for card since it last moved
        self.fams: dict[int, set[str]] = {}  # seat -> families it is known to hold

    def _family(self, card: str) -> str:
        return card[:-1] if self.members < 10 else card  # preset card names: family + one member character

    def observe(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "ask":
            s, t, card = event["seat"], event["target"], event.get("card")
            if card is None:
                return
            fam = self._family(card)
            self.fams.setdefault(s, set()).add(fam)
            if event.get("cards"):
                self.at[card] = s
                self.lacks = {(x, c) for x, c in self.lacks if c != card}
            else:
                self.lacks.add((t, card))
                if self.at.get(card) == t:
                    del self.at[card]
        elif kind == "laid":
            fam = event["family"]
            for c in [c for c in self.at if self._family(c) == fam]:
                del self.at[c]
            for fs in self.fams.values():
                fs.discard(fam)

    def act(self, game: GameState, seat: int) -> Any:
        view = game.view(seat)
        targets = set(view["targets"])
        options = view["options"]
        known = [(self.at[c], c) for c in options if self.at.get(c) in targets]
        if known:
            t, c = known[self.rng.below(len(known))]
            return Ask(target=t, card=c)
        guesses = [
            (t, c)
            for c in options
            for t in sorted(targets)
            if self._family(c) in self.fams.get(t, ()) and (t, c) not in self.lacks
        ]
        if guesses:
            t, c = guesses[self.rng.below(len(guesses))]
            return Ask(target=t, card=c)
        return game.random_action(seat, self.rng)


Factory = Callable[[], Any]


#: decisions after which a game is aborted (players can ask in circles, as bots can)
MAX_DECISIONS = 3000


def play_game(rules: Any, seed: int, players: Sequence[Any], rngs: Sequence[Rng]) -> list[int] | None:
    """Play one game; return its competition ranks per seat, or None if it was
    aborted after :data:`MAX_DECISIONS` decisions (it has no result)."""
    game = rules.new_game(len(players), seed=seed)
    for s, p in enumerate(players):
        p.start(game, s, rngs[s])
    pending = list(game.initial_events())
    for _ in range(MAX_DECISIONS):
        for ev in pending:
            for s, p in enumerate(players):
                p.observe(event_for_seat(ev, s))
        if game.terminal:
            return game.ranks()
        (seat,) = game.pending()
        pending = game.apply(seat, players[seat].act(game, seat))
    return None


def play_pair(
    variant: str, seats: int, deal_seed: int, a: Factory, b: Factory, field: Factory, pair_index: int
) -> tuple[float, float] | None:
    """One deal pair: A in seat i and B in seat j, then swapped; the field in the
    other seats in both games. Every player draws from its own stream, derived
    from the deal seed and its role (A, B, field seat), the same in both games.
    None if a game of the pair was aborted: the pair is dropped whole."""
    rules = get_variant(variant)
    pairs = [(i, j) for i in range(seats) for j in range(i + 1, seats)]
    i, j = pairs[pair_index % len(pairs)]
    scores = []
    for sa, sb in ((i, j), (j, i)):
        players: list[Any] = []
        rngs: list[Rng] = []
        for s in range(seats):
            role = "A" if s == sa else "B" if s == sb else f"field{s}"
            players.append(a() if s == sa else b() if s == sb else field())
            rngs.append(Rng(derive(deal_seed, role)))
        ranks = play_game(rules, deal_seed, players, rngs)
        if ranks is None:
            return None
        scores.append(game_score(ranks, sa, sb))
    return scores[0], scores[1]
