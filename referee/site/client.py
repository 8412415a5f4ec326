"""``referee submit --site URL --token TOKEN DIR [--wait]``: the API's client (httpx)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, TextIO

from referee.errors import UserError
from referee.site.archive import pack_folder

#: states after which a version's trial is over (or waits for the host)
SETTLED = ("active", "failed", "rejected", "retired")


def _error(resp: Any) -> str:
    try:
        return str(resp.json()["error"])
    except Exception:  # noqa: BLE001 - not the site's JSON: say what came back
        return f"HTTP {resp.status_code}: {resp.text[:200]}"


def submit(site: str, token: str, folder: Path, *, wait: bool, timeout: float, out: TextIO, poll: float = 1.0) -> int:
    """Pack and upload ``folder``; print the version's page URL; with ``wait``, print each state it
    reaches until it settles. Exit status: 0 uploaded (with ``wait``: active, or a candidate waiting
    for the host), 1 failed or rejected."""
    import httpx

    data = pack_folder(folder)
    base = site.rstrip("/")
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            r = client.post("/api/versions", content=data, headers={"Content-Type": "application/gzip"})
            if r.status_code not in (201, 422):
                raise UserError(f"{base}: the upload was refused: {_error(r)}")
            v = r.json()
            print(f"version {v['number']} of {v['entrant']} ({v['bot']}): {v['state']}", file=out)
            print(f"{base}{v['page']}", file=out, flush=True)
            if v["state"] == "failed":
                print(f"error: {v.get('error')}\nfix: {v.get('fix')}", file=out)
                return 1
            if not wait:
                return 0
            seen = v["state"]
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                time.sleep(poll)
                r = client.get(f"/api/versions/{v['id']}")
                if r.status_code != 200:
                    raise UserError(f"{base}: cannot follow version {v['id']}: {_error(r)}")
                v = r.json()
                waiting = v["state"] == "candidate" and (v.get("duel") or {}).get("waiting") == "host"
                if v["state"] != seen:
                    seen = v["state"]
                    print(f"  {seen}", file=out, flush=True)
                if v["state"] in SETTLED or waiting:
                    break
            else:
                raise UserError(f"version {v['id']} is still {v['state']} after {timeout:g} s (--timeout)")
    except httpx.HTTPError as exc:
        raise UserError(f"{base}: cannot reach the site ({exc})") from None
    if v["state"] == "failed":
        print(f"error: {v.get('error')}\nfix: {v.get('fix')}", file=out)
        return 1
    if v["state"] == "rejected":
        print(f"rejected: {(v.get('duel') or {}).get('result', '')} against the active version", file=out)
        return 1
    if v["state"] == "candidate":
        print("a candidate: the host decides when it becomes active", file=out)
    return 0
