"""A minimal raw protocol loop for the purpose-built broken bots (stdlib only).

Each broken bot changes one thing about a correct random legal bot, so that
`referee check-bot` must catch exactly that mistake.
"""

import json
import random
import sys


def legal_reply(turn):
    """A legal reply built from the turn's options and targets."""
    if turn["decide"] == "ask":
        reply = {"type": "ask", "id": turn["id"], "target": random.choice(turn["targets"])}
        key = "family" if RULES.get("ask") == "family" else "card"
        reply[key] = random.choice(turn["options"])
        if RULES.get("please"):
            reply["please"] = True
        return reply
    return {"type": turn["decide"], "id": turn["id"], "card": random.choice(turn["options"])}


RULES = {}
STATE = {"seat": 0, "turns": 0}


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def serve(reply=legal_reply, protocol=1, exit_on_bye=True, on_error=None, before_reply=None):
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            send({"type": "hello", "protocol": protocol, "name": "Broken"})
        elif kind == "start":
            RULES.clear()
            RULES.update(msg["rules"])
            STATE["seat"] = msg["seat"]
        elif kind == "turn":
            STATE["turns"] += 1
            if before_reply:
                before_reply(msg)
            send(reply(msg))
        elif kind == "error" and on_error:
            on_error(msg)
        elif kind == "bye" and exit_on_bye:
            return
