"""Tries every way out of ``network = false`` (finding 7 of issue 15): a Unix
socket on the file system (knob 1: its path) and one in the abstract
namespace (knob 2: its name; or the variables NETCHECK_PATH and
NETCHECK_ABSTRACT: a path in the command would be mounted for it), and reports in its hello ``version`` (JSON)
whether each connected; then plays legally."""

import json
import os
import socket
import sys

from _common import arg, play, send

report = {}
for key, address in (
    ("unix_path", os.environ.get("NETCHECK_PATH", arg(1, ""))),
    ("unix_abstract", "\0" + os.environ.get("NETCHECK_ABSTRACT", arg(2, ""))),
):
    if address in ("", "\0"):
        continue
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(2)
        s.connect(address)
        report[key] = "connected"
    except OSError as exc:
        report[key] = exc.strerror or str(exc)
    finally:
        s.close()

sys.stdin.buffer.readline()  # hello
send({"type": "hello", "protocol": 1, "name": "netcheck", "version": json.dumps(report)})
play("netcheck")
