"""``referee host SITE.toml``: the site's process (the web server, the queue and the ladder in one trio run)."""

from __future__ import annotations

import sys
from typing import Any

import trio

from referee.errors import user_facing
from referee.site.config import Site


def run_host(site: Site, host: str, port: int, *, cluster: Any = None) -> int:
    """Serve ``site`` on ``host:port`` until Ctrl-C/SIGTERM (raised as KeyboardInterrupt: the CLI's 130/143)."""
    from referee.site.app import serve
    from referee.site.pipeline import background
    from referee.site.runtime import SiteRuntime

    rt = SiteRuntime.open(site, cluster)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(
                lambda task_status: serve(rt, host, port, background=background, task_status=task_status)
            )
            for b in binds:
                print(
                    f"referee host: serving {site.settings.title!r} on {b} (data: {site.data})",
                    file=sys.stderr,
                    flush=True,
                )

    try:
        trio.run(main)
    except BaseExceptionGroup as eg:
        exc = user_facing(eg)
        if exc is eg:
            raise
        raise exc from None
    finally:
        rt.store.close()
    return 0
