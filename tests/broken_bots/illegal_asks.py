"""Broken: asks for a card (or family) it holds itself, from its own seat."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _raw import RULES, STATE, legal_reply, serve


def reply(turn):
    if turn["decide"] != "ask":
        return legal_reply(turn)
    card = turn["hand"][0]
    out = {"type": "ask", "id": turn["id"], "target": STATE["seat"], "card": card}
    if RULES.get("please"):
        out["please"] = True
    return out


serve(reply=reply)
