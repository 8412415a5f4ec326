"""League commands: ``run``, ``plan``, ``standings``, ``report``.

* ``referee run CONFIG [--out DIR] [--new-out] [--concurrency N] [--quiet]``:
  play the league (only the games missing from OUT/ledger.sqlite), then write
  the standings (json, csv, md) and report.html into OUT and print the standings.
  ``--shard K/N`` plays only shard K of N (whole tables, see referee.league.shards).
  ``--cluster tls://HOST:PORT --tls-ca-file/--tls-cert/--tls-key`` (or ``--insecure``) plays on a
  Dask cluster, ``--workers N`` on a local one of N worker processes, over TLS (referee.league.cluster).
  ``--rebuild`` runs every bot's build even where it is cached (referee.league.buildcache).
* ``referee plan CONFIG [--shard K/N] [--no-coverage]``: tables and games per variant and size, and the
  total; for a balanced or gauntlet schedule also its coverage figures (seats per bot, pair meetings,
  lineup positions).
* ``referee ladder CONFIG [--tables N] [--interval S] [--rebuild]``: play table after table (close ratings,
  uncertain ones first) until Ctrl-C; see referee.league.ladder.
* ``referee merge OUT1 OUT2 ... --into DIR``: combine shard output directories into one league
  (ledger, game logs, standings, report); see referee.league.merge.
* ``referee standings OUT``: recompute the standings from the ledger alone, write and print them.
* ``referee report OUT``: recompute the standings and write OUT/report.html.
* ``referee verify OUT``: replay every game log of the night and check it against its ledger row
  (see referee.league.audit); exit 0 when all is well, 1 when something is wrong.

``run``, ``standings`` and ``report`` warn (one line) about game logs the ledger names that are missing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from referee.errors import UserError

if TYPE_CHECKING:
    from rich.table import Table

    from referee.league.cluster import Cluster
    from referee.league.config import League
    from referee.league.ledger import Ledger
    from referee.league.merge import MergeResult
    from referee.league.runner import ProgressHook, RunStats
    from referee.league.schedule import PlanRow
    from referee.league.standings import Tally
    from referee.view.night import ReportResult


KEEP_HELP_TEXT = (
    "count the games of withdrawn bots (bots removed from the config of a night already "
    "played) in the standings; by default every game one of them sat in is left out"
)

REBUILD_HELP_TEXT = (
    "run every bot's build command, even one whose folder and build command are those of its last "
    "successful build of this night (by default that build is not run again)"
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    _register_run(sub)
    _register_ladder(sub)
    _register_plan(sub)
    _register_merge(sub)
    _register_standings(sub)
    _register_report(sub)
    _register_verify(sub)


def _register_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "run",
        help="run a league night from a TOML config (resumes an interrupted one)",
        description=(
            "Play every game of the league that OUT/ledger.sqlite does not hold yet, then write "
            "standings.json/.csv/.md and report.html into OUT. Running the same config again resumes; "
            "bots added to the config play only their new games, bots removed are withdrawn; any other change is "
            "refused unless --new-out or another --out is given."
        ),
    )
    p.add_argument("config", help="league config (TOML)")
    p.add_argument(
        "--out", metavar="DIR", help="output directory (default: the config's `out`, relative to the config file)"
    )
    p.add_argument(
        "--new-out",
        "--force-new",
        dest="new_out",
        action="store_true",
        help="if the output directory already holds a league, use a fresh one next to it (OUT-2, OUT-3, ...)",
    )
    p.add_argument(
        "--concurrency", "-j", type=int, metavar="N", help="tables played at once (default: config, else CPU cores)"
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    p.add_argument(
        "--progress-every",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="plain-output progress interval when stdout is not a terminal (default 2)",
    )
    p.add_argument(
        "--shard",
        metavar="K/N",
        help="play only shard K of N (whole tables: global table number mod N = K-1); run every "
        "shard with the same config, then combine the output directories with `referee merge`",
    )
    p.add_argument(
        "--seed-file",
        metavar="FILE",
        help='for a secret night (seed = "secret"): read the master seed from FILE instead of drawing '
        "one; needed with --shard (every shard the same FILE)",
    )
    _cluster_arguments(p)
    p.add_argument("--keep-withdrawn", action="store_true", help=KEEP_HELP_TEXT)
    p.add_argument("--rebuild", action="store_true", help=REBUILD_HELP_TEXT)
    p.set_defaults(func=cmd_run)


def _cluster_arguments(p: argparse.ArgumentParser) -> None:
    """``run``'s options for playing on a Dask cluster."""
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="play on the workers of a running Dask cluster (its scheduler's tls://HOST:PORT, with "
        "--tls-ca-file/--tls-cert/--tls-key; tcp:// only with --insecure); needs the `cluster` extra "
        "(docs/CLUSTER.md)",
    )
    where.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="start a local Dask cluster of N worker processes on this machine and play on it",
    )
    p.add_argument(
        "--cluster-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --cluster: how long to try to reach the scheduler and wait for a first worker (default 10)",
    )
    p.add_argument(
        "--send-logs",
        action="store_true",
        help="with --cluster/--workers: every worker sends its games' logs to this process, even one that "
        "could write them into the output folder itself (a shared file system; the default there)",
    )
    p.add_argument(
        "--tls-ca-file",
        metavar="FILE",
        help="with --cluster: the CA certificate that signed the scheduler's and workers' certificates "
        "(docs/CLUSTER.md#security; or dask's distributed.comm.tls configuration)",
    )
    p.add_argument("--tls-cert", metavar="FILE", help="with --cluster: this client's certificate (signed by that CA)")
    p.add_argument("--tls-key", metavar="FILE", help="with --cluster: this client's private key (if not in --tls-cert)")
    p.add_argument(
        "--insecure",
        action="store_true",
        help="with --cluster: play on a scheduler without TLS; anyone who reaches it (a bot with network "
        "access included) can run code in this process and on the workers",
    )
    p.add_argument(
        "--dashboard",
        action="store_true",
        help="with --workers: start Dask's dashboard (on a free port of 127.0.0.1; read by any local process)",
    )


