"""The ``referee`` command line. Entry point: :func:`main`.

Each command lives in a module of :mod:`referee.commands` that defines
``register(subparsers)``; a registered sub-parser sets ``func`` (called with the
parsed arguments, returns the exit status).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from referee import __version__
from referee.errors import UserError
from referee.rules import RulesError

#: modules that register commands, in help order
COMMAND_MODULES = (
    "referee.commands.play",      # play, replay
    "referee.commands.league",    # run, plan, standings, report
    "referee.commands.checkbot",  # check-bot
    "referee.commands.schema",    # schema
    "referee.commands.bench",     # bench engine|transport|league
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="referee",
        description="Referee for card-game bot leagues: play games, run league nights, check bots.",
    )
    parser.add_argument("--version", action="version", version=f"referee {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 failure, 2 usage/input error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(func(args) or 0)
    except (UserError, RulesError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
