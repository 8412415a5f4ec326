"""``referee host SITE.toml``: the site's process (the web server, the queue and the ladder in one trio run)."""

from __future__ import annotations

import signal
import sys
from functools import partial
from typing import Any

import trio

from referee.errors import user_facing
from referee.runtime.entry import run as trio_run
from referee.site.config import Site


def run_host(site: Site, host: str, port: int, *, cluster: Any = None) -> int:
    """Serve ``site`` on ``host:port`` until Ctrl-C, SIGTERM or SIGHUP; return the exit status (130, 143,
    129: the shell's for a program ended by that signal). :class:`UserError` when it cannot listen."""
    from referee.site.app import check_bind, serve
    from referee.site.pipeline import background_thread
    from referee.site.runtime import SiteRuntime

    check_bind(host, port)
    rt = SiteRuntime.open(site, cluster)

    stopped: list[int] = []

    async def main() -> None:
        # Ctrl-C, SIGTERM and SIGHUP cancel everything (the server, the queue, the ladder: every bot
        # process is killed in a shielded scope on the way out), at a point trio chooses
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
            async with trio.open_nursery() as nursery:
                binds = await nursery.start(partial(serve, rt, host, port, background=background_thread))
                for b in binds:
                    print(f"referee host: serving {site.settings.title!r} on {b} (data: {site.data})", file=sys.stderr)
                async for signum in signals:
                    stopped.append(signum)
                    nursery.cancel_scope.cancel()
                    break

    try:
        trio_run(main)
    except BaseExceptionGroup as eg:
        exc = user_facing(eg)
        if exc is eg:
            raise
        raise exc from None
    finally:
        rt.store.close()
    if stopped:
        print(f"referee host: stopped by {signal.Signals(stopped[0]).name}", file=sys.stderr)
        return 128 + stopped[0]
    return 0