def _register_ladder(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "ladder",
        help="keep a league going table by table, matching bots of close ratings, until stopped",
        description=(
            "Play one table at a time until Ctrl-C (or --tables N): each time the bot with the fewest games "
            "(then the most uncertain rating) and the bots rated closest to it, every deal in every seat "
            "rotation. Every game is committed to OUT/ledger.sqlite as it ends; standings and report.html are "
            "rewritten after each table. The config is read again between tables: bots added to it join, bots "
            "removed are withdrawn, any other change is refused with a warning. Running again resumes."
        ),
    )
    p.add_argument("config", help="league config (TOML)")
    p.add_argument(
        "--out", metavar="DIR", help="output directory (default: the config's `out`, relative to the config file)"
    )
    p.add_argument("--tables", type=int, metavar="N", help="stop after N tables (default: run until Ctrl-C)")
    p.add_argument("--interval", type=float, default=0.0, metavar="SECONDS", help="pause between tables (default 0)")
    p.add_argument(
        "--concurrency",
        "-j",
        type=int,
        metavar="N",
        help="processes playing a table's games at once (default: config, else CPU cores)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no line per table")
    p.add_argument("--keep-withdrawn", action="store_true", help=KEEP_HELP_TEXT)
    p.add_argument("--rebuild", action="store_true", help=REBUILD_HELP_TEXT)
    p.set_defaults(func=cmd_ladder)


def _register_plan(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "plan",
        help="show the number of tables and games of a league without playing",
        description="Print tables and games per variant and table size, and the total, without playing.",
    )
    p.add_argument("config", help="league config (TOML)")
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.add_argument("--shard", metavar="K/N", help="count only shard K of N (what `referee run --shard K/N` plays)")
    p.add_argument(
        "--no-coverage",
        dest="coverage",
        action="store_false",
        help="balanced and gauntlet schedules: skip the coverage figures (seats, pair meetings, "
        "positions), which are measured over every bot",
    )
    p.set_defaults(func=cmd_plan)


def _register_merge(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "merge",
        help="combine the output directories of a league split with --shard K/N into one",
        description=(
            "Combine the output directories of `referee run CONFIG --shard K/N` (from several machines) into "
            "DIR: every game's log is copied into DIR/games/, the ledgers are merged into DIR/ledger.sqlite, and "
            "standings.json/.csv/.md and report.html are written as `referee standings`/`referee report` would. "
            "Inputs of different configs or splits, overlapping inputs and a DIR holding another league are "
            "refused. Missing shards are reported; what is there is still merged. Merging again is harmless, "
            "and the missing shards can be merged in later."
        ),
    )
    p.add_argument("inputs", nargs="+", metavar="OUT", help="a shard's output directory (or an earlier merge)")
    p.add_argument("--into", required=True, metavar="DIR", help="the merged league's directory (created if needed)")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the summary lines, not the standings")
    p.set_defaults(func=cmd_merge)


