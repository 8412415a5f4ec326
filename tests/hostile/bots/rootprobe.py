"""Tries what a bot running as host root could do, and reports each outcome in
its hello's ``version`` (JSON), then plays legally. It never writes a kernel
knob: opening one for writing is the test, and a descriptor it got is closed
at once. Files it manages to create are removed at once.

Arguments: TAG, a file it should not be able to read (knob 1), and folders to
try to create a file named after TAG in (the rest)."""

import json
import os
import sys

from _common import play, send

#: sysctls (and the sysrq trigger) a bot must not be able to open for writing
KNOBS = (
    "/proc/sys/kernel/core_pattern",
    "/proc/sys/kernel/modprobe",
    "/proc/sys/vm/drop_caches",
    "/proc/sys/kernel/hostname",
    "/proc/sys/net/ipv4/ip_forward",
    "/proc/sysrq-trigger",
)

tag = sys.argv[1]
report = {"uid": os.getuid(), "euid": os.geteuid(), "groups": [os.getgid(), os.getegid(), *os.getgroups()]}
report["pid"] = os.getpid()
with open("/proc/self/status") as f:
    status = dict(line.split(":", 1) for line in f if ":" in line)
report["capabilities"] = status["CapEff"].strip()  # none left: sixteen hex zeros
report["no_new_privs"] = status.get("NoNewPrivs", "?").strip()  # no setuid program gives root back
with open("/proc/self/uid_map") as f:
    report["uid_map"] = f.read().split()
report["knobs"] = {}
for knob in KNOBS:
    try:
        fd = os.open(knob, os.O_WRONLY)
    except OSError as exc:
        report["knobs"][knob] = f"refused: {exc.strerror}"
    else:
        os.close(fd)  # never write it
        report["knobs"][knob] = "OPENED FOR WRITING"
secret = sys.argv[2] if len(sys.argv) > 2 else ""
if secret:
    try:
        with open(secret) as f:
            report["secret"] = "READ: " + f.read()
    except OSError as exc:
        report["secret"] = f"refused: {exc.strerror}"
report["create"] = {}
for folder in sys.argv[3:]:
    path = os.path.join(folder, f"rootprobe-{tag}")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        report["create"][folder] = f"refused: {exc.strerror}"
    else:
        os.close(fd)
        os.unlink(path)
        report["create"][folder] = "CREATED"

sys.stdin.buffer.readline()  # hello
send({"type": "hello", "protocol": 1, "name": "rootprobe", "version": json.dumps(report)})
play("rootprobe")
