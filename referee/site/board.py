"""The season's leaderboard, read from the league's standings (``DATA/league/standings.json``, which
the ladder rewrites after every table)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

#: the standings file of a league's output folder (referee.league.standings.write_standings)
STANDINGS_JSON = "standings.json"


class BoardRow(msgspec.Struct, frozen=True):
    """One entry of the leaderboard: its rating (ordinal = mu - 3 sigma) and its interval mu +- 3 sigma."""

    place: int
    bot: str
    entrant: str | None  # None for a house bot
    ordinal: float
    mu: float
    sigma: float
    low: float
    high: float
    games: int
    win_share: float
    active: bool


def leaderboard(out: Path, owners: dict[str, str], active: set[str]) -> list[BoardRow]:
    """The overall standings of the league in ``out`` (empty before its first game); ``owners`` maps
    a pool bot to its entrant, ``active`` the bots in the pool now."""
    try:
        st = json.loads((out / STANDINGS_JSON).read_text())
        rows = st["scopes"]["overall"]["bots"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    board = []
    for r in rows:
        mu, sigma = float(r["mu"]), float(r["sigma"])
        board.append(
            BoardRow(
                place=int(r["place"]),
                bot=r["bot"],
                entrant=owners.get(r["bot"]),
                ordinal=float(r["ordinal"]),
                mu=mu,
                sigma=sigma,
                low=mu - 3 * sigma,
                high=mu + 3 * sigma,
                games=int(r["games"]),
                win_share=float(r["win_share"]),
                active=r["bot"] in active,
            )
        )
    return board
