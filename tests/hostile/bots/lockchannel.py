"""One end of a covert channel through file locks on a file every sandbox
mounts (/etc/passwd). Knob 1: "send" or "receive".

The sender, before its hello, takes what locks it can (an fcntl byte-range
read lock at offset 4242, an OFD lock at 4343, a shared flock) and keeps
them while it lives; the receiver tests each one (F_GETLK, F_OFD_GETLK, a
non-blocking exclusive flock). Each reports what happened, as JSON in its
hello's version: per lock "ok", "seen" (the receiver saw the sender's lock: the
channel works), "free" or the error name ("EPERM": the filter denied it).
Then both play legal moves."""

import errno
import fcntl
import json
import os
import struct
import sys

from _common import arg, messages, play, send

ROLE = arg(1, "send")
F_OFD_GETLK, F_OFD_SETLK = 36, 37
fd = os.open("/etc/passwd", os.O_RDONLY)


def flock_struct(kind: int, start: int) -> bytes:
    # struct flock: short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid (x86_64/arm64)
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, start, 1, 0)


def err(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, str(exc.errno))


report = {}
if ROLE == "send":
    for name, cmd, start in (("setlk", fcntl.F_SETLK, 4242), ("ofd", F_OFD_SETLK, 4343)):
        try:
            fcntl.fcntl(fd, cmd, flock_struct(fcntl.F_RDLCK, start))
            report[name] = "ok"
        except OSError as exc:
            report[name] = err(exc)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        report["flock"] = "ok"
    except OSError as exc:
        report["flock"] = err(exc)
else:
    for name, cmd, start in (("setlk", fcntl.F_GETLK, 4242), ("ofd", F_OFD_GETLK, 4343)):
        try:
            out = fcntl.fcntl(fd, cmd, flock_struct(fcntl.F_WRLCK, start))
            report[name] = "free" if struct.unpack("hhqqi4x", out)[0] == fcntl.F_UNLCK else "seen"
        except OSError as exc:
            report[name] = err(exc)
    other = os.open("/etc/passwd", os.O_RDONLY)
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        report["flock"] = "free"
    except BlockingIOError:
        report["flock"] = "seen"
    except OSError as exc:
        report["flock"] = err(exc)

for msg in messages():
    if msg.get("type") == "hello":
        send({"type": "hello", "protocol": 1, "name": "lockchannel", "version": json.dumps(report)})
        break
play("lockchannel")
sys.exit(0)