def _register_standings(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "standings",
        help="recompute and print the standings from a league's ledger",
        description="Recompute the standings from OUT/ledger.sqlite alone (game-id order), "
        "write standings.json/.csv/.md into OUT and print them.",
    )
    p.add_argument("out", help="the league's output directory")
    p.add_argument("--json", action="store_true", help="print the standings as JSON instead of tables")
    p.add_argument("--keep-withdrawn", action="store_true", help=KEEP_HELP_TEXT)
    p.set_defaults(func=cmd_standings)


def _register_report(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "report",
        help="write the HTML report of a league (OUT/report.html) and its viewer pages",
        description="Recompute the standings from OUT/ledger.sqlite and write OUT/report.html (with "
        "the game browser's data in OUT/report-data/), the standings files, and a viewer "
        "page for every game next to its log (OUT/games/viewer.html?game=GAME; only those "
        "missing or older than their log are written).",
    )
    p.add_argument("out", help="the league's output directory")
    p.add_argument("--no-viewers", action="store_true", help="do not write viewer pages (the report only)")
    p.add_argument("--jobs", "-j", type=int, metavar="N", help="processes that write viewer pages (default: CPU cores)")
    p.add_argument("--keep-withdrawn", action="store_true", help=KEEP_HELP_TEXT)
    p.set_defaults(func=cmd_report)


def _register_verify(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "verify",
        help="replay every game log of a league night and check it against its ledger row",
        description=(
            "Audit OUT: every ledger row must be a game of the stored config's schedule (ids, seats, seeds), "
            "every game's log must replay (referee replay) and agree with its row (scores, ranks, win shares, "
            "forfeits, reason, faults, think times, game, seed, bots); rows without a log and logs without a "
            "row are listed. Exit 0 when everything checks, 1 when something is wrong, 2 when OUT cannot be "
            "audited (no ledger, a damaged ledger)."
        ),
    )
    p.add_argument("out", help="the league's output directory")
    p.add_argument("--jobs", "-j", type=int, metavar="N", help="replays at once (default: CPU cores)")
    p.add_argument(
        "--most", type=int, default=50, metavar="N", help="print at most N problems of each kind (default 50; 0: all)"
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_verify)


# --------------------------------------------------------------------------
# shared


def _load(config: str, shard: str | None, out: str | None = None) -> League:
    """The league of ``config`` (``out`` overriding its output directory), for
    shard ``shard`` (``"K/N"``) if given. Raises :class:`UserError`."""
    from dataclasses import replace

    from referee.league.config import load_config
    from referee.league.schedule import check_shard
    from referee.league.shards import parse_shard

    league = load_config(config, out=out)
    if shard is None:
        return league
    league = replace(league, shard=parse_shard(shard))
    check_shard(league, league.shard)
    return league


def _print_standings(st: dict[str, Any], notes: list[str] | None = None) -> None:
    """The standings tables, then the legend and the night's notes (incomplete, aborted...)."""
    from rich.console import Console

    from referee.league.standings import legend_lines, rich_tables, seed_text, withdrawn_text

    console = Console(width=max(120, Console().width), highlight=False)
    for t in rich_tables(st):
        console.print(t)
    seed = seed_text(st)
    if seed:
        print(seed)
    gone = withdrawn_text(st)
    if gone:
        console.print(gone, markup=False, highlight=False)
    console.print("\n".join(legend_lines()), style="dim", markup=False)
    for note in notes or []:
        style = "bold yellow" if note.startswith("INCOMPLETE") else "yellow" if "aborted" in note else None
        console.print(note, style=style, markup=False)


def _notes(ledger: Ledger, out: str | Path) -> list[str]:
    """The night's notes (:func:`referee.league.summary.notes`)."""
    from referee.league.summary import notes, summarize

    return notes(summarize(Path(out), ledger))


def _open_existing(out: str) -> Ledger:
    from referee.league.ledger import Ledger

    p = Path(out)
    if not p.is_dir():
        raise UserError(f"{out}: no such directory; give the output directory of a league run")
    return Ledger.in_dir(p, create=False)


# --------------------------------------------------------------------------
# plan


