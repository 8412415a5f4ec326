"""``referee play`` (one game with real bot processes) and ``referee replay`` (check a log)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
import time
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.commands import seed_value
from referee.errors import UserError

if TYPE_CHECKING:
    from referee.rules import Deal, Rules
    from referee.runtime import BotSpec, ClockSpec, FaultPolicy

_SHELL_CHARS = set("|&;<>()$`\\\"'*?[]#~%{}\n")
_GAME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "play",
        help="play one game (or match) between bots and log it",
        description="Play one game between bot processes, print the result table and write the game log. "
        "The number of --bot options is the table size (or use --players to repeat them).",
    )
    add_variant_argument(p)
    p.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="NAME=COMMAND",
        help="a bot: its name and the command that starts it, e.g. alice='python3 bots/a.py' (repeat)",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--seed",
        type=seed_value,
        metavar="N",
        help="seed for the deal and the fallback player, 0 to 2**64 - 1 (default: random)",
    )
    g.add_argument("--deal", metavar="FILE", help='a JSON deal file: {"dealer": 0, "hands": [[...], ...], "stock": []}')
    p.add_argument("--players", type=int, help="table size; the --bot options are repeated to fill it")
    p.add_argument(
        "--match",
        metavar="FORMAT",
        help="several hands: fixed:N or race:TARGET (ask variants); a tie for the best total is broken "
        "by extra hands among the tied seats, at most 50 hands in all (or N, if more)",
    )
    add_data_option(p)
    add_limit_options(
        p,
        grace_help="shutdown grace: after the last game each bot gets `bye` and its stdin is closed; a bot "
        "still running after this many ms is killed with its whole process group (default 500)",
        max_decisions_help="abort a hand still running after N decisions (default: 5000, or 10 per card and seat "
        "for a big custom deck)",
    )
    add_bot_limit_options(p)
    p.add_argument(
        "--game-id",
        help="game id: letters, digits, '.', '_', '-' (default <variant>-<players>p-<seed>, "
        "e.g. kwartet-4p-000007, or <variant>-<players>p-<date-time> for a deal; a "
        "default id gets a suffix -2, -3... when its log already exists)",
    )
    p.add_argument("--log", default="logs", metavar="DIR", help="directory for the game log (default ./logs)")
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite the log of an explicit --game-id that already exists (default: refuse)",
    )
    p.add_argument(
        "--compress",
        action="store_true",
        help="write the log zstandard-compressed as it is written (GAME.jsonl.zst; replay and view read it as it is)",
    )
    p.set_defaults(func=run_play)

    r = sub.add_parser(
        "replay",
        help="re-simulate a game log and verify it",
        description="Re-simulate a game from its log with the rules engine only, check every event "
        "and the result against the log, and print a transcript. Exit 1 on a mismatch.",
    )
    r.add_argument(
        "log", metavar="LOG", help="a game log (.jsonl, .jsonl.zst or .jsonl.gz) written by referee play or a league"
    )
    r.add_argument("--quiet", "-q", action="store_true", help="no transcript, only the verdict")
    r.set_defaults(func=run_replay)


# ----------------------------------------------------------------------------- parsing


def parse_bot(text: str) -> tuple[str, list[str] | str]:
    """``NAME=COMMAND`` -> (name, argv list or shell string). Raises UserError."""
    name, sep, command = text.partition("=")
    name = name.strip()
    if not sep or not name or not command.strip():
        raise UserError(f"--bot {text!r}: expected NAME=COMMAND, e.g. --bot alice='python3 bots/alice.py'")
    if any(c.isspace() for c in name):
        raise UserError(f"--bot {text!r}: the bot name must not contain spaces")
    command = command.strip()
    if _SHELL_CHARS & set(command):
        return name, command  # shell syntax: run with /bin/sh -c
    try:
        argv = shlex.split(command)
    except ValueError:
        return name, command
    return name, argv


def load_variant(text: str) -> Any:
    """A preset name or a JSON/TOML file with a custom variant's parameters."""
    from referee.rules import get_variant

    path = Path(text)
    if text.endswith((".json", ".toml")) or path.is_file():
        if not path.is_file():
            raise UserError(f"variant file {text!r} not found")
        raw = path.read_bytes()
        try:
            params = tomllib.loads(raw.decode()) if text.endswith(".toml") else json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            kind = "TOML" if text.endswith(".toml") else "JSON"
            raise UserError(f"variant file {text!r} is not valid {kind}: {exc}") from None
        if isinstance(params, dict) and isinstance(params.get("variant"), dict):
            params = params["variant"]
        if not isinstance(params, dict):
            raise UserError(f"variant file {text!r} must hold an object of rule parameters")
        return get_variant(params)
    return get_variant(text)


