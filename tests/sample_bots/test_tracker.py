"""The tracker sample's inference, fed real engine events in-process."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sample_bots"))

from tracker_bot import STOCK, TrackerBot  # noqa: E402

from referee.rules import Deal, get_variant  # noqa: E402


def feed(bot: TrackerBot, msg: dict[str, Any]) -> dict[str, Any] | None:
    out = io.BytesIO()
    bot._out = out
    bot._handle(json.loads(json.dumps(msg)))
    return json.loads(out.getvalue()) if out.getvalue() else None


def start(bot: TrackerBot, rules: Any, game: Any, seat: int, n: int) -> None:
    feed(
        bot,
        {
            "type": "start",
            "game": "g",
            "variant": rules.name,
            "rules": rules.to_wire(),
            "seat": seat,
            "seats": [str(i) for i in range(n)],
            "dealer": game.dealer,
            "hand": game.hand(seat),
            "clock": {"move_ms": 1000},
        },
    )
    for e in game.initial_events():
        feed(bot, {"type": "event", "game": "g", "seq": 0, **e})


def test_asks_for_a_card_whose_place_is_known() -> None:
    # kwartet, 4 seats. Seat 0 (the tracker) holds QS; seat 1 asks seat 2 for QH and gets it.
    rules = get_variant("kwartet")
    hands = [
        ["QS", "7S", "8S", "9S", "10S", "JS", "KS", "AS"],
        ["QD", "7H", "8H", "9H", "10H", "JH", "KH", "AH"],
        ["QH", "7D", "8D", "9D", "10D", "JD", "KD", "AD"],
        ["QC", "7C", "8C", "9C", "10C", "JC", "KC", "AC"],
    ]
    game = rules.new_game(4, deal=Deal(dealer=0, hands=tuple(tuple(h) for h in hands)))
    bot = TrackerBot(seed=1)
    start(bot, rules, game, 0, 4)
    assert game.pending() == (1,)
    for e in game.apply(1, type("A", (), {"target": 2, "card": "QH", "family": None, "please": False})()):
        feed(bot, {"type": "event", "game": "g", "seq": 0, **e})
    assert bot.loc is not None and bot.loc["QH"] == {1}
    assert 0 not in bot.loc["QD"] and 1 in bot.loc["QD"]  # seat 1 asked for a queen: it may hold QD
    # force a decision of seat 0 with the engine's view, as the runtime would send it
    view = game.view(0)
    view["targets"] = [1, 2, 3]
    view["options"] = [c for c in ["QH", "QD", "QC"]]
    reply = feed(bot, {"type": "turn", "game": "g", "id": 5, "decide": "ask", "clock": {}, **view})
    assert reply == {"type": "ask", "id": 5, "target": 1, "card": "QH"}


def test_family_mode_miss_and_stock_draws() -> None:
    # a custom family-mode variant with a stock: a miss rules out the whole family at the target,
    # and a draw by another seat may move any stock card to it
    rules = get_variant(
        {
            "name": "t",
            "families": ["A", "B", "C"],
            "members": ["1", "2"],
            "ask": "family",
            "miss": "next",
            "stock": 2,
            "players": [2, 4],
        }
    )
    game = rules.new_game(2, deal=Deal(dealer=1, hands=(("A1", "B1"), ("A2", "C1")), stock=("B2", "C2")))
    bot = TrackerBot(seed=1)
    start(bot, rules, game, 1, 2)
    assert bot.loc is not None and bot.loc["B2"] == {0, STOCK}
    # seat 0 asks seat 1 for family B: a miss (seat 1 holds no B); seat 0 draws the top stock card
    for e in game.apply(0, type("A", (), {"target": 1, "card": None, "family": "B", "please": False})()):
        feed(bot, {"type": "event", "game": "g", "seq": 0, **e})
    # seat 0 drew B2 from the stock and laid family B; nobody holds a B any more
    kinds = [e["kind"] for e in bot.view.history]
    assert kinds[-3:] == ["ask", "draw", "laid"]
    assert not any("B" in fams for fams in bot.has_fam)
    assert "B1" not in bot.loc and "B2" not in bot.loc
    assert bot.stock_left == 1
    # seat 0 holds one card and one stays in the stock: A1 and C2 can each be in either place
    assert bot.loc["A1"] == {0, STOCK} and bot.loc["C2"] == {0, STOCK}
    assert bot.loc["A2"] == {1} and bot.loc["C1"] == {1}
