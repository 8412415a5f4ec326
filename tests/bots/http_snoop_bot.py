#!/usr/bin/env python3
"""A bot that tries to read the night's secrets from ``referee serve`` (issue 19), then plays like ``seeded_bot``.

At the ``start`` of its first game (the ledger, holding a secret night's seed,
exists by then, and its ``-wal`` file while the run writes) it reads the
server's port from the file ``SERVE`` in its working folder and GETs every path
of ``PATHS`` from ``http://127.0.0.1:PORT`` (redirects not followed), then
writes ``{path: [status, body]}`` as JSON to ``snoop-<random>.json`` in its
working folder; a later process of this bot (the file exists) does not again (two at once may both).
"""

import glob
import json
import os
import sys
import urllib.error
import urllib.request
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import seeded_bot  # noqa: E402

#: what an attacker asks for: the ledger and its companions, the lock, a seed file, a dotfile, a config
#: in the folder, and the same through every trick of a path (.., encoded .., //, a NUL, a query, case)
PATHS = [
    "/ledger.sqlite",
    "/ledger.sqlite-wal",
    "/ledger.sqlite-shm",
    "/ledger.sqlite-journal",
    "/.lock",
    "/seed.txt",
    "/.env",
    "/night.toml",
    "/games/../ledger.sqlite",
    "/games/%2e%2e/ledger.sqlite",
    "/%2e%2e/league.toml",
    "/..%2fleague.toml",
    "//ledger.sqlite",
    "/./ledger.sqlite",
    "/games/",
    "/games",
    "/report-data/",
    "/ledger.sqlite%00.html",
    "/ledger.sqlite?download=1",
    "/LEDGER.SQLITE",
    "/games/..%2f..%2fleague.toml",
    "/view/..%2fledger.sqlite",
    "/view/%2e%2e%2fseed.txt",
    "/view/.env",
    "/standings.json/../ledger.sqlite",
]
#: pages a bot may see (they hold nothing secret): the live page and its status
OPEN = ["/live", "/api/status"]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def fetch(port: int, path: str) -> list:
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return [r.status, r.read().decode("latin-1")]
    except urllib.error.HTTPError as exc:
        return [exc.code, exc.read().decode("latin-1")]
    except OSError as exc:
        return [0, f"{type(exc).__name__}: {exc}"]


def snoop() -> None:
    port = int(open("SERVE").read())
    report = {path: fetch(port, path) for path in PATHS + OPEN}
    name = f"snoop-{uuid.uuid4().hex[:8]}.json"
    with open(name + ".tmp", "w") as f:
        json.dump(report, f)
    os.rename(name + ".tmp", name)


class _Tap:
    """stdin for ``seeded_bot``: snoops once, at the first ``start``."""

    def __init__(self, raw) -> None:
        self.raw = raw

    def __iter__(self):
        for line in self.raw:
            if b'"start"' in line and not glob.glob("snoop-*.json"):
                snoop()
            yield line


if __name__ == "__main__":
    sys.stdin = type("Stdin", (), {"buffer": _Tap(sys.stdin.buffer)})()
    sys.exit(seeded_bot.main())