def cmd_plan(args: argparse.Namespace) -> int:
    from referee.league.night import with_seed_of_out
    from referee.league.roster import night_of
    from referee.league.schedule import balance_warnings, coverages, plan, undrawn_epochs

    league = with_seed_of_out(night_of(_load(args.config, args.shard)))
    rows = plan(league, league.shard)
    for warning in balance_warnings(league):
        print(f"warning: {warning}", file=sys.stderr)
    # a secret night's tables are drawn from its seed: before the night has begun there is no seed (and
    # none is shown after), so the plan then has its counts but no coverage figures
    undrawn = league.seed is None and any(r.drawn for r in rows)
    covs = coverages(league) if getattr(args, "coverage", True) and not undrawn else []
    if args.json:
        data = _plan_json(league, rows)
        if undrawn:
            data["coverage_note"] = _UNDRAWN
        elif undrawn_epochs(league):
            data["coverage_note"] = _undrawn_topups(undrawn_epochs(league))
        if covs:
            data["coverage"] = [
                {
                    "variant": c.variant,
                    "size": c.size,
                    **({"epoch": c.epoch, "first_table": c.first, "added": list(c.added)} if c.topup else {}),
                    **_coverage_json(c.coverage),
                }
                for c in covs
            ]
        print(json.dumps(data, indent=2))
        return 0
    from rich.console import Console

    Console(width=max(100, Console().width)).print(_plan_table(league, rows))
    for c in covs:
        lines = c.coverage.lines()
        print(f"{c.title()}{' (the whole night)' if league.shard else ''}:")
        for line in lines:
            print(f"  {line}")
    if undrawn:
        print(_UNDRAWN)
    later = undrawn_epochs(league)
    if later:
        print(_undrawn_topups(later))
    shard = league.shard
    if shard is not None and shard.n > 1:
        print(
            f"shard {shard} plays every {_ordinal(shard.n)} table of the schedule, starting with the "
            f"{_ordinal(shard.k)} (whole tables)"
        )
    if league.strict:
        from referee.league.config import COMPETITION

        print("competition preset ([competition] strict = true) turns on:")
        for line in COMPETITION:
            print(f"  {line}")
    print(f"output directory: {league.out}")
    return 0


def _undrawn_topups(epochs: list[int]) -> str:
    """The note for a secret night's top-ups whose secret is not drawn yet (:mod:`referee.league.secret`)."""
    which = ", ".join(map(str, epochs))
    return (
        f"coverage of top-up {which}: its tables are drawn from a secret of its own, drawn when referee run adds "
        "its bots; referee plan shows who meets whom once it has"
    )


_UNDRAWN = (
    "coverage: the tables are drawn from the secret seed when the night starts (referee run); "
    "referee plan shows who meets whom once it has begun"
)


def _coverage_json(cov: Any) -> dict[str, Any]:
    from dataclasses import asdict

    data = asdict(cov)
    data["pair_histogram"] = {str(k): v for k, v in cov.pair_histogram.items()}
    return data


def _plan_json(league: League, rows: list[PlanRow]) -> dict[str, Any]:
    from referee.league.config import COMPETITION

    return {
        "league": league.name,
        "shard": str(league.shard) if league.shard else None,
        "rows": [
            {
                "variant": r.variant,
                "size": r.size,
                "tables": r.tables,
                "deals": r.deals,
                "rotations": r.rotations,
                "games": r.games,
                "schedule": r.schedule,
                **({"seats_per_bot": r.seats_per_bot} if r.drawn else {}),
            }
            for r in rows
        ],
        "tables": sum(r.tables for r in rows),
        "games": sum(r.games for r in rows),
        "competition": list(COMPETITION) if league.strict else None,
    }


def _plan_table(league: League, rows: list[PlanRow]) -> Table:
    from rich.table import Table

    shard = league.shard
    part = f", shard {shard}" if shard else ""
    seed = "secret" if league.secret else league.seed
    t = Table(title=f"{league.name}: {len(league.bots)} bots, seed {seed}{part}", title_justify="left")
    scheduled = any(r.drawn for r in rows)  # a schedule column only when it says something
    cols = (
        ("variant", "size", "schedule", "tables", "deals", "rotations", "games")
        if scheduled
        else ("variant", "size", "tables", "deals", "rotations", "games")
    )
    for col in cols:
        t.add_column(col, justify="left" if col in ("variant", "schedule") else "right")
    blank = ("",) if scheduled else ()
    per_variant: dict[str, list[int]] = {}
    for r in rows:
        t.add_row(
            r.variant,
            str(r.size),
            *((r.what,) if scheduled else ()),
            f"{r.tables:,}",
            str(r.deals),
            str(r.rotations),
            f"{r.games:,}",
        )
        acc = per_variant.setdefault(r.variant, [0, 0])
        acc[0] += r.tables
        acc[1] += r.games
    if len(rows) > 1:
        t.add_section()
        for v, (tables, games) in per_variant.items():
            t.add_row(f"{v} (all sizes)", "", *blank, f"{tables:,}", "", "", f"{games:,}")
    t.add_section()
    t.add_row(
        f"total (shard {shard})" if shard else "total",
        "",
        *blank,
        f"{sum(r.tables for r in rows):,}",
        "",
        "",
        f"{sum(r.games for r in rows):,}",
    )
    return t


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# --------------------------------------------------------------------------
# standings, report


