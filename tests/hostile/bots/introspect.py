"""Reports what the sandbox let it see, in its hello's ``version`` field (JSON),
then plays legally. Knob 1: a TCP port on 127.0.0.1 to try to connect to."""

import json
import os
import resource
import socket
import sys

from _common import arg, play, send

report = {
    "env": sorted(os.environ),
    "env_values": {k: os.environ[k] for k in ("HOME", "TMPDIR", "REFEREE_BOT_DIR", "ZOO_EXTRA") if k in os.environ},
    "cwd": os.getcwd(),
    "pid": os.getpid(),
    "uid": os.getuid(),
    "shm_bytes": os.statvfs("/dev/shm").f_blocks * os.statvfs("/dev/shm").f_frsize
    if os.path.isdir("/dev/shm")
    else None,
    "rlimits": {
        name: resource.getrlimit(getattr(resource, name))[1]
        for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_NOFILE")
    },
    "core": resource.getrlimit(resource.RLIMIT_CORE),
    "umask": os.umask(0o077),
}
# a file named after the zoo tag, so tests running side by side never see each other's file
report["big"] = big = f"big-{sys.argv[1]}.bin"
try:
    with open(big, "wb") as f:
        f.write(b"\0" * (2 << 20))
    report["wrote"] = os.path.getsize(big)
except OSError as exc:
    report["wrote"] = f"{type(exc).__name__}: {exc.strerror}"
port = int(arg(1, "0"))
if port:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        report["net"] = "connected"
    except OSError as exc:
        report["net"] = f"{type(exc).__name__}: {exc.strerror}"

sys.stdin.buffer.readline()  # hello
send({"type": "hello", "protocol": 1, "name": "introspect", "version": json.dumps(report)})
play("introspect")
