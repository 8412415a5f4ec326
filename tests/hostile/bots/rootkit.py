"""Uses whatever privileges it has (finding 3 of issue 15): reports its
capabilities, tries umount2("/proc") to reach the host's /proc behind its
private one, reads the environment of every process it then sees (the
referee's included), tries to join the host's network namespace (through
/proc/1/ns/net) and to connect to 127.0.0.1:PORT (knob 1), and writes a
fake reply line into the stdout pipe of every other zoo bot it finds (a
bot's stdout, /proc/PID/fd/1, is what the referee reads as its replies).
Reports it all in its hello ``version`` (JSON), then plays legally."""

import ctypes
import json
import os
import socket
import sys

from _common import arg, play, send

libc = ctypes.CDLL(None, use_errno=True)
report = {}
with open("/proc/self/status") as f:
    report["cap_eff"] = next(line.split()[1] for line in f if line.startswith("CapEff"))
MNT_DETACH = 2
if libc.umount2(b"/proc", MNT_DETACH) == 0:
    report["umount_proc"] = "ok"
else:
    report["umount_proc"] = os.strerror(ctypes.get_errno())
me = os.getpid()
environs, written = 0, 0
for name in os.listdir("/proc"):
    if not name.isdigit() or int(name) == me:
        continue
    try:
        with open(f"/proc/{name}/environ", "rb") as f:
            env = f.read()
        with open(f"/proc/{name}/cmdline", "rb") as f:
            cmd = f.read()
    except OSError:
        continue
    if b"REFEREE_TEST_SECRET" in env:
        environs += 1
    if b"legal.py" in cmd:
        try:
            fd = os.open(f"/proc/{name}/fd/1", os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, b'{"type":"ask","id":999999,"target":0,"card":"x"}\n')
            os.close(fd)
            written += 1
        except OSError:
            pass
report["referee_environ"] = environs
report["pipes_written"] = written
CLONE_NEWNET = 0x40000000
try:
    fd = os.open("/proc/1/ns/net", os.O_RDONLY)
    report["setns_net"] = "ok" if libc.setns(fd, CLONE_NEWNET) == 0 else os.strerror(ctypes.get_errno())
except OSError as exc:
    report["setns_net"] = exc.strerror
port = int(arg(1, "0"))
if port:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        report["net"] = "connected"
    except OSError as exc:
        report["net"] = exc.strerror or str(exc)

sys.stdin.buffer.readline()  # hello
send({"type": "hello", "protocol": 1, "name": "rootkit", "version": json.dumps(report)})
play("rootkit")