def cmd_standings(args: argparse.Namespace) -> int:
    from referee.league.audit import missing_logs_warning
    from referee.league.standings import from_ledger, to_json, write_files

    with _open_existing(args.out) as ledger:
        st = from_ledger(ledger, keep_withdrawn=args.keep_withdrawn)
        note = _split_note(ledger, args.out)
        missing = missing_logs_warning(ledger, Path(args.out))
        notes = _notes(ledger, args.out)
    write_files(Path(args.out), st, notes)
    if args.json:
        sys.stdout.write(to_json(st))
    else:
        _print_standings(st, [n for n in notes if not n.startswith(("This folder holds shard", "An incomplete merge"))])
    if note:
        print(note, file=sys.stderr)
    if missing:
        print(missing, file=sys.stderr)
    return 0


def _split_note(ledger: Ledger, out: str) -> str | None:
    """A note for the standings of a split league: a shard's own, or an incomplete merge."""
    from referee.league.ledger import MergedMeta

    shard = ledger.get_meta("shard")
    if shard:
        return (
            f"note: {out} holds shard {shard} only: these are that shard's standings "
            "(combine the shards with referee merge OUT1 OUT2 ... --into DIR)"
        )
    text = ledger.get_meta("merged")
    merged = MergedMeta.parse(text) if text else None
    if merged is not None and not merged.complete:
        return (
            f"note: {out} is an incomplete merge (shards {', '.join(map(str, merged.shards))} of "
            f"{merged.of}; {merged.missing_games} planned games missing): these standings cover "
            "the games there"
        )
    return None


def cmd_report(args: argparse.Namespace) -> int:
    from referee.league.audit import missing_logs_warning
    from referee.league.standings import from_ledger
    from referee.view.night import write_report

    if args.jobs is not None and args.jobs < 1:
        raise UserError("--jobs must be at least 1")
    with _open_existing(args.out) as ledger:
        rows = list(ledger.rows())  # read once, for the standings and the report
        st = from_ledger(ledger, keep_withdrawn=args.keep_withdrawn, rows=rows)
        missing = missing_logs_warning(ledger, Path(args.out))
        res = write_report(Path(args.out), st, ledger, viewers=not args.no_viewers, jobs=args.jobs, rows=rows)
    print(res.text())
    if missing:
        print(missing, file=sys.stderr)
    return 0


# --------------------------------------------------------------------------
# run


def cmd_run(args: argparse.Namespace) -> int:
    from referee.league.audit import missing_logs, missing_logs_warning
    from referee.league.outdir import open_night, with_new_out
    from referee.league.runner import play
    from referee.league.secret import settle_seed
    from referee.view.night import RUN_VIEWER_LIMIT, write_outputs

    league = _load(args.config, args.shard, out=args.out)
    if args.concurrency is not None and args.concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    if args.workers is not None and args.workers < 1:
        raise UserError("--workers must be at least 1")
    if args.send_logs and args.cluster is None and args.workers is None:
        raise UserError("--send-logs is for a night on a cluster: give --cluster ADDRESS or --workers N with it")
    if args.cluster is None and args.workers is None:
        for flag, given in (
            ("--tls-ca-file", args.tls_ca_file),
            ("--tls-cert", args.tls_cert),
            ("--tls-key", args.tls_key),
            ("--insecure", args.insecure),
            ("--dashboard", args.dashboard),
        ):
            if given:
                raise UserError(f"{flag} is for a night on a cluster: give --cluster ADDRESS or --workers N with it")
    if args.new_out:
        fresh = with_new_out(league)
        if fresh is not league:
            league = fresh
            print(f"using a new output directory: {league.out}", file=sys.stderr)
    with _cluster(args) as cluster:  # the cluster first: nothing written if it fails
        league, ledger, growth = open_night(league)
        with ledger:
            if cluster is not None and not args.quiet:
                print(f"playing on {cluster.describe()}", file=sys.stderr)
            for line in growth.lines() if growth else []:
                print(line, file=sys.stderr)
            league = settle_seed(league, ledger, args.seed_file)
            before = missing_logs(ledger, league.out) if ledger.count() else []
            if before:
                print(missing_logs_warning(ledger, league.out), file=sys.stderr)
            try:
                with _progress(args.quiet, args.progress_every) as hook:
                    stats = play(
                        league, ledger, hook=hook, concurrency=args.concurrency, cluster=cluster, rebuild=args.rebuild
                    )
            except KeyboardInterrupt:
                print(
                    f"interrupted: {ledger.count()} games are safely recorded in {league.out}; run the same command "
                    f"again to resume (referee standings {league.out} shows the standings so far)",
                    file=sys.stderr,
                )
                return 130
            written: list[ReportResult] = []
            st = write_outputs(
                league.out,
                ledger,
                league.name,
                viewer_limit=RUN_VIEWER_LIMIT,
                result=written,
                keep_withdrawn=args.keep_withdrawn,
            )
            after = missing_logs(ledger, league.out)
            if after and after != before:
                print(missing_logs_warning(ledger, league.out), file=sys.stderr)
    if not args.quiet:
        _print_standings(st, written[0].notes)
        print(_run_summary(league, stats, st))
        if cluster is not None and stats.logs_in_place + stats.logs_sent:
            print(
                f"logs: {stats.logs_in_place} written into {league.out} by the workers, "
                f"{stats.logs_sent} sent to this machine"
            )
        print(written[0].text())
    return 0


