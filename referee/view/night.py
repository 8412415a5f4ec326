"""Writing a night's outputs: the standings files, ``OUT/report.html``, the game browser's data
files and the viewer pages (:func:`write_outputs`, :func:`write_report`).

The league's own code never imports this module (the view sits above the league, see
docs/ARCHITECTURE.md, Layers): the commands call it, and hand :func:`write_outputs` to the league
code that rewrites a night's outputs (``referee ladder``, ``referee merge``).

:func:`write_report` reads the ledger once, writes the viewer pages next to the logs
(:mod:`referee.view.viewers`: ``OUT/games/viewer.html`` and ``GAME.frames.js``, only those missing or
older than their log), then ``OUT/report-data/games-K.js`` per variant and ``OUT/report.html``
(:mod:`referee.view.report`). ``referee run`` writes the viewer pages of a night of up to
:data:`RUN_VIEWER_LIMIT` games missing one (more would make the end of a big night slow); ``referee
report OUT`` writes all of them. Every file is written via a temporary file and a rename.

Errors: a folder that cannot be written is a :class:`referee.errors.UserError`; a log that cannot be
replayed simply has no viewer page (the report says how many).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.errors import UserError
from referee.fileio import write_atomic
from referee.league.ledger import GameRow, Ledger

#: the most viewer pages ``referee run`` writes at its end (``referee report`` writes them all)
RUN_VIEWER_LIMIT = 5000


@dataclass
class ReportResult:
    path: Path
    viewers_written: int
    viewers_fresh: int
    viewers_skipped: int
    viewers_failed: int
    viewer_seconds: float
    first_error: str | None = None
    notes: list[str] = field(default_factory=list)  # the night's notes (incomplete, aborted...)

    def text(self) -> str:
        """One line about what was written."""
        parts = [f"wrote {self.path}"]
        v = f"viewer pages: {self.viewers_written} written, {self.viewers_fresh} up to date"
        if self.viewers_written:
            v += f" ({self.viewer_seconds:.1f} s)"
        if self.viewers_skipped:
            v += (
                f", {self.viewers_skipped} not written (referee report {self.path.parent} writes them; "
                f"referee serve {self.path.parent} shows any game)"
            )
        if self.viewers_failed:
            v += f", {self.viewers_failed} logs could not be shown ({self.first_error})"
        return f"{parts[0]}; {v}"


def _frames_present(games: Path) -> set[str]:
    try:
        with os.scandir(games) as it:
            return {e.name[: -len(".frames.js")] for e in it if e.name.endswith(".frames.js")}
    except OSError:
        return set()


def write_report(
    out_dir: Path,
    st: dict[str, Any],
    ledger: Ledger | None = None,
    *,
    viewer_limit: int | None = None,
    viewers: bool = True,
    jobs: int | None = None,
    rows: list[GameRow] | None = None,
) -> ReportResult:
    """Write the report of the night in ``out_dir`` (see the module docstring) from its standings
    ``st``; ``ledger``: the open ledger (else it is opened read-only here). ``viewer_limit``: write
    at most that many viewer pages (None: all); ``viewers=False``: none. ``rows``: the ledger's
    rows in game-id order, when the caller has read them already."""
    from referee.league.standings import write_files
    from referee.league.summary import notes as night_notes
    from referee.league.summary import summarize
    from referee.view.plots import think_samples
    from referee.view.report import fair_shares, game_rows, games_js, games_src, render_report
    from referee.view.viewers import ViewerStats, write_viewers

    out = Path(out_dir)
    own = ledger is None
    led = Ledger.in_dir(out, create=False) if ledger is None else ledger
    try:
        if rows is None:
            rows = list(led.rows())
        summary = summarize(out, led, rows)
    finally:
        if own:
            led.close()
    notes = night_notes(summary)
    from referee.league.standings import withdrawn_text

    gone = withdrawn_text(st)
    try:
        write_files(out, st, notes)
        vstats = (
            write_viewers(out, ((r.game_id, r.log_path) for r in rows), limit=viewer_limit, jobs=jobs)
            if viewers
            else ViewerStats()
        )
        have = _frames_present(out / "games")
        per_variant = game_rows(rows, have)
        data_dir = out / "report-data"
        data_dir.mkdir(exist_ok=True)
        names = list(per_variant)
        for k, v in enumerate(names):
            write_atomic(out / games_src(k), games_js(k, per_variant[v]))
        with_viewer = sum(1 for r in rows if r.game_id in have)
        note = (
            f"{with_viewer} of {len(rows)} games have a viewer page (click a game to watch it step by step)."
            if with_viewer == len(rows) or not rows
            else f"{with_viewer} of {len(rows)} games have a viewer page; `referee report {out}` writes the rest, "
            f"and `referee serve {out}` shows any game from its log."
        )
        text = render_report(
            st,
            summary,
            notes=notes + ([gone] if gone else []),
            think=think_samples(rows),
            fair=fair_shares(rows),
            variants=[(v, len(per_variant[v]["games"])) for v in names],
            viewers=have,
            viewer_note=note,
            written=time.time(),
        )
        path = out / "report.html"
        write_atomic(path, text)
    except OSError as exc:
        raise UserError(f"{out}: cannot write the report: {exc.strerror or exc}") from None
    return ReportResult(
        path, vstats.written, vstats.fresh, vstats.skipped, vstats.failed, vstats.seconds, vstats.first_error, notes
    )


def write_outputs(
    out: Path,
    ledger: Ledger,
    name: str,
    *,
    viewer_limit: int | None = None,
    result: list[Any] | None = None,
    keep_withdrawn: bool = False,
) -> dict[str, Any]:
    """Recompute the standings from the ledger (game-id order), write standings.json/.csv/.md,
    report.html with its game browser data, and the viewer pages (at most ``viewer_limit`` new
    ones; see :func:`write_report`) into ``out``; return the standings. ``result``, when
    given, receives the :class:`ReportResult`. ``keep_withdrawn``: count the
    games of withdrawn bots (:func:`referee.league.standings.from_ledger`)."""
    from referee.league.standings import from_ledger

    rows = list(ledger.rows())  # read once, for the standings and the report
    st = from_ledger(ledger, name, keep_withdrawn=keep_withdrawn, rows=rows)
    res = write_report(out, st, ledger, viewer_limit=viewer_limit, rows=rows)
    if result is not None:
        result.append(res)
    return st
