#!/usr/bin/env python3
"""A legal test bot with quirks (standard library only), for the replay/CLI tests.

Options are command-line arguments (the referee gives bots a clean environment):

* ``--crlf`` - every reply line ends with ``\\r\\n`` and has a ``\\r``
  (JSON whitespace) between two of its fields: legal JSON, but a carriage
  return a careless log would copy into a record.
* ``--burn-ms N`` - burn about N ms of CPU time before each reply.

Its choices are random legal ones (``random.Random(1)``).
"""

import json
import random
import sys
import time


def main() -> int:
    out = sys.stdout.buffer
    args = sys.argv[1:]
    crlf = "--crlf" in args
    burn = float(args[args.index("--burn-ms") + 1]) / 1000 if "--burn-ms" in args else 0.0
    rng = random.Random(1)
    family = False

    def send(obj: dict) -> None:
        data = json.dumps(obj, separators=(",", ":")).encode()
        if crlf:
            data = data.replace(b",", b",\r", 1) + b"\r\n"
        else:
            data += b"\n"
        out.write(data)
        out.flush()

    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        t = msg["type"]
        if t == "hello":
            send({"type": "hello", "protocol": 1, "name": "quirky"})
        elif t == "start":
            family = msg["rules"].get("ask") == "family"
        elif t == "turn":
            if burn:
                t0 = time.process_time()
                x = 0
                while time.process_time() - t0 < burn:
                    x += 1
            d = msg["decide"]
            if d == "ask":
                send(
                    {
                        "type": "ask",
                        "id": msg["id"],
                        "target": rng.choice(msg["targets"]),
                        ("family" if family else "card"): rng.choice(msg["options"]),
                        "please": True,
                    }
                )
            else:
                send({"type": d, "id": msg["id"], "card": rng.choice(msg["options"])})
        elif t == "bye":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
