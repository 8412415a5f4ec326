"""Shared plumbing for the hostile zoo bots (tests/hostile/bots/*.py).

Every zoo bot is a small script that speaks protocol v1 correctly except for the
one misbehaviour it exists to show. This module gives them a legal default
player, so each bot file only contains its misbehaviour.

A zoo bot is started as ``python3 BOT.py [ZOO-TAG]``: the tag is an arbitrary
marker the tests put on the command line so they can find every process the
bot (or its forked children) leaves behind by scanning ``/proc/*/cmdline``.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from typing import Any

_out = sys.stdout.buffer


def send(msg: dict[str, Any]) -> None:
    """Write one protocol line to stdout (flushed)."""
    _out.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
    _out.flush()


def send_raw(data: bytes) -> None:
    """Write raw bytes to stdout (flushed), protocol or not."""
    _out.write(data)
    _out.flush()


def legal_reply(turn: dict[str, Any], rules: dict[str, Any]) -> dict[str, Any]:
    """A legal reply to ``turn``: a random option, asked of a random target
    (always the first would loop forever in miss-passes-to-the-asked games)."""
    options = turn.get("options") or turn.get("hand") or []
    if turn["decide"] in ("play", "take"):
        return {"type": turn["decide"], "id": turn["id"], "card": random.choice(options)}
    reply: dict[str, Any] = {"type": "ask", "id": turn["id"], "target": random.choice(turn.get("targets") or [0])}
    if rules.get("ask") == "family":
        reply["family"] = random.choice(options)
    else:
        reply["card"] = random.choice(options)
    if rules.get("please"):
        reply["please"] = True
    return reply


def messages():
    """Yield each decoded message from stdin until EOF (undecodable lines are skipped)."""
    for raw in sys.stdin.buffer:
        try:
            yield json.loads(raw)
        except ValueError:
            continue


TurnHook = Callable[[dict[str, Any], dict[str, Any], int], "dict[str, Any] | None"]


def play(name: str, on_turn: TurnHook | None = None, *, on_bye: Callable[[], None] | None = None) -> None:
    """Answer hello, then every turn: ``on_turn(turn, rules, n)`` may write its own
    reply and return None, or return the reply to send; without a hook the legal
    reply is sent. ``n`` counts this process's turns from 0. Returns at EOF."""
    rules: dict[str, Any] = {}
    n = 0
    for msg in messages():
        kind = msg.get("type")
        if kind == "hello":
            send({"type": "hello", "protocol": 1, "name": name, "version": "zoo"})
        elif kind == "start":
            rules = msg.get("rules", {})
        elif kind == "turn":
            reply = on_turn(msg, rules, n) if on_turn else legal_reply(msg, rules)
            n += 1
            if reply is not None:
                send(reply)
        elif kind == "bye":
            if on_bye is not None:
                on_bye()
            return


def move_ms(turn: dict[str, Any]) -> int:
    """This decision's move limit from the turn's clock (1000 when absent)."""
    clock = turn.get("clock") or {}
    return int(clock.get("move_ms") or clock.get("left_ms") or 1000)


def arg(index: int, default: str) -> str:
    """Command-line knob ``index`` (1 = first after the zoo tag), or ``default``."""
    return sys.argv[index + 1] if len(sys.argv) > index + 1 else default
