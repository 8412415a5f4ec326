"""Fills its working directory (its temporary folder) with empty files before
its hello: knob 1 files at most (default 30000). Reports as JSON in the
hello's version how many it made and the error that stopped it (or null),
then plays legal moves."""

import errno
import json
import os

from _common import arg, messages, play, send

N = int(arg(1, "30000"))
made, error = 0, None
try:
    for i in range(N):
        os.close(os.open(f"f{i}", os.O_CREAT | os.O_WRONLY, 0o600))
        made += 1
except OSError as exc:
    error = errno.errorcode.get(exc.errno or 0, str(exc.errno))
report = {"made": made, "error": error, "cwd": os.getcwd()}
for msg in messages():
    if msg.get("type") == "hello":
        send({"type": "hello", "protocol": 1, "name": "filer", "version": json.dumps(report)})
        break
play("filer")
