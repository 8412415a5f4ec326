"""``referee view LOG`` (one game as a page to step through) and ``referee serve OUT``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    v = sub.add_parser(
        "view",
        help="write a game's log as a page to watch it step by step",
        description="Replay a game or match log with the referee's core and write one self-contained HTML page "
        "(no network needed) that steps through it: every ask, play, take, fault and retry, with the "
        "hands open or as one seat saw them.",
    )
    v.add_argument("log", metavar="LOG", help="a game log (.jsonl, .jsonl.zst or .jsonl.gz)")
    v.add_argument("-o", "--output", metavar="FILE.html", help="where to write the page (default: LOG with .html)")
    v.set_defaults(func=run_view)

    s = sub.add_parser(
        "serve",
        help="serve a night's report, games and a live page over HTTP",
        description="Serve the output folder of a league night on localhost: the report, the game browser, a "
        "viewer page for every game, the logs, and /live, which shows the progress and standings of a "
        "night while `referee run` plays it in another process (start it before the night: it waits). Only the "
        "report's files, the logs and the viewer pages are served, never the ledger or anything else in OUT. "
        "Reads only; Ctrl-C stops it.",
    )
    s.add_argument(
        "out",
        metavar="OUT",
        help="a league output folder; it may be empty or not exist yet (the live page waits for the night)",
    )
    s.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000; 0 = any free port)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)")
    s.add_argument("--verbose", action="store_true", help="log every request")
    s.set_defaults(func=run_serve)


def _default_output(log: Path) -> Path:
    name = log.name
    for suffix in (".jsonl.zst", ".jsonl.gz", ".jsonl"):
        if name.endswith(suffix):
            return log.with_name(name[: -len(suffix)] + ".html")
    return log.with_name(name + ".html")


def run_view(args: argparse.Namespace) -> int:
    from referee.errors import UserError
    from referee.view import render_viewer
    from referee.view.events import events_from_log

    log = Path(args.log)
    data = events_from_log(log)
    out = Path(args.output) if args.output else _default_output(log)
    try:
        page = render_viewer(data)
    except (ValueError, TypeError) as exc:  # frames the page cannot show: one line, not a traceback
        raise UserError(f"{log}: cannot make a viewer page of this game: {exc}") from None
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    note = "" if data["verified"] else f" (replay found a mismatch: {data['mismatch']})"
    print(f"{out}: {len(data['events'])} events of {data['game']}{note}")
    return 0 if data["verified"] else 1


def run_serve(args: argparse.Namespace) -> int:
    from referee.view.serve import serve

    return serve(
        args.out,
        args.host,
        args.port,
        verbose=args.verbose,
        announce=lambda text: print(text, file=sys.stderr, flush=True),
    )
