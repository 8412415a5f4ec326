"""``referee duel``: two bots on the same deals in mirrored seats, until a sequential test decides.

The playing is :mod:`referee.league.duel`'s, the statistics
:mod:`referee.league.sprt`'s; this module parses the options, shows the live
line (stderr), writes the JSON summary (stdout, or ``--json FILE``) and turns
the result into the exit status: 0 H1 accepted (or every game played, without
``--sprt``), 1 H0 accepted, 2 an error, 3 MAX games played undecided, 130
interrupted.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from referee.commands import seed_value
from referee.commands.play import add_bot_limit_options, add_data_option, add_limit_options, add_variant_argument
from referee.errors import UserError, user_facing

if TYPE_CHECKING:
    from referee.league.duel import Duel, DuelSpec, DuelSummary
    from referee.runtime import BotSpec

#: the field's default: the sample tracker (a reasonable, deterministic-minded opponent)
SAMPLE_TRACKER = Path(__file__).resolve().parents[2] / "sample_bots" / "tracker_bot.py"
DEFAULT_GAMES = 1000
#: what argparse reads as a value although it starts with "-": a word that starts as a negative number
#: does (--sprt -10,0; --sprt -5,5,0.05,0.05; --sprt -10,x gets parse_sprt's error); no option of
#: duel's starts with "-" and a digit
NEGATIVE_VALUE = re.compile(r"^-\.?\d")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "duel",
        help="bot A against bot B on mirrored deals, with a sequential test (SPRT)",
        description="Play bot A against bot B: every deal twice, A and B swapping seats (a deal pair), the other "
        "seats (with --players K > 2) filled by field bots that keep their seats in both games. Reports "
        "the Elo difference of A over B with its 95% interval and, with --sprt, stops as soon as the "
        "sequential test accepts H0 or H1. A live line goes to stderr, a JSON summary to stdout. Exit "
        "status: 0 H1 accepted (or every game played, without --sprt), 1 H0 accepted, 2 an error, 3 MAX "
        "games played and undecided, 130 interrupted. See docs/DUEL.md.",
    )
    # a value such as "-10,0" (--sprt -10,0: negative bounds) is a value, not an option: argparse takes
    # only plain negative numbers ("-10", "-.5") for values unless its matcher says otherwise
    p._negative_number_matcher = NEGATIVE_VALUE

    def one_line_error(message: str) -> NoReturn:
        # an option argparse could not read: one error line saying what to type (no usage dump)
        hint = (
            ": give ELO0,ELO1 after it, e.g. --sprt 0,10, or --sprt -10,0 for a non-regression test"
            if "--sprt" in message
            else " (referee duel --help lists the options)"
        )
        p.exit(2, f"error: {message}{hint}\n")

    p.error = one_line_error  # type: ignore[method-assign]
    add_variant_argument(p)
    _match_arguments(p)
    p.add_argument("--log", metavar="DIR", help="keep every game's log in DIR (default: no logs)")
    p.add_argument("--json", metavar="FILE", help="write the JSON summary to FILE instead of stdout")
    p.add_argument(
        "--progress-every",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="when stderr is not a terminal: a progress line every SECONDS (default 10)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no live line and no result lines on stderr")
    p.set_defaults(func=run_duel)


# ----------------------------------------------------------------------------- the options


def _match_arguments(p: argparse.ArgumentParser) -> None:
    """The duel's bots, field, games and test."""
    p.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="NAME=COMMAND",
        help="give it twice: bot A, then bot B, e.g. --bot new='python3 new.py' --bot old='python3 old.py'",
    )
    p.add_argument(
        "--field",
        action="append",
        default=[],
        metavar="NAME=COMMAND",
        help="a bot for the other seats when --players > 2 (repeat; repeated in order to fill the seats; "
        "default: the sample tracker, sample_bots/tracker_bot.py)",
    )
    p.add_argument(
        "--players",
        type=int,
        metavar="K",
        help="table size (default: the variant's smallest table, or 2 + the number of --field bots if that is more)",
    )
    p.add_argument(
        "--games",
        type=int,
        default=DEFAULT_GAMES,
        metavar="MAX",
        help=f"play at most MAX games, an even number: MAX/2 deal pairs (default {DEFAULT_GAMES})",
    )
    p.add_argument(
        "--sprt",
        metavar="ELO0,ELO1[,ALPHA,BETA]",
        help="sequential test of H0 'A is ELO0 Elo stronger than B' against H1 'ELO1 stronger' (ELO0 < "
        "ELO1), with false-positive rate ALPHA and false-negative rate BETA (default 0.05 each), "
        "e.g. --sprt 0,20, or --sprt -10,0 for a non-regression test; without it, MAX games are played and "
        "the Elo is estimated (after a stop, the Elo is the median-unbiased estimate of the stopped test)",
    )
    p.add_argument(
        "--model",
        choices=("logistic", "normalized"),
        default="logistic",
        help="what ELO0 and ELO1 mean: logistic Elo (default; the expected pair score) or normalized Elo "
        "(as fastchess's default)",
    )
    p.add_argument(
        "--seed",
        type=seed_value,
        metavar="N",
        help="master seed of the deals (deal pair d uses derive(N, 'pair:d')), 0 to 2**64 - 1 "
        "(default: random; the summary shows it)",
    )
    p.add_argument(
        "--match", metavar="FORMAT", help="every game a match of several hands: fixed:N or race:TARGET (ask variants)"
    )
    p.add_argument(
        "--concurrency",
        "-j",
        type=int,
        default=1,
        metavar="N",
        help="deal pairs played at once, each at its own table with its own bot processes (default 1)",
    )
    add_data_option(p)
    add_limit_options(
        p,
        grace_help="shutdown grace: a bot still running this many ms after `bye` is killed (default 500)",
        max_decisions_help="abort a hand still running after N decisions (its deal pair is dropped; default: as "
        "referee play)",
    )
    add_bot_limit_options(p)