@contextmanager
def _cluster(args: argparse.Namespace) -> Iterator[Cluster | None]:
    """The Dask cluster of ``--cluster`` or ``--workers`` (closed on the way out), or None."""
    if args.cluster is None and args.workers is None:
        yield None
        return
    from referee.league.cluster import CONNECT_TIMEOUT_S, Cluster, TlsFiles, cluster_security

    tls = TlsFiles(args.tls_ca_file, args.tls_cert, args.tls_key)
    if args.cluster is not None:
        timeout = args.cluster_timeout if args.cluster_timeout is not None else CONNECT_TIMEOUT_S
        if not timeout > 0:
            raise UserError("--cluster-timeout must be a positive number of seconds")
        if args.dashboard:
            raise UserError("--dashboard is for --workers N; a scheduler of --cluster has its own (or none)")
        say = lambda text: print(text, file=sys.stderr)  # noqa: E731
        address, security = cluster_security(args.cluster, tls, insecure=args.insecure, say=say)
        cluster = Cluster.connect(address, timeout, send_logs=args.send_logs, security=security)
    else:
        if tls.given() or args.insecure:
            raise UserError("--tls-*/--insecure are for --cluster ADDRESS; --workers N makes its own certificate")
        cluster = Cluster.start_local(args.workers, send_logs=args.send_logs, dashboard=args.dashboard)
        if cluster.dashboard:
            print(f"dashboard: {cluster.dashboard} (unauthenticated: any local process can read it)", file=sys.stderr)
    try:
        yield cluster
    finally:
        cluster.close()


def _counts_text(st: dict[str, Any]) -> str:
    """``"3 stalled, 2 aborted"`` over the whole ledger, with where to look when games were aborted."""
    aborted = st.get("aborted") or []
    text = f"{st.get('stalled', 0)} stalled, {len(aborted)} aborted"
    if aborted:
        text += " (no result; listed in standings.md)"
    return text


def _run_summary(league: League, stats: RunStats, st: dict[str, Any]) -> str:
    counts = _counts_text(st)
    if league.shard is None:
        return (
            f"{stats.played} games played now, {stats.done}/{stats.total} in the ledger: {counts}; "
            f"standings and report.html in {league.out}"
        )
    return (
        f"shard {league.shard}: {stats.played} games played now, {stats.done}/{stats.total} of this shard's "
        f"games in the ledger: {counts}; the standings above and in {league.out} are this shard's only "
        f"(combine the shards with: referee merge OUT1 OUT2 ... --into DIR)"
    )


@contextmanager
def _progress(quiet: bool, every: float) -> Iterator[ProgressHook | None]:
    """The progress display for a run: none (``quiet``), a live display on a
    terminal, else a plain line every ``every`` seconds."""
    if quiet:
        yield None
    elif sys.stdout.isatty():
        with _Live() as live:
            yield live
    else:
        yield _Plain(every)


def _start_text(stats: RunStats) -> str:
    left = stats.total - stats.done_before
    return (
        f"starting: {left} games to play, {stats.done_before} of {stats.total} already in the ledger, "
        f"{stats.concurrency} table{'s' if stats.concurrency != 1 else ''} at once"
    )