def load_deal(path: str) -> Any:
    from referee.rules import Deal

    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise UserError(f"deal file {path!r} not found (check the path)") from None
    except IsADirectoryError:
        raise UserError(
            f"--deal {path!r} is a directory, not a deal file; give a JSON file such as "
            '{"dealer": 0, "hands": [[...], ...], "stock": []}'
        ) from None
    except PermissionError:
        raise UserError(f"deal file {path!r} cannot be read: permission denied (check its permissions)") from None
    except OSError as exc:
        raise UserError(f"deal file {path!r} cannot be read: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
    except ValueError as exc:  # also UnicodeDecodeError
        raise UserError(f"deal file {path!r} is not valid JSON: {exc}") from None
    return Deal.from_json(data)


def parse_match(text: str | None) -> Any:
    if not text:
        return None
    from referee.rules.match import MatchFormat

    kind, _, num = text.partition(":")
    try:
        value = int(num)
    except ValueError:
        raise UserError(f"--match {text!r}: expected fixed:N (N hands) or race:T (first to T families)") from None
    if kind == "fixed":
        return MatchFormat(kind="fixed", hands=value)
    if kind == "race":
        return MatchFormat(kind="race", target=value)
    raise UserError(f"--match {text!r}: expected fixed:N or race:T")


# ----------------------------------------------------------------------------- play


def run_play(args: argparse.Namespace) -> int:
    from referee.runtime import GameSpec
    from referee.runtime.entry import run as trio_run

    rules = load_variant(args.variant)
    specs = _seats(args)
    match = parse_match(args.match)
    players = len(specs)
    if not (rules.min_players <= players <= rules.max_players):
        raise UserError(f"{rules.name} is for {rules.min_players}-{rules.max_players} players, not {players}")
    deal, seed = _cards(args, rules, players)
    clock, policy = _limits(args, rules, players)
    if args.game_id is not None and not _GAME_ID.fullmatch(args.game_id):
        raise UserError(
            f"--game-id {args.game_id!r}: use 1-128 letters, digits, '.', '_' or '-', starting with a "
            "letter or digit (the id names the log file inside the --log folder)"
        )
    base_id = args.game_id or default_game_id(rules, players, seed)
    game_id, log_path = reserve_log(
        args.log, base_id, explicit=args.game_id is not None, force=args.force, compress=args.compress
    )
    spec = GameSpec(
        game_id=game_id, rules=rules, players=players, seed=seed, deal=deal, match=match, clock=clock, policy=policy
    )
    from referee.runtime.sandbox import protect_paths

    # the log folder (this game's log names its seed) and a deal file are hidden from bots in bubblewrap
    protect_paths(secret=[args.log] + ([args.deal] if args.deal else []))
    try:
        # exception groups: read by the cli (user_facing)
        result = trio_run(_play, specs, spec, Path(args.log), args.compress)
    finally:
        _drop_if_empty(log_path)  # the reserved name, when no game was logged (a bot could not start)
    if isinstance(result, BaseException):
        raise UserError(f"a bot could not start: {result}")
    _print_result(result, specs, rules)
    return 0


def _seats(args: argparse.Namespace) -> list[BotSpec]:
    """One BotSpec per seat: the --bot options, repeated to fill --players; a
    name seated again gets ``#2``, ``#3``..."""
    from referee.runtime import BotSpec

    if not args.bot:
        raise UserError("no bots: give one --bot NAME=COMMAND per seat")
    bots = [parse_bot(b) for b in args.bot]
    limits, env = bot_limits(args)
    players = args.players if args.players is not None else len(bots)
    if players < len(bots):
        raise UserError(f"--players {players} but {len(bots)} --bot options were given")
    specs = []
    seen: dict[str, int] = {}
    for i in range(players):
        name, command = bots[i % len(bots)]
        seen[name] = seen.get(name, 0) + 1
        specs.append(
            BotSpec(
                name if seen[name] == 1 else f"{name}#{seen[name]}",
                command,
                env=env,
                limits=limits,
                data=data_folders(args),
            )
        )
    return specs


def _cards(args: argparse.Namespace, rules: Rules, players: int) -> tuple[Deal | None, int | None]:
    """``(deal, seed)``: the --deal file (checked against the rules and the
    table size), else the --seed, else a random seed."""
    deal = load_deal(args.deal) if args.deal else None
    if deal is not None and len(deal.hands) != players:
        raise UserError(f"the deal has {len(deal.hands)} hands but there are {players} bots")
    if deal is not None:
        rules.new_game(players, deal=deal)  # validates the deal (RulesError -> exit 2)
        problem = deal.dealing_rule_problem()
        if problem:
            print(
                f"warning: --deal {args.deal}: {problem} (docs/RULES.md, the deal); the game is played with "
                "the hands as given",
                file=sys.stderr,
            )
    seed: int | None = args.seed
    if seed is None and deal is None:
        seed = int.from_bytes(os.urandom(4), "big")
    return deal, seed


def add_variant_argument(p: argparse.ArgumentParser) -> None:
    """The ``VARIANT`` argument of ``play`` and ``duel``: a preset's name or a custom variant's file."""
    from referee.rules import VARIANTS

    p.add_argument(
        "variant",
        metavar="VARIANT",
        help=f"a preset ({', '.join(VARIANTS)}) or a .json/.toml file defining a custom ask variant",
    )


def add_data_option(p: argparse.ArgumentParser) -> None:
    """``--data DIR`` (repeatable) of ``play``, ``duel`` and ``check-bot``: read by :func:`data_folders`."""
    p.add_argument(
        "--data",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder every bot may read (read-only) besides its own; in the sandbox a bot sees only its "
        "own folder (its program's) and the system (repeat for several)",
    )


def data_folders(args: argparse.Namespace) -> tuple[str, ...]:
    """The ``--data`` folders, absolute; ``UserError`` for one that is not a folder."""
    out = []
    for d in getattr(args, "data", None) or []:
        if not os.path.isdir(d):
            what = "is not a folder" if os.path.exists(d) else "does not exist"
            raise UserError(f"--data {d!r}: {what} (give a folder the bots may read)")
        out.append(os.path.abspath(d))
    return tuple(out)


def add_limit_options(p: argparse.ArgumentParser, *, grace_help: str, max_decisions_help: str) -> None:
    """The clock and fault options :func:`_limits` reads (``referee play``, ``duel`` and ``check-bot``)."""
    p.add_argument("--move-ms", type=int, default=1000, help="limit per decision in ms (default 1000)")
    p.add_argument("--bank-ms", type=int, help="optional time bank per game in ms")
    p.add_argument("--startup-ms", type=int, default=10000, help="limit for the hello handshake (default 10000)")
    p.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall: elapsed time; cpu: the bot's own CPU time with a wall ceiling of 3 x move-ms",
    )
    p.add_argument("--grace-ms", type=int, default=500, help=grace_help)
    p.add_argument("--retries", type=int, default=0, help="extra tries for illegal/malformed replies (default 0)")
    p.add_argument("--max-line", type=int, default=65536, help="longest reply line in bytes (default 65536)")
    p.add_argument("--max-decisions", type=int, metavar="N", help=max_decisions_help)


