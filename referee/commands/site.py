"""``referee host SITE.toml`` (the competition site, docs/SITE.md) and ``referee submit``.

- ``referee host SITE.toml [--bind HOST:PORT] [--cluster ADDRESS --tls-... | --workers N]``: serve the
  site and run its queue and ladder until Ctrl-C or SIGTERM.
- ``referee host SITE.toml add-entrant NAME [--host]``: add an entrant, print its token once.
- ``referee host SITE.toml new-token NAME``: a new token for an entrant (the old one stops working).
- ``referee host SITE.toml entrants``: list the entrants.
- ``referee host SITE.toml promote VERSION``: make a version active (``promote = "host"``).
- ``referee submit --site URL --token TOKEN DIR [--wait]``: pack DIR, upload it, print the version's
  page; with ``--wait`` follow it until it is active, rejected or failed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from referee.errors import UserError

ACTIONS = ("serve", "add-entrant", "new-token", "entrants", "promote")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "host",
        help="run a competition site: entrants submit bots, the ladder plays the pool (docs/SITE.md)",
        description=(
            "Serve the competition of SITE.toml (a league config plus a [site] table) and run its queue of "
            "submissions and its ladder until Ctrl-C. With an action: add-entrant NAME [--host] (prints its "
            "token once), new-token NAME, entrants, promote VERSION."
        ),
    )
    p.add_argument("site", help="the site's config (SITE.toml)")
    p.add_argument("action", nargs="?", default="serve", choices=ACTIONS, help="what to do (default: serve)")
    p.add_argument("arg", nargs="?", help="the entrant's name (add-entrant, new-token) or the version id (promote)")
    p.add_argument("--host", dest="is_host", action="store_true", help="add-entrant: this entrant is the host")
    p.add_argument("--bind", metavar="HOST:PORT", help="where to listen (default: site.bind, 127.0.0.1:8000)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--cluster", metavar="ADDRESS", help="play the ladder on a Dask cluster (as referee run)")
    where.add_argument("--workers", type=int, metavar="N", help="play the ladder on a local Dask cluster of N workers")
    p.add_argument("--cluster-timeout", type=float, default=None, metavar="SECONDS", help=argparse.SUPPRESS)
    p.add_argument("--send-logs", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--tls-ca-file", metavar="FILE", help="with --cluster: the CA certificate (docs/CLUSTER.md)")
    p.add_argument("--tls-cert", metavar="FILE", help="with --cluster: this client's certificate")
    p.add_argument("--tls-key", metavar="FILE", help="with --cluster: this client's private key")
    p.add_argument("--insecure", action="store_true", help="with --cluster: a scheduler without TLS")
    p.add_argument("--dashboard", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_host)

    s = sub.add_parser(
        "submit",
        help="upload a bot folder to a competition site",
        description="Pack DIR (with its referee.toml manifest) as a tar.gz, upload it to the site and print the "
        "version's page. --wait follows it until it is active, a candidate waiting for the host, rejected or "
        "failed (exit 0 active or candidate, 1 failed or rejected).",
    )
    s.add_argument("folder", metavar="DIR", help="the bot's folder (holds referee.toml)")
    s.add_argument("--site", required=True, metavar="URL", help="the site, e.g. https://cards.example.org")
    s.add_argument("--token", default=os.environ.get("REFEREE_TOKEN"), help="your token (default: $REFEREE_TOKEN)")
    s.add_argument("--wait", action="store_true", help="wait until the version is decided")
    s.add_argument("--timeout", type=float, default=1800.0, metavar="SECONDS", help="with --wait (default 1800)")
    s.set_defaults(func=cmd_submit)


def cmd_host(args: argparse.Namespace) -> int:
    from referee.site.config import load_site
    from referee.site.store import Store

    site = load_site(args.site)
    if args.action != "serve":
        store = Store.open(site.db_path)
        try:
            return _host_action(args, store)
        finally:
            store.close()
    from referee.site.serve import run_host

    host, port = site.bind(args.bind)
    from referee.commands.league import _cluster

    with _cluster(args) as cluster:
        return run_host(site, host, port, cluster=cluster)


def _host_action(args: argparse.Namespace, store: object) -> int:
    from referee.site.store import Store

    assert isinstance(store, Store)
    if args.action == "entrants":
        for e in store.entrants():
            print(e.name + (" (host)" if e.host else ""))
        return 0
    if not args.arg:
        raise UserError(
            f"referee host SITE.toml {args.action} needs {'VERSION' if args.action == 'promote' else 'NAME'}"
        )
    if args.action == "add-entrant":
        token = store.add_entrant(args.arg, host=args.is_host)
        print(
            f"entrant {args.arg} added{' (host)' if args.is_host else ''}; its token (shown only now, keep it secret):"
        )
        print(token)
        return 0
    if args.action == "new-token":
        print(store.new_token(args.arg))
        return 0
    from referee.site.pipeline import promote

    try:
        vid = int(args.arg)
    except ValueError:
        raise UserError(f"promote: {args.arg!r} is not a version id (a number, as in /versions/ID)") from None
    v = promote(store, vid, "the host (referee host promote)")
    print(f"version {v.id} ({v.bot}) is active; the ladder takes it in at its next table")
    return 0


def cmd_submit(args: argparse.Namespace) -> int:
    from referee.site.client import submit

    if not args.token:
        raise UserError("--token TOKEN (or $REFEREE_TOKEN) is needed: the host gave it to you")
    return submit(args.site, args.token, Path(args.folder), wait=args.wait, timeout=args.timeout, out=sys.stdout)
