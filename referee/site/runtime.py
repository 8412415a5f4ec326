"""A running site: its config, its store, and what the routes and the background tasks share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from referee.site.auth import RateLimiter
from referee.site.board import BoardRow, leaderboard
from referee.site.config import Site
from referee.site.store import Store


@dataclass
class SiteRuntime:
    """What every route reaches as ``request.app.state.runtime``.

    ``wake`` is set when the queue gained work (an upload, a host's promotion); the pipeline waits on
    it. ``cluster`` is the ``--cluster``/``--workers`` choice (None: this machine).

    ``referee host`` runs the background work (the queue and the ladder) on a trio loop of its own,
    in a thread of its own, with a runtime of its own (its own store connection:
    :func:`referee.site.pipeline.background_thread`); ``forward`` is then how :meth:`poke` reaches
    it from the web's loop."""

    site: Site
    store: Store
    cluster: Any = None
    login_limit: RateLimiter = field(init=False)
    wake: trio.Event = field(default_factory=trio.Event)
    #: set when the pool (the active versions) may have changed; the ladder waits on it while it cannot play
    pool_changed: trio.Event = field(default_factory=trio.Event)
    log: list[str] = field(default_factory=list)
    #: set while the background runs on a loop of its own: tells it to :meth:`poke` itself (thread-safe)
    forward: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        self.login_limit = RateLimiter(self.site.settings.logins_per_minute, 60.0)

    @classmethod
    def open(cls, site: Site, cluster: Any = None) -> SiteRuntime:
        return cls(site, Store.open(site.db_path), cluster)

    def poke(self) -> None:
        """Tell the pipeline that there is work (and the ladder that the pool may have changed)."""
        self.wake.set()
        self.pool_changed.set()
        if self.forward is not None:
            self.forward()

    def owners(self) -> dict[str, str]:
        """Pool bot name -> its entrant, for every version that was ever in the pool."""
        return {v.bot: v.entrant for v in self.store.versions()}

    def leaderboard(self) -> list[BoardRow]:
        active = {v.bot for v in self.store.active()} | set(self.site.house_bots)
        return leaderboard(self.site.league_out, self.owners(), active)

    async def leaderboard_off_loop(self) -> list[BoardRow]:
        """:meth:`leaderboard`, its standings file read and decoded in a thread (it grows with the pool
        and the season's scopes; the store is read here, on the loop, by its one connection)."""
        active = {v.bot for v in self.store.active()} | set(self.site.house_bots)
        owners = self.owners()
        return await trio.to_thread.run_sync(leaderboard, self.site.league_out, owners, active)