def _limits(args: argparse.Namespace, rules: Rules, players: int) -> tuple[ClockSpec, FaultPolicy]:
    """``(ClockSpec, FaultPolicy)`` from the options, checked (``--max-decisions``
    defaults to :func:`referee.runtime.spec.max_decisions_for` the variant and table size)."""
    from referee.runtime import FaultPolicy
    from referee.runtime.spec import max_decisions_for

    clock = clock_option(args)
    fault_options(args)
    return clock, FaultPolicy(
        retries=args.retries,
        max_line=args.max_line,
        max_decisions=args.max_decisions or max_decisions_for(rules, players),
    )


def clock_option(args: argparse.Namespace) -> ClockSpec:
    """The :class:`ClockSpec` of the clock options of :func:`add_limit_options`, checked
    (:class:`UserError` naming the option)."""
    from referee.runtime import ClockSpec

    for opt in ("move_ms", "startup_ms", "bank_ms"):
        value = getattr(args, opt)
        if value is not None and value <= 0:
            raise UserError(f"--{opt.replace('_', '-')} must be a positive number of milliseconds, got {value}")
    if args.grace_ms < 0:
        raise UserError(f"--grace-ms must be 0 or more milliseconds, got {args.grace_ms}")
    clock = ClockSpec(
        move_ms=args.move_ms, bank_ms=args.bank_ms, startup_ms=args.startup_ms, mode=args.clock, grace_ms=args.grace_ms
    )
    try:
        clock.validate()
    except ValueError as exc:
        raise UserError(str(exc)) from None
    return clock


def fault_options(args: argparse.Namespace) -> None:
    """Check ``--retries``, ``--max-line`` and ``--max-decisions`` of :func:`add_limit_options`
    (:class:`UserError` for a bad value)."""
    if args.retries < 0 or args.max_line < 64:
        raise UserError("--retries must be >= 0 and --max-line at least 64")
    if args.max_decisions is not None and args.max_decisions < 1:
        raise UserError(
            "--max-decisions must be at least 1 (a hand still running after that many decisions is aborted)"
        )


