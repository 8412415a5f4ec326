"""A league's output directory: created, locked, and checked against the run.

:func:`open_night` is the door (:func:`open_ledger` the same for a caller
that needs only the ledger): it creates ``OUT/games/``, opens
``OUT/ledger.sqlite`` holding the directory's run lock, refuses a directory
this run must not play into (another run holds it, it was written by
``referee merge``, it holds another shard, games of a different config, or
games whose ids an older referee numbered otherwise), accepts a config that
only adds or removes bots (:mod:`referee.league.roster`: the league it
returns has the night's roster), and stages the meta entries the run writes
once its bots have passed the start check
(:meth:`referee.league.ledger.Ledger.commit_staged`): the config (for a new or
empty ledger, or one whose bots changed), the withdrawn bots, the league's
current name and the shard.

Errors: every refusal is a :class:`referee.errors.UserError` saying what to do
instead; the ledger is closed (and the lock released) before it is raised.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.errors import UserError
from referee.fileio import write_atomic as write_atomic  # its old home: the name still works here
from referee.league.config import League, normalize_stored
from referee.league.ledger import LEDGER_NAME, Ledger, MergedMeta, config_text
from referee.league.roster import EPOCHS_META, WITHDRAWN_META, Growth, check_return, reconcile, stored_withdrawn
from referee.league.shards import format_shards

#: the ledger meta key saying how game ids number tables (:data:`referee.league.schedule.IDS`)
IDS_META = "ids"
#: the folder in OUT where cluster workers that can write into it leave their logs for the
#: coordinator (:meth:`referee.league.cluster.Cluster.executor`); what a killed run left there
#: is removed by the next run, local or not
INCOMING = ".incoming"


def clear_incoming(out: Path | str) -> None:
    """Remove ``OUT/.incoming`` and whatever a killed cluster run left in it (the
    caller holds the night's lock, so no run of this night is using it)."""
    shutil.rmtree(os.path.join(out, INCOMING), ignore_errors=True)


def new_out_dir(out: Path) -> Path:
    """The first of ``OUT-2``, ``OUT-3``, ... that does not exist yet."""
    i = 2
    while True:
        cand = out.with_name(f"{out.name}-{i}")
        if not cand.exists():
            return cand
        i += 1


def with_new_out(league: League) -> League:
    """``league`` moved to a fresh output directory next to its own
    (:func:`new_out_dir`) if its own already holds a ledger; else unchanged."""
    if not (league.out / LEDGER_NAME).exists():
        return league
    return dataclasses.replace(league, out=new_out_dir(league.out))


def make_out_dir(out: Path) -> None:
    """Create ``out/games/``, both folders mode 0700 (the ledger may hold a
    secret seed, the logs the deals: only the referee's user may read them, see
    docs/SECURITY.md). Raises :class:`UserError` naming a file in the way, or
    why the folder cannot be created."""
    try:
        (out / "games").mkdir(parents=True, exist_ok=True)
        private(out, out / "games")
    except OSError as exc:
        blocker = next((p for p in (out, out / "games") if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            raise UserError(
                f"{blocker} is a file, but the league needs a folder there for its results; "
                "move the file away or choose another output directory with --out DIR"
            ) from None
        raise UserError(f"{out}: cannot create the output directory: {exc.strerror or exc}") from None


def private(*folders: Path) -> None:
    """Make folders of the league's output mode 0700 (those of another user are left as they are)."""
    for folder in folders:
        try:
            if folder.stat().st_uid == os.getuid():
                folder.chmod(0o700)
        except OSError:
            pass


def open_ledger(league: League) -> Ledger:
    """:func:`open_night`'s ledger (for a caller that plays the config as it is)."""
    return open_night(league)[1]


def open_night(league: League) -> tuple[League, Ledger, Growth | None]:
    """Create the output directory and open its ledger, holding the run lock;
    refuse a directory this run must not play into (see the module docstring).
    Returns the league to play (with the night's roster), the ledger, and what
    changed in the bots (None for a new or empty ledger).

    A ledger without any finished game takes the new config (so fixing a failed
    build or a bot that never started is just a matter of running again); one
    holding games of a different config is refused with every key that differs.
    The ledger's meta ``shard`` records ``league.shard`` (``"K/N"``; absent for
    the whole league): a ledger holding games of another shard (or of the whole
    league) is refused, naming the shard it holds.
    """
    from referee.league.schedule import IDS

    out = league.out
    make_out_dir(out)
    ledger = Ledger.in_dir(out, lock=True)
    growth: Growth | None = None
    try:
        stored = normalize_stored(ledger.config())
        empty = ledger.count() == 0
        _check(ledger, league, stored, empty)
        if stored is not None and not empty:
            withdrawn = stored_withdrawn(ledger.get_meta(WITHDRAWN_META))
            growth = reconcile(league, stored, withdrawn, out, ledger.get_meta(EPOCHS_META))
            league = growth.league
            if growth.back:
                check_return(league, growth, ledger.done_ids())
    except BaseException:
        ledger.close()
        raise
    shard = str(league.shard) if league.shard is not None else None
    staged: dict[str, str | None] = {"league": league.name, "shard": shard}  # the current name titles the standings
    if stored is None or (empty and stored != league.canonical()):
        # a new ledger, or one where nothing was recorded yet (a build or a bot failed before
        # the first game finished): nothing to protect, so the config simply replaces the stored
        # one - committed once the builds and the bots' start check have passed, so that a failed
        # start leaves nothing recorded
        staged["config"] = config_text(league.canonical())
        staged[WITHDRAWN_META] = None
        staged[EPOCHS_META] = None
    if empty:
        staged[IDS_META] = IDS
    if growth is not None:
        staged.update(growth.meta)
    ledger.stage_meta(staged)
    return league, ledger, growth


def _check(ledger: Ledger, league: League, stored: dict[str, Any] | None, empty: bool) -> None:
    """Refuse a merged directory, another shard's games or a changed config
    (``stored``: the ledger's config in today's canonical form; ``empty``: no
    game recorded yet). Raises :class:`UserError`."""
    out = league.out
    merged = ledger.get_meta("merged")
    if merged is not None:
        meta = MergedMeta.parse(merged)
        held = f"shards {format_shards(meta.shards, meta.of)}" if meta else "shards of a split league"
        raise UserError(
            f"{out}: this output directory holds shards merged by `referee merge` ({held}); "
            "it is not played into. Play a missing shard into its own directory "
            "(referee run CONFIG --shard K/N --out DIR) and merge that in, or use another --out DIR."
        )
    if empty:
        return
    shard = str(league.shard) if league.shard is not None else None
    held_shard = ledger.get_meta("shard")
    if held_shard != shard:
        whole = "the whole league (no --shard)"
        holds = f"shard {held_shard} of the league (--shard {held_shard})" if held_shard else whole
        wants = f"--shard {shard}" if shard else whole
        again = f"--shard {held_shard}" if held_shard else "no --shard"
        raise UserError(
            f"{out}: this output directory holds {holds}, but this run asks for {wants}. "
            f"Resume it with {again}, or play into another directory with --out DIR (or --new-out)."
        )
    from referee.league.schedule import IDS

    ids = ledger.get_meta(IDS_META)
    if ids != IDS:
        raise UserError(
            f"{out}: this output directory holds games of a night started by an older referee, whose game ids "
            "number the tables in another order, so it cannot be resumed with this one: finish it with the "
            "referee that started it, or start afresh with --new-out (a new directory next to it) or --out DIR. "
            "Its standings and report stay readable (referee standings OUT)."
        )


#: what writes a night's outputs from its ledger (standings files, report, viewer pages) and returns
#: the standings: :func:`referee.view.night.write_outputs` (``out, ledger, name, *, viewer_limit,
#: result, keep_withdrawn``), handed in by the commands: the league never imports the view
WriteOutputs = Callable[..., dict[str, Any]]