class _Plain:
    """One progress line every ``every`` seconds (and at the end) when stdout is not a terminal."""

    def __init__(self, every: float) -> None:
        self.every = every
        self.last = 0.0
        self.started = False

    def __call__(self, stats: RunStats, tally: Tally) -> None:
        now = time.monotonic()
        if not self.started:
            # the first call comes when play starts, before any game has finished
            self.started = True
            self.last = now  # the next line comes --progress-every seconds later
            print(_start_text(stats), flush=True)
            return
        if now - self.last < self.every and stats.done < stats.total:
            return
        self.last = now
        eta = f"{stats.eta_s:.0f}s" if stats.eta_s is not None else "?"
        top = ", ".join(f"{r['bot']} {r['win_share']:.3f}" for r in tally.top(3))
        print(
            f"[{stats.done}/{stats.total}] {stats.rate:.1f} games/s, eta {eta}, faults {stats.faults}, "
            f"aborted {tally.aborted_count}; top: {top}",
            flush=True,
        )


class _Live:
    """A rich live display: progress bar, rate, ETA, faults and the top of the standings."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.live import Live
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn
        from rich.text import Text

        self.console = Console()
        self.progress = Progress(
            TextColumn("[bold]games"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:.1f}/s"),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("faults {task.fields[faults]}"),
            console=self.console,
        )
        self.task: TaskID | None = None
        self.header = Text()
        self.live = Live(console=self.console, auto_refresh=False, transient=False)
        self.last = 0.0

    def __enter__(self) -> Self:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.stop()

    def __call__(self, stats: RunStats, tally: Tally) -> None:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        if self.task is None:
            self.task = self.progress.add_task(
                "games", total=stats.total, completed=stats.done_before, rate=0.0, faults=0
            )
            self.header = Text(_start_text(stats))
            self.last = 0.0  # show the display at once, before the first game ends
        self.progress.update(self.task, completed=stats.done, rate=stats.rate, faults=stats.faults)
        now = time.monotonic()
        if now - self.last < 0.1 and stats.done < stats.total:
            return
        self.last = now
        t = Table(title=f"live standings (win share), {tally.aborted_count} aborted", title_justify="left")
        for c in ("bot", "games", "win share", "faults"):
            t.add_column(c, justify="left" if c == "bot" else "right")
        for r in tally.top(5):
            t.add_row(r["bot"], str(r["games"]), f"{r['win_share']:.3f}", str(r["faults"]))
        self.live.update(Group(self.header, self.progress, t), refresh=True)


# --------------------------------------------------------------------------
# ladder


def cmd_ladder(args: argparse.Namespace) -> int:
    from referee.league.ladder import LadderTable, open_ladder, play_ladder
    from referee.view.night import write_outputs

    if args.tables is not None and args.tables < 1:
        raise UserError("--tables must be at least 1 (or left out to run until Ctrl-C)")
    if args.interval < 0:
        raise UserError("--interval must be 0 or more (seconds)")
    if args.concurrency is not None and args.concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    ladder = open_ladder(
        args.config,
        out=args.out,
        keep_withdrawn=args.keep_withdrawn,
        concurrency=args.concurrency,
        outputs=write_outputs,
    )
    ladder.rebuild = args.rebuild
    out = ladder.league.out

    def hook(lt: LadderTable) -> None:
        if args.quiet:
            return
        t = lt.table
        names = ", ".join(ladder.league.bots[i].name for i in t.lineup)
        again = " (finishing it)" if lt.resumed else ""
        print(f"table {t.key}{again}: {names}: {len(lt.games)} game{'s' * (len(lt.games) != 1)}", flush=True)

    def after(lt: LadderTable, st: dict[str, Any]) -> None:
        if args.quiet:
            return
        top = st["scopes"]["overall"]["bots"][:3]
        lead = ", ".join(f"{r['bot']} {r['ordinal']:.1f}" for r in top)
        print(f"  {st['games']} games in the ledger; top by ordinal: {lead}", flush=True)

    with ladder.ledger:
        try:
            play_ladder(ladder, tables=args.tables, interval=args.interval, hook=hook, after=after)
        except KeyboardInterrupt:
            ladder.write_outputs()
            print(
                f"interrupted: {ladder.tables_played} table(s), {ladder.games_played} games played now; every "
                f"finished game is recorded in {out}; run the same command again to go on",
                file=sys.stderr,
            )
            return 130
    print(
        f"{ladder.tables_played} table(s), {ladder.games_played} games played now; standings and report.html in {out}"
    )
    return 0


# --------------------------------------------------------------------------
# merge


def cmd_merge(args: argparse.Namespace) -> int:
    from functools import partial

    from referee.league.merge import merge
    from referee.league.shards import format_shards
    from referee.view.night import RUN_VIEWER_LIMIT, write_outputs

    res = merge([Path(p) for p in args.inputs], Path(args.into), partial(write_outputs, viewer_limit=RUN_VIEWER_LIMIT))
    for p in res.running:
        print(
            f"warning: {p}: a `referee run` is still playing into it; merged the games it held so far "
            "(merge it again when it has finished)",
            file=sys.stderr,
        )
    if not args.quiet:
        _print_standings(res.standings)
    print(
        f"merged {len(args.inputs)} director{'y' if len(args.inputs) == 1 else 'ies'} into {res.into}: "
        f"{res.added} games added, {res.already} already there; shards {format_shards(res.shards, res.n)}"
    )
    if res.complete:
        print(f"complete: all {res.planned} planned games; standings and report.html in {res.into}")
    else:
        print(_incomplete_text(res), file=sys.stderr)
    return 0


def _incomplete_text(res: MergeResult) -> str:
    parts = []
    if res.missing_shards:
        parts.append(
            "missing shard"
            + ("s " if len(res.missing_shards) > 1 else " ")
            + ", ".join(f"{k}/{res.n} ({g} games)" for k, g in sorted(res.missing_shards.items()))
        )
    for k, (have, want) in sorted(res.incomplete.items()):
        parts.append(f"shard {k}/{res.n} has {have} of its {want} games (resume it with --shard {k}/{res.n})")
    return (
        f"incomplete: {res.missing_games} of {res.planned} planned games are missing: "
        + "; ".join(parts)
        + f". The standings in {res.into} cover the {res.games} games there; merge the rest in later "
        "with the same command."
    )


# --------------------------------------------------------------------------
# verify


def cmd_verify(args: argparse.Namespace) -> int:
    from referee.league.audit import KINDS, verify

    if args.jobs is not None and args.jobs < 1:
        raise UserError("--jobs must be at least 1")
    report = verify(args.out, jobs=args.jobs)
    if args.json:
        print(json.dumps(_verify_json(report), indent=2))
        return 0 if report.ok else 1
    shown: dict[str, int] = {}
    for p in report.problems:
        shown[p.kind] = shown.get(p.kind, 0) + 1
        if args.most <= 0 or shown[p.kind] <= args.most:
            print(p.line())
    for kind, n in shown.items():
        if 0 < args.most < n:
            print(f"... and {n - args.most} more: {kind} (--most 0 shows all)")
    if report.in_flight:
        print(
            f"note: a run is playing into {args.out}: {len(report.in_flight)} log(s) of games in flight have no "
            "ledger row yet (verify again when the run has finished)",
            file=sys.stderr,
        )
    counts = report.counts()
    speed = f"{report.seconds:.1f} s, {report.rate:.0f} games/s"
    ladder = f", {report.ladder} ladder game{'s' * (report.ladder != 1)}" if report.ladder else ""
    planned = f"{report.held} of {report.planned} planned games in the ledger{ladder}"
    if report.ok:
        print(f"verified: all {report.verified} games replay and match their ledger rows; {planned} ({speed})")
        return 0
    found = ", ".join(f"{counts[k]} {k if counts[k] == 1 else _PLURAL.get(k, k + 's')}" for k in KINDS if counts[k])
    print(
        f"FAILED: {len(report.problems)} problem{'s' if len(report.problems) != 1 else ''} ({found}); "
        f"{report.verified} of {report.rows} games verified; {planned} ({speed})"
    )
    return 1


_PLURAL = {
    "row differs from its log": "rows differ from their logs",
    "row not in the schedule": "rows not in the schedule",
    "log without a row": "logs without a row",
}


def _verify_json(report: Any) -> dict[str, Any]:
    return {
        "out": str(report.out),
        "ok": report.ok,
        "rows": report.rows,
        "verified": report.verified,
        "planned": report.planned,
        "ladder": report.ladder,
        "counts": report.counts(),
        "problems": [{"kind": p.kind, "game": p.game, "text": p.text} for p in report.problems],
        "in_flight": report.in_flight,
        "seconds": round(report.seconds, 3),
        "games_per_s": round(report.rate, 1),
    }