def add_bot_limit_options(p: argparse.ArgumentParser) -> None:
    """The bots' resource limit, sandbox and runtime options :func:`bot_limits` reads
    (``referee play``, ``duel`` and ``check-bot``: the keys of a league's ``[limits]``)."""
    from referee.runtime.limits import ISOLATIONS
    from referee.runtime.runtimes import RUNTIMES

    p.add_argument(
        "--memory-mb",
        type=int,
        metavar="N",
        help="memory limit per bot process in MiB: address space, and resident memory where control groups work "
        "(default 2048; a league's memory_mb)",
    )
    p.add_argument("--cpu-seconds", type=int, metavar="N", help="CPU seconds per bot process, all games (default 3600)")
    p.add_argument(
        "--sandbox",
        choices=[i for i in ISOLATIONS if i != "auto"],
        help="bwrap (bubblewrap), basic (the referee's own) or none (only the limits: trusted bots); default: "
        "bwrap where it works, else basic (docs/SECURITY.md)",
    )
    p.add_argument(
        "--runtime",
        metavar="NAME",
        help=f"the bots' language runtime preset ({', '.join(RUNTIMES)}): the limits and environment it needs, "
        'as a league bot\'s runtime = "java" (docs/WRITING-A-BOT.md, Languages)',
    )


def bot_limits(args: argparse.Namespace) -> tuple[Any, dict[str, str] | None]:
    """``(ResourceLimits, env)`` of the options of :func:`add_bot_limit_options`:
    the runtime preset's limits and variables under the options given. Raises
    :class:`UserError` naming the option for a bad value, or a sandbox this
    machine cannot give."""
    from referee.runtime.limits import LimitsError, parse_limits
    from referee.runtime.runtimes import UnknownRuntime, apply_runtime, runtime_env
    from referee.runtime.sandbox import limits_problem

    table: dict[str, Any] = {}
    for option, key in (("memory_mb", "memory_mb"), ("cpu_seconds", "cpu_seconds"), ("sandbox", "sandbox")):
        value = getattr(args, option, None)
        if value is not None:
            table[key] = value
    try:
        merged = apply_runtime(args.runtime, None, table)
        limits = parse_limits(merged)
    except UnknownRuntime as exc:
        raise UserError(f"--runtime: {exc}") from None
    except LimitsError as exc:
        raise UserError(
            f"--{(exc.key or 'limits').replace('_', '-')} {table.get(exc.key or '')!r}: {exc.message}"
        ) from None
    problem = limits_problem(limits)
    if problem:
        raise UserError(f"--sandbox {args.sandbox or 'bwrap'}: {problem}")
    return limits, runtime_env(args.runtime, limits, None)


def default_game_id(rules: Any, players: int, seed: int | None) -> str:
    """``<variant>-<players>p-<seed>`` (``kwartet-4p-000007``), or the date and
    time instead of the seed for an explicit deal: the log's name says what it
    holds (a league's game ids start the same way)."""
    from referee.league.config import slugify

    tail = f"{seed:06d}" if seed is not None else time.strftime("%Y%m%d-%H%M%S")
    return f"{slugify(rules.name)}-{players}p-{tail}"


def reserve_log(folder: str, game_id: str, *, explicit: bool, force: bool, compress: bool = False) -> tuple[str, str]:
    """Create the log folder and claim ``<folder>/<id>.jsonl`` (``.jsonl.zst``
    with ``compress``) atomically (an
    empty file, ``O_EXCL``), so that no run overwrites another's log, even two
    runs started in the same second. A default id that is taken gets a suffix
    (``g-000007-2``, ``-3``...); an explicit one is refused unless ``force``.
    Returns ``(game id, log path)``. Raises ``UserError`` for a folder that
    cannot be created or written (a file in the way, /proc, no permission)."""
    from referee.runtime.gamelog import LOG_SUFFIXES, log_name

    try:
        os.makedirs(folder, exist_ok=True)
    except FileExistsError:
        raise UserError(f"--log {folder!r} is a file, not a folder: give a folder for the game logs") from None
    except NotADirectoryError:
        raise UserError(f"--log {folder!r}: part of that path is a file, not a folder") from None
    except OSError as exc:
        raise UserError(
            f"--log {folder!r}: cannot create the log folder ({exc.strerror or exc}); give a folder you can write to"
        ) from None
    for k in range(1, 1000):
        gid = game_id if k == 1 else f"{game_id}-{k}"
        path = os.path.join(folder, log_name(gid, compress))
        if explicit and force:
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        else:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
        try:
            if not (explicit and force) and any(
                os.path.exists(os.path.join(folder, gid + suffix)) for suffix in LOG_SUFFIXES
            ):
                raise FileExistsError(path)  # the game id is taken by a log in another form
            os.close(os.open(path, flags, 0o644))
        except FileExistsError:
            if explicit:
                raise UserError(
                    f"the log {path} already exists: choose another --game-id, or add --force to overwrite it"
                ) from None
            continue
        except OSError as exc:
            raise UserError(f"--log {folder!r}: cannot write the log {path} ({exc.strerror or exc})") from None
        return gid, path
    raise UserError(
        f"--log {folder!r}: logs {game_id}.jsonl to {game_id}-999.jsonl all exist; clean up the folder "
        "or give --game-id"
    )


