#!/usr/bin/env python3
"""A tiny protocol bot for league tests: plays a random legal option (always
the first would loop forever in some ask games), and records what it was dealt.

If HAND_LOG is set, every ``start`` appends one JSON line
``{"bot": <league name>, "pid": ..., "game": ..., "seat": ..., "hand": [...]}`` to that file
(one O_APPEND write per line, so concurrent bots never interleave).
If PID_LOG is set, the bot appends its pid at start-up.
If CRASH_AFTER is set to N, the process exits with status 3 on its N-th turn
(so a league must restart it). If START_LIMIT is set to N (with PID_LOG), the
process exits before ``hello`` once PID_LOG holds more than N pids.
It exits on ``bye`` or end of input.
"""

import json
import os
import random
import sys


def append(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def main() -> int:
    hand_log = os.environ.get("HAND_LOG")
    pid_log = os.environ.get("PID_LOG")
    if pid_log:
        append(pid_log, f"{os.getpid()}\n")
        limit = int(os.environ.get("START_LIMIT", "0"))
        if limit:
            with open(pid_log) as f:
                if len(f.read().split()) > limit:
                    return 5  # refuse to start: exit before hello
    name = "?"
    rng = random.Random()
    ask_mode = "card"
    crash_after = int(os.environ.get("CRASH_AFTER", "0"))
    turns = 0
    for line in sys.stdin:
        msg = json.loads(line)
        t = msg.get("type")
        reply = None
        if t == "hello":
            name = msg.get("name", "?")
            reply = {"type": "hello", "protocol": 1, "name": "hand-bot"}
        elif t == "start":
            ask_mode = msg.get("rules", {}).get("ask", "card")
            if hand_log:
                rec = {"bot": name, "pid": os.getpid(), "game": msg["game"], "seat": msg["seat"], "hand": msg["hand"]}
                append(hand_log, json.dumps(rec) + "\n")
        elif t == "turn":
            turns += 1
            if turns == crash_after:
                return 3
            decide = msg["decide"]
            if decide == "ask":
                key = "family" if ask_mode == "family" else "card"
                reply = {
                    "type": "ask",
                    "id": msg["id"],
                    "target": rng.choice(msg["targets"]),
                    key: rng.choice(msg["options"]),
                    "please": True,
                }
            else:
                reply = {"type": decide, "id": msg["id"], "card": rng.choice(msg["options"])}
        elif t == "bye":
            break
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
