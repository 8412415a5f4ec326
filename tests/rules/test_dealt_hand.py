"""The ``start`` message's hand is the dealt hand, also when the first seat draws before any decision.

In a custom variant with a stock, a seat whose turn comes with an empty hand draws, and a seat that
holds the only cards left outside the stock draws instead of asking (docs/RULES.md). When that
happens at the very start of a hand, the draws are events after the deal: the ``start`` message
must show the hand as dealt (so a tracking bot sees the drawn card arrive), not the hand after them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from referee.cli import main
from referee.rules import get_variant
from referee.rules.base import Deal
from referee.runtime.gamelog import read_log_bytes

ROOT = Path(__file__).resolve().parents[2]
TINY = {"name": "tiny", "families": 3, "members": 2, "stock": 2, "players": [2, 3]}


def test_an_empty_first_hand_draws_after_the_start_hand():
    g = get_variant(TINY).new_game(2, deal=Deal(1, (("A1", "A2"), ("B1", "C1")), ("B2", "C2")))
    # seat 0 laid A straight from the deal, so its turn comes with an empty hand: it draws B2
    assert g.dealt_hand(0) == [] and g.hand(0) == ["B2"]
    assert g.dealt_hand(1) == g.hand(1) == ["B1", "C1"]
    draws = [e for e in g.initial_events() if e["kind"] == "draw"]
    assert draws == [{"kind": "draw", "seat": 0, "card": "B2"}]


def test_the_only_seat_with_cards_draws_and_lays_after_the_start_hand():
    g = get_variant(TINY).new_game(2, deal=Deal(1, (("A1", "B1"), ("C1", "C2")), ("A2", "B2")))
    # seat 1 laid C from the deal and holds nothing: seat 0 draws instead of asking (and lays)
    assert g.dealt_hand(0) == ["A1", "B1"] and g.hand(0) == []
    kinds = [e["kind"] for e in g.initial_events()]
    assert kinds == ["deal", "draw", "laid", "draw", "laid"]
    # a clone keeps the dealt hands
    assert g.clone().dealt_hand(0) == ["A1", "B1"]


def test_without_a_stock_the_dealt_hand_is_the_hand():
    g = get_variant("kwartet").new_game(4, seed=5)
    assert all(g.dealt_hand(s) == g.hand(s) for s in range(4))


def test_a_real_games_start_message_shows_the_dealt_hand(tmp_path, capsys):
    variant = tmp_path / "tiny.json"
    variant.write_text(json.dumps(TINY))
    deal = tmp_path / "deal.json"
    deal.write_text(json.dumps({"dealer": 1, "hands": [["A1", "A2"], ["B1", "C1"]], "stock": ["B2", "C2"]}))
    bot = f"{sys.executable} {ROOT / 'sample_bots' / 'tracker_bot.py'}"
    logs = tmp_path / "logs"
    args = ["play", str(variant), "--deal", str(deal), "--log", str(logs), "--grace-ms", "200"]
    assert main([*args, "--bot", f"a={bot}", "--bot", f"b={bot}"]) == 0
    (log,) = logs.iterdir()
    records = [json.loads(line) for line in read_log_bytes(log.read_bytes()).decode().splitlines()]
    sent = [(r["to"], msg) for r in records if "out" in r for msg in r["out"]]
    starts = {to: msg for to, msg in sent if msg["type"] == "start"}
    assert starts[0]["hand"] == [] and starts[1]["hand"] == ["B1", "C1"], starts
    draws = [msg for r in records if r.get("to") == 0 for msg in r["out"] if msg.get("kind") == "draw"]
    assert draws and draws[0]["card"] == "B2"  # the drawn card arrives after the start message
    assert main(["replay", "-q", str(log)]) == 0
    capsys.readouterr()