def _drop_if_empty(path: str) -> None:
    try:
        if os.path.getsize(path) == 0:
            os.unlink(path)
    except OSError:
        pass


async def _play(specs: list[Any], spec: Any, log_dir: Path, compress: bool = False) -> Any:
    """Start the bots, play, close them (also on Ctrl-C). Returns the result,
    or the BotError of a bot that could not start."""

    from referee.runtime import BotError, open_bots, play_game

    try:
        async with open_bots(specs, spec.clock, max_line=spec.policy.max_line) as bots:
            return await play_game(spec, bots.sessions, log_dir, compress=compress)
    except BotError as exc:
        return exc


def _print_result(result: Any, specs: list[Any], rules: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"{result.game_id} ({result.reason})")
    for col in ("seat", "bot", "score", "rank", "faults", "mean ms", "max ms"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for i, sp in enumerate(specs):
        faults = [f.fault for f in result.faults if f.seat == i]
        think = result.think_ms[i]
        table.add_row(
            str(i),
            sp.name,
            f"{result.scores[i]:g}",
            str(result.ranks[i]),
            ", ".join(faults) or "-",
            f"{think.mean_ms:.2f}",
            f"{think.max_ms:.2f}",
        )
    console.print(table)
    for f in result.faults:
        console.print(f"[yellow]fault[/]: seat {f.seat} ({f.bot}) {f.fault}: {f.detail}", markup=True, highlight=False)
    if result.detail:
        console.print(f"detail: {result.detail}", highlight=False)
    if result.reason == "stalled":
        console.print(
            f"stalled: {getattr(rules, 'stall', '?')} asks in a row moved no card, so the hand ended by the "
            "stalemate rule and was scored as it stood (docs/RULES.md); bots that ask in circles should "
            "remember their misses and vary target or card",
            highlight=False,
        )
    if result.log_path:
        console.print(f"log: {result.log_path}", highlight=False)


# ----------------------------------------------------------------------------- replay


def run_replay(args: argparse.Namespace) -> int:
    """Replay a log and print the transcript and the verdict: 0 verified, 1 a
    mismatch. A reader that stops reading early (``referee replay LOG | head``)
    changes nothing: the status is still the verdict, and nothing is reported."""
    from referee.runtime.replay import replay

    report = replay(args.log)
    try:
        return _print_replay(report, args.quiet)
    except BrokenPipeError:
        _silence_stdout()
        return 0 if report.ok else 1


def _silence_stdout() -> None:
    """After a closed pipe: point stdout at /dev/null, so that the interpreter's last
    flush at exit neither fails nor prints a warning."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


def _print_replay(report: Any, quiet: bool) -> int:
    from rich.console import Console

    class _PipeConsole(Console):
        def on_broken_pipe(self) -> None:  # rich's own exits with status 1: let run_replay decide
            self.quiet = True
            raise BrokenPipeError

    console = _PipeConsole(highlight=False)
    h = report.header
    if not quiet:
        console.print(f"[bold]{h.get('game')}[/]: {h.get('variant')}, {h.get('players')} players, seed {h.get('seed')}")
        for line in report.transcript:
            console.print(line, markup=False, soft_wrap=True)
    if report.ok:
        what = (
            "verified up to the interruption"
            if report.interrupted
            else "verified up to the log's size cap (the rest of the game was not recorded)"
            if report.capped
            else "verified"
        )
        console.print(
            f"[green]{what}[/]: {report.hands} hand(s), {report.actions} actions, "
            f"scores {report.footer.get('scores')}, ranks {report.footer.get('ranks')}",
            soft_wrap=True,
        )
        return 0
    for m in report.mismatches:
        console.print(f"[red]mismatch[/]: {m}", highlight=False, soft_wrap=True)
    return 1
