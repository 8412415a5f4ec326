#!/usr/bin/env python3
"""A starter bot in Python (3.8+, standard library only): random legal moves, every variant.

The protocol in one breath: the referee writes one JSON object per line to stdin; answer `hello`
with a hello and every `turn` with one line echoing its `id`; nothing else needs an answer. Exit
on `bye` or at end of input. Debug output goes to stderr only.
"""

import json
import random
import sys

NAME = "PythonStarter"


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def send(msg: dict) -> None:
    print(json.dumps(msg, separators=(",", ":")), flush=True)


def main() -> int:
    rules: dict = {}
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            log("not JSON:", line[:200])
            continue
        kind = msg.get("type")
        if kind == "hello":
            send({"type": "hello", "protocol": 1, "name": NAME, "version": "1"})
        elif kind == "start":
            rules = msg.get("rules", {})
        elif kind == "turn":
            # replace these random choices with your strategy
            choice = random.choice(msg["options"])
            if msg["decide"] == "ask":
                reply = {"type": "ask", "id": msg["id"], "target": random.choice(msg["targets"])}
                reply["family" if rules.get("ask") == "family" else "card"] = choice
                if rules.get("please"):
                    reply["please"] = True
            else:  # chickens: "play" a card from the hand, "take" a noble from the centre
                reply = {"type": msg["decide"], "id": msg["id"], "card": choice}
            send(reply)
        elif kind == "error":
            log("referee error:", msg.get("fault"), msg.get("detail"))
        elif kind == "bye":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
