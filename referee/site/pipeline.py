"""The site's background work: the queue of submissions and the ladder over the active pool."""

from __future__ import annotations

import trio

from referee.errors import UserError
from referee.site.runtime import SiteRuntime
from referee.site.store import Store, Version


def promote(store: Store, vid: int, by: str) -> Version:
    """Make version ``vid`` its entrant's active version (the one active before is retired)."""
    v = store.version(vid)
    if v is None:
        raise UserError(f"no version {vid}")
    if v.state == "active":
        return v
    if v.state not in ("candidate", "rejected", "retired"):
        raise UserError(
            f"version {vid} is {v.state}: only a candidate (or a rejected or retired version) can be made active"
        )
    for old in store.versions(entrant=v.entrant, states=("active",)):
        store.move(old.id, "retired", note=f"replaced by {v.bot} ({by})")
    return store.move(vid, "active", note=f"promoted by {by}")


async def background(rt: SiteRuntime) -> None:
    """The queue and the ladder, until cancelled."""
    rt.store.resume()
    await trio.sleep_forever()
