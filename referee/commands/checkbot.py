"""``referee check-bot [--name N] -- COMMAND...``: is this bot ready for a league?

Runs :func:`referee.checkbot.check_bot` and prints a checklist: one pass/fail
line per check, and under each failure the fix. Exit status 0 when every check
passes, 1 when any fails, 2 for bad usage (no command, bad option values).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from referee.checkbot import Report, check_bot, parse_command, plural
from referee.commands.play import (
    add_bot_limit_options,
    add_data_option,
    add_limit_options,
    bot_limits,
    clock_option,
    data_folders,
    fault_options,
)
from referee.errors import UserError
from referee.runtime.entry import run as trio_run

DESCRIPTION = """Is this bot ready for a league? check-bot starts the bot, checks the hello handshake,
probes how it handles turn ids, error messages, unknown fields and bye, then plays real games:
every variant (the presets and two custom ask variants) at several table sizes, against the
referee's instant bot in the other seats, all in one process (session mode) and with a fresh
process per game (per-game mode). It prints one PASS/FAIL line per check, with a fix under every
failure. Exit status: 0 all passed, 1 something failed, 2 bad usage."""

EPILOG = """examples:
  referee check-bot -- python3 sample_bots/random_bot.py
  referee check-bot --name js -- node sample_bots/js_bot.js
  referee check-bot -- ./c_bot
  referee check-bot -- "cd mybot && ./run.sh"     (one quoted word: run by /bin/sh)
  referee check-bot --runtime java -- java -cp classes Bot   (the JVM sized to the memory limit)
  referee check-bot --memory-mb 4096 --sandbox basic -- ./my_bot
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "check-bot",
        help="put a bot through the handshake, every variant and the malformed-situation probes",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--name",
        default=None,
        help="the bot's name in its hello and the games, as a league's [[bots]] name (default: its script's or "
        "program's name, e.g. tracker_bot)",
    )
    p.add_argument("--cwd", default=None, help="working directory to start the bot in")
    add_data_option(p)
    p.add_argument(
        "--variant",
        action="append",
        default=None,
        metavar="NAME",
        help="check only this variant (repeatable; default: every preset and two custom variants)",
    )
    add_limit_options(
        p,
        grace_help="how long the bot may take to exit after bye (default 500, as in a league)",
        max_decisions_help="abort a hand still running after N decisions, as a league's max_decisions (default: "
        "the variant's and table size's, as referee play; self-play: 2000)",
    )
    add_bot_limit_options(p)
    p.add_argument("--log-dir", default=None, help="keep the game logs here (default: a temporary directory)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the bot's command, after --")
    p.set_defaults(func=run)


USAGE = "usage: referee check-bot [OPTIONS] -- COMMAND [ARG...]   (referee check-bot --help for the options)"


def run(args: argparse.Namespace) -> int:
    try:
        command = parse_command(args.command)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return 2
    clock_option(args)
    fault_options(args)
    limits, env = bot_limits(args)
    err = Console(stderr=True, highlight=False)
    status = err.status("check-bot: starting", spinner="dots") if err.is_terminal and not args.json else None

    def progress(text: str) -> None:
        if status is not None:
            status.update(f"check-bot: {escape(text)}")

    async def go(log_dir: Path) -> Report:
        return await check_bot(
            command,
            name=args.name,
            cwd=args.cwd,
            move_ms=args.move_ms,
            startup_ms=args.startup_ms,
            grace_ms=args.grace_ms,
            variants=args.variant,
            log_dir=log_dir,
            progress=progress,
            limits=limits,
            env=env,
            runtime=args.runtime,
            bank_ms=args.bank_ms,
            clock_mode=args.clock,
            data=data_folders(args),
            retries=args.retries,
            max_line=args.max_line,
            max_decisions=args.max_decisions,
        )

    with tempfile.TemporaryDirectory(prefix="checkbot-") as tmp:
        log_dir = Path(args.log_dir) if args.log_dir else Path(tmp)
        if args.log_dir:
            try:
                log_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise UserError(
                    f"--log-dir {log_dir}: cannot use it as a folder for game logs: {exc.strerror or exc}"
                ) from None
        with status if status is not None else contextlib.nullcontext():
            report = trio_run(go, log_dir)
    if args.json:
        json.dump(report.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_checklist(Console(highlight=False, soft_wrap=True), command, report)
    return 0 if report.ok else 1


def _print_checklist(console: Console, command: list[str] | str, report: Report) -> None:
    """One PASS/FAIL line per check (with the fix under a failure; consecutive
    checks skipped for the same reason on one SKIP line), then the verdict."""
    shown = command if isinstance(command, str) else " ".join(command)
    console.print(f"check-bot: {escape(shown)}")
    checks = report.checks
    i = 0
    while i < len(checks):
        check = checks[i]
        if check.skipped:
            j = i
            while j < len(checks) and checks[j].skipped and checks[j].detail == check.detail:
                j += 1
            names = [c.name for c in checks[i:j]]
            label = names[0] if len(names) == 1 else f"{len(names)} checks ({', '.join(names)})"
            console.print(f"  [yellow]SKIP[/yellow] {escape(label)}: {escape(check.detail)}")
            i = j
            continue
        mark = "[green]PASS[/green]" if check.ok else "[bold red]FAIL[/bold red]"
        console.print(f"  {mark} {escape(check.name)}: {escape(check.detail)}")
        if check.fix:
            console.print(f"       [yellow]fix:[/yellow] {escape(check.fix)}")
        i += 1
    if report.ok:
        console.print(
            f"[green]all {plural(len(checks), 'check')} passed[/green] in {report.seconds:.1f} s: "
            f"{escape(report.bot_name or '')} is ready for a league"
        )
        return
    skipped = len(report.skipped)
    summary = f"{len(report.failed)} of {plural(len(checks) - skipped, 'check')} failed"
    if skipped:
        summary += f", {skipped} not run (SKIP)"
    console.print(f"[bold red]{summary}[/bold red]: fix the lines marked FAIL and run check-bot again")
