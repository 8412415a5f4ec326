"""Looks for what a bot must not see (finding 2 of issue 15): the league's
config (it holds the seed), its ledger and game logs, another bot's folder,
and the referee's own code; reports in its hello ``version`` (JSON) what it
could read, then plays legally. It looks from ``REFEREE_BOT_DIR`` (the
folder its paths are relative to) and the two folders above it, for
``*.toml`` files with a seed, ``ledger.sqlite``, ``*.jsonl`` logs and (the
other bots' files) ``secret.txt``."""

import json
import os
import sys

from _common import play, send

found = {"config": [], "ledger": [], "logs": [], "other_bot": [], "referee_code": []}


def readable(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return bool(f.read(64))
    except OSError:
        return False


base = os.environ.get("REFEREE_BOT_DIR", os.getcwd())
seen = set()
for top in {base, os.path.dirname(base), os.path.dirname(os.path.dirname(base))}:
    for root, dirs, files in os.walk(top):
        if root.count(os.sep) - top.count(os.sep) > 3 or root in seen:
            dirs[:] = []
            continue
        seen.add(root)
        for name in files:
            path = os.path.join(root, name)
            if name.endswith(".toml") and readable(path):
                with open(path, "rb") as f:
                    if b"seed" in f.read():
                        found["config"].append(path)
            elif name == "ledger.sqlite" and readable(path):
                found["ledger"].append(path)
            elif name.endswith(".jsonl") and readable(path):
                found["logs"].append(path)
            elif name == "secret.txt" and readable(path):
                found["other_bot"].append(path)
for d in sys.path + [os.path.dirname(base)]:
    if readable(os.path.join(d, "referee", "rules", "__init__.py")):
        found["referee_code"].append(d)

sys.stdin.buffer.readline()  # hello
send({"type": "hello", "protocol": 1, "name": "snoop", "version": json.dumps(found)})
play("snoop")