def _bot_spec(text: str, what: str) -> BotSpec:
    from referee.commands.play import parse_bot
    from referee.runtime import BotSpec

    try:
        name, command = parse_bot(text)
    except UserError as exc:
        raise UserError(str(exc).replace("--bot ", f"{what} ", 1)) from None
    return BotSpec(name, command)


def build_spec(args: argparse.Namespace) -> DuelSpec:
    """The :class:`DuelSpec` of the options; raises :class:`UserError` for any bad value."""
    import dataclasses

    from referee.commands.play import _limits, bot_limits, data_folders, load_variant, parse_match
    from referee.league.duel import DuelSpec, field_seats
    from referee.league.sprt import parse_sprt
    from referee.runtime import BotSpec

    test = None
    if args.sprt is not None:
        try:
            test = parse_sprt(args.sprt, model=args.model)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    if len(args.bot) != 2:
        raise UserError(
            f"a duel needs exactly two --bot options (A, then B), got {len(args.bot)}: e.g. "
            "--bot new='python3 new.py' --bot old='python3 old.py'"
        )
    data = data_folders(args)
    a = dataclasses.replace(_bot_spec(args.bot[0], "--bot"), data=data)
    b = dataclasses.replace(_bot_spec(args.bot[1], "--bot"), data=data)
    if b.name == a.name:
        b = dataclasses.replace(b, name=f"{b.name}#2")
    rules = load_variant(args.variant)
    field_bots = [dataclasses.replace(_bot_spec(f, "--field"), data=data) for f in args.field]
    players = args.players
    if players is None:
        players = max(rules.min_players, 2, 2 + len(field_bots))
    if not rules.min_players <= players <= rules.max_players or players < 2:
        raise UserError(
            f"--players {players}: {rules.name} is for {max(2, rules.min_players)}-{rules.max_players} players"
        )
    if field_bots and len(field_bots) > players - 2:
        raise UserError(
            f"{len(field_bots)} --field bots but only {players - 2} field seat(s) at a {players}-seat "
            "table: give fewer --field bots or a larger --players"
        )
    if not field_bots and players > 2:
        if not SAMPLE_TRACKER.is_file():
            raise UserError(
                f"no --field bots for the {players - 2} other seat(s), and the default field (the sample "
                f"tracker) is not at {SAMPLE_TRACKER}: give --field NAME=COMMAND"
            )
        field_bots = [BotSpec("tracker", [sys.executable, str(SAMPLE_TRACKER)])]
    if args.games < 2 or args.games % 2:
        raise UserError(f"--games {args.games}: give an even number of at least 2 (a deal pair is two games)")
    if args.concurrency < 1:
        raise UserError(f"--concurrency {args.concurrency}: give at least 1 (deal pairs played at once)")
    if not args.progress_every > 0:
        raise UserError("--progress-every must be a positive number of seconds")
    match = parse_match(args.match)
    clock, policy = _limits(args, rules, players)
    limits, env = bot_limits(args)  # every bot of the duel, the field too
    a, b = (dataclasses.replace(x, limits=limits, env=env) for x in (a, b))
    field_bots = [dataclasses.replace(x, limits=limits, env=env) for x in field_bots]
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    log_dir = Path(args.log) if args.log else None
    try:
        spec = DuelSpec(
            rules=rules,
            players=players,
            a=a,
            b=b,
            field=field_seats(field_bots, players - 2, [a.name, b.name]),
            seed=seed,
            max_pairs=args.games // 2,
            test=test,
            match=match,
            clock=clock,
            policy=policy,
            concurrency=args.concurrency,
            log_dir=log_dir,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
    return spec


def _prepare_outputs(args: argparse.Namespace, spec: DuelSpec) -> None:
    """Create the log folder (refusing one that holds this duel's logs already)
    and check that the JSON file can be written, before any bot starts."""
    if spec.log_dir is not None:
        folder = str(spec.log_dir)
        try:
            os.makedirs(folder, exist_ok=True)
        except FileExistsError:
            raise UserError(f"--log {folder!r} is a file, not a folder: give a folder for the game logs") from None
        except NotADirectoryError:
            raise UserError(f"--log {folder!r}: part of that path is a file, not a folder") from None
        except OSError as exc:
            raise UserError(f"--log {folder!r}: cannot create the log folder ({exc.strerror or exc})") from None
        if not os.access(folder, os.W_OK):
            raise UserError(f"--log {folder!r}: the folder cannot be written to")
        taken = [n for n in os.listdir(folder) if n.startswith(spec.id_prefix + "-")]
        if taken:
            raise UserError(
                f"--log {folder!r} already holds logs of a duel with this variant, table size and seed "
                f"({taken[0]}...): give another folder or another --seed"
            )
    if args.json:
        target = Path(args.json)
        parent = target.parent if str(target.parent) else Path(".")
        if target.is_dir():
            raise UserError(f"--json {args.json!r} is a folder: give a file name for the summary")
        if not parent.is_dir():
            raise UserError(f"--json {args.json!r}: the folder {str(parent)!r} does not exist")
        if not os.access(parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
            raise UserError(f"--json {args.json!r}: cannot write there")


# ----------------------------------------------------------------------------- running


def run_duel(args: argparse.Namespace) -> int:
    from referee.league.duel import EXIT_STATUS, Duel, check_start
    from referee.runtime.entry import run as trio_run
    from referee.runtime.sandbox import protect_paths

    spec = build_spec(args)
    _prepare_outputs(args, spec)
    # the logs name their seeds: hidden from the bots in bubblewrap, as the summary file is
    protect_paths(secret=[p for p in (args.log, args.json) if p])
    show = _Display(spec, quiet=args.quiet, every=args.progress_every)
    duel = Duel(spec, on_game=show)

    async def main() -> None:
        await check_start(spec)
        duel.started = time.monotonic()
        show.start()
        await duel.run()

    result: str | None = None
    error: BaseException | None = None
    try:
        trio_run(main)
    except BaseException as exc:  # Ctrl-C, or an error: the summary so far is still written
        exc = user_facing(exc)
        if isinstance(exc, KeyboardInterrupt):
            result = "interrupted"
        elif isinstance(exc, UserError) and duel.games == 0:
            show.stop()
            raise exc from None  # nothing played (a bot did not start): only the error line
        elif isinstance(exc, UserError):
            result, error = "error", exc
        elif isinstance(exc, OSError):
            result, error = "error", UserError(f"{exc.filename or 'duel'}: {exc.strerror or exc}")
        else:
            show.stop()
            raise
    finally:
        show.stop()
    summary = duel.summary(result)
    _write_summary(args, summary)
    show.final(duel, summary)
    if error is not None:
        raise error
    if result == "interrupted":
        print("interrupted", file=sys.stderr)
    return EXIT_STATUS[summary.result]


def _write_summary(args: argparse.Namespace, summary: DuelSummary) -> None:
    import msgspec

    data = msgspec.json.format(msgspec.json.encode(summary), indent=2) + b"\n"
    if not args.json:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    tmp = f"{args.json}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, args.json)
    except OSError as exc:
        sys.stdout.buffer.write(data)  # the results are not lost: they go to stdout instead
        sys.stdout.flush()
        raise UserError(
            f"--json {args.json!r}: cannot write the summary ({exc.strerror or exc}); it went to stdout"
        ) from None


# ----------------------------------------------------------------------------- the live line


def _elo(x: float) -> str:
    return f"{x:+.1f}" if math.isfinite(x) else "+inf" if x > 0 else "-inf"


def live_text(duel: Duel) -> str:
    """The live line: games, pair counts, A's game W-D-L, Elo with its 95%
    interval, the LLR with its bounds, and the faults of A and B."""
    spec = duel.spec
    st = duel.state.stats()
    elo, lo, hi, _ = duel.state.elo()
    c = st.counts
    parts = [
        f"{spec.rules.name} {spec.players}p",
        f"games {duel.games}/{2 * spec.max_pairs}",
        f"pairs {st.units} [LL {c[0]} LD {c[1]} DD+WL {c[2]} WD {c[3]} WW {c[4]}]"
        + (f" {duel.state.dropped} dropped" if duel.state.dropped else ""),
        f"W-D-L {duel.wins}-{duel.draws}-{duel.losses}",
        f"Elo {_elo(elo)} [{_elo(lo)}, {_elo(hi)}]" if st.units else "Elo -",
    ]
    if st.llr is not None and st.lower is not None and st.upper is not None:
        parts.append(f"LLR {st.llr:.2f} ({st.lower:.2f}, {st.upper:.2f})")
    fa, fb = duel.tallies[0].fault_count, duel.tallies[1].fault_count
    parts.append(f"faults A {fa} B {fb}")
    return "  ".join(parts)


class _Display:
    """The live line on stderr: a rich live line on a terminal, else a plain
    line every ``every`` seconds; nothing when ``quiet``."""

    def __init__(self, spec: DuelSpec, *, quiet: bool, every: float) -> None:
        from rich.console import Console

        self.spec = spec
        self.quiet = quiet
        self.every = every
        self.console = Console(stderr=True, highlight=False, soft_wrap=True)
        self.live: Any = None
        self.last = 0.0

    def start(self) -> None:
        if self.quiet:
            return
        spec = self.spec
        test = spec.test
        what = (
            f"SPRT H0 {test.elo0:g} vs H1 {test.elo1:g} {test.model} Elo, alpha {test.alpha:g}, beta {test.beta:g}"
            if test
            else "no SPRT (fixed length)"
        )
        field = ", ".join(b.name for b in spec.field)
        self.console.print(
            f"duel: A {spec.a.name} vs B {spec.b.name}"
            + (f", field {field}" if field else "")
            + f"; {spec.rules.name} at {spec.players} seats, seed {spec.seed}, up to "
            f"{2 * spec.max_pairs} games; {what}",
            markup=False,
        )
        self.last = time.monotonic()
        if self.console.is_terminal:
            from rich.console import Console
            from rich.live import Live

            # no soft wrap: the live line wraps at the terminal's width; transient: final() prints the last one
            self.live = Live(console=Console(stderr=True, highlight=False), auto_refresh=False, transient=True)
            self.live.start()

    def __call__(self, duel: Duel) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if self.live is not None:
            if now - self.last >= 0.1:
                self.last = now
                from rich.text import Text

                self.live.update(Text(live_text(duel)), refresh=True)
        elif now - self.last >= self.every:
            self.last = now
            self.console.print(live_text(duel), markup=False)

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def final(self, duel: Duel, summary: DuelSummary) -> None:
        if self.quiet:
            return
        self.console.print(live_text(duel), markup=False)
        st = summary.stats
        games = f"{summary.pairs} deal pairs ({summary.games} games)"
        if summary.result in ("H1", "H0") and st.elo0 is not None and st.elo1 is not None:
            at = f"after {st.decided_at} pairs" if st.decided_at is not None else ""
            a, b = self.spec.a.name, self.spec.b.name
            if summary.result == "H1":
                text = (
                    f"H1 accepted {at}: the games favour A ({a}) being {st.elo1:g} Elo stronger than B ({b}) "
                    f"over {st.elo0:g} Elo (LLR {st.llr:.2f} >= {st.upper:.2f})"
                )
            else:
                text = (
                    f"H0 accepted {at}: the games favour A ({a}) being {st.elo0:g} Elo stronger than B ({b}) "
                    f"over {st.elo1:g} Elo (LLR {st.llr:.2f} <= {st.lower:.2f})"
                )
        elif summary.result == "undecided":
            text = f"undecided after {games}: the test accepted neither H0 nor H1 (raise --games to go on)"
        elif summary.result == "complete":
            text = f"complete: {games}"
        else:
            text = f"{summary.result} after {games}"
        self.console.print(text, markup=False)
        for t in summary.bots:
            if t.faults:
                kinds = ", ".join(f"{k} {v}" for k, v in sorted(t.faults.items()))
                self.console.print(
                    f"faults: {t.role} {t.name}: {kinds} ({t.forfeits} of {t.games} games played on by the fallback)",
                    markup=False,
                )
