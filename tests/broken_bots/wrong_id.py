"""Broken: answers every turn with the previous turn's id (off by one)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _raw import legal_reply, serve

serve(reply=lambda turn: {**legal_reply(turn), "id": turn["id"] - 1})
