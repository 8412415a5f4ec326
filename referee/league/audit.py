"""``referee verify``: audit a league night's output directory.

:func:`verify` checks every game of ``OUT`` three ways:

* **the ledger row against the schedule**: the game is one of the planned
  games of the night the ledger holds (:class:`referee.league.night.NightPlan`:
  its stored config, the epochs and top-ups of a night that grew, the shards
  the directory holds), and its variant, table size, table, deal, rotation,
  seed and the bot in every seat are the schedule's (for a secret night the
  seed is read from the ledger, and never printed; a grown secret night's
  later epochs' games are checked against their epoch's secret,
  :mod:`referee.league.secret`). A ladder game
  (``referee ladder`` shares the folder) is checked against its ladder table
  as the ledger records it: the table's first game gives its variant, size
  and seating, and every game of the table must have that seating, a deal and
  rotation of the table, and the ladder's own deal seed;
* **the log against itself**: the log is replayed with the rules engine
  (:func:`referee.runtime.replay.replay`, the proof of ``referee replay``):
  every message, action, fault and the footer must be what the rules give;
* **the row against the log**: the log's header names the same game, seed and
  bots, and its footer holds the row's scores, ranks, win shares, forfeits,
  reason, detail, faults and think times;
* **the viewer page against the log**: a game's viewer page (``games/GAME.frames.js``, written
  as the game was played, :mod:`referee.view.live`) must be the frames the replay of its log
  gives (:func:`referee.view.frames.frames_from_records`, made in the same replay), so the
  viewer can never show what ``referee replay`` does not prove.

It also lists the rows whose log is missing, and the log files in
``OUT/games/`` that no row names (a game in flight while a run is playing
into ``OUT`` is one of those: reported as a note then, not a problem).
Replays run in worker processes (``jobs``, default one per core) when there
are enough logs to pay for starting them.

:func:`missing_logs` is the cheap check the other commands run (``run`` at
resume and at the end, ``standings``, ``report``): the logs the ledger names
that are not there; :func:`missing_logs_warning` words it in one line.

Errors: :class:`referee.errors.UserError` for an output directory that cannot
be audited at all (no ledger, a damaged ledger, no stored config, a secret
night without its seed); everything about single games is a :class:`Problem`
in the report.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from referee.errors import UserError
from referee.league import schedule as sched
from referee.league.config import League
from referee.league.ledger import GameRow, Ledger, run_lock_held
from referee.league.night import NightPlan, ladder_number
from referee.runtime.gamelog import LOG_SUFFIXES

#: the kinds of problem, in the order the summary names them
KINDS = (
    "missing log",
    "altered log",
    "row differs from its log",
    "row not in the schedule",
    "damaged row",
    "log without a row",
    "viewer differs from its log",
)
#: below this many logs the replays run in this process (starting workers costs more)
PARALLEL_FROM = 48


@dataclass(frozen=True)
class Problem:
    kind: str  # one of KINDS
    game: str  # the game id (for a log without a row: the file name)
    text: str  # what is wrong, in one sentence

    def line(self) -> str:
        return f"{self.kind}: {self.game}: {self.text}"


@dataclass
class AuditReport:
    """What :func:`verify` found."""

    out: Path
    rows: int = 0  # games in the ledger
    verified: int = 0  # rows whose log replays and matches them
    planned: int = 0  # games of the schedule the directory holds
    held: int = 0  # rows of planned games (by id)
    ladder: int = 0  # rows of ladder games (referee ladder) that match the ladder's records
    problems: list[Problem] = field(default_factory=list)
    in_flight: list[str] = field(default_factory=list)  # logs without a row while a run plays into OUT
    running: bool = False  # a run (or merge) holds the directory's lock
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(KINDS, 0)
        for p in self.problems:
            out[p.kind] += 1
        return out

    @property
    def rate(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


# --------------------------------------------------------------------------
# missing logs (the cheap check)


def log_file(out: Path, log_path: str) -> Path:
    """A row's log file (its recorded path is relative to ``out``)."""
    p = Path(log_path)
    return p if p.is_absolute() else out / p


def missing_logs(ledger: Ledger, out: Path) -> list[str]:
    """The game ids whose log the ledger names but that is not there."""
    out = Path(out)
    return [gid for gid, path in ledger.log_paths() if not log_file(out, path).is_file()]


def missing_logs_warning(ledger: Ledger, out: Path, most: int = 3) -> str | None:
    """One warning line about missing logs (None when every log is there)."""
    missing = missing_logs(ledger, out)
    if not missing:
        return None
    first = ", ".join(missing[:most]) + (", ..." if len(missing) > most else "")
    n = len(missing)
    return (
        f"warning: {n} game log{'s' if n != 1 else ''} named by the ledger {'are' if n != 1 else 'is'} missing "
        f"from {Path(out) / 'games'} ({first}); those games cannot be replayed or checked: restore the logs "
        f"from a copy (referee verify {out} checks every game)"
    )


# --------------------------------------------------------------------------
# the schedule the directory holds


def _unplanned(gid: str) -> str:
    if ladder_number(gid) is not None:
        return "no ladder table recorded in the ledger has this game (its variant, size or bots are not the night's)"
    return "no game of the stored config's schedule has this id"


def _schedule_diff(row: GameRow, g: sched.ScheduledGame, league: League) -> str | None:
    want = {
        "variant": g.variant.name,
        "size": g.size,
        "table": g.table,
        "deal": g.deal,
        "rotation": g.rotation,
        "seed": g.seed,
        "bots": [league.bots[i].name for i in g.seats],
    }
    have = {
        "variant": row.variant,
        "size": row.size,
        "table": row.table,
        "deal": row.deal,
        "rotation": row.rotation,
        "seed": row.seed,
        "bots": row.bots,
    }
    for key, w in want.items():
        if have[key] != w:
            if ladder_number(g.game_id) is not None:
                return f"its {key} is {have[key]!r} in the ledger, but {w!r} at the ladder table its first game records"
            return f"its {key} is {have[key]!r} in the ledger, but {w!r} in the schedule of the stored config"
    return None


# --------------------------------------------------------------------------
# replaying (in worker processes)


def _replay_one(path: str) -> dict[str, Any]:
    """Replay one log (with the observer that made the game's viewer page when it has one: the
    frames builder for a version 1 page, the event recorder for a version 2 page; the page is then
    compared with what the replay gives); the little the parent needs (runs in a worker)."""
    from referee.runtime.replay import load_log, replay_records
    from referee.view.events import EventRecorder, is_events
    from referee.view.frames import game_kind, new_builder

    page = _page_of(path)
    got: Any = None
    observer: Any = None
    viewer = None
    if page is not None:
        try:
            text = page.read_text(encoding="utf-8")
            got = json.loads(text[text.index("=") + 1 :].rstrip().removesuffix(";"))
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            viewer = f"its viewer page {page.name} cannot be read ({exc})"
    try:
        records = load_log(path)
        if got is not None:
            header = records[0][2]
            observer = EventRecorder(game_kind(header)) if is_events(got) else new_builder(header, strict=True)
        report = replay_records(records, path, observer=observer)
    except UserError as exc:
        return {"error": str(exc)}
    h = report.header
    if page is not None and observer is not None and not report.mismatches:
        viewer = _page_differs(page.name, got, h, report.footer, observer)
    return {
        "viewer": viewer,
        "mismatch": report.mismatches[0] if report.mismatches else None,
        "game": h.get("game"),
        "seed": h.get("seed"),
        "players": h.get("players"),
        "bots": [s.get("bot") for s in h.get("seats") or []],
        "footer": report.footer,
    }


def _page_of(log: str) -> Path | None:
    """The viewer page of the game whose log is ``log``, if it has one."""
    name = os.path.basename(log)
    for suffix in LOG_SUFFIXES:
        if name.endswith(suffix):
            page = Path(log).with_name(name[: -len(suffix)] + ".frames.js")
            return page if page.is_file() else None
    return None


def _page_differs(name: str, got: Any, header: dict[str, Any], footer: dict[str, Any], observer: Any) -> str | None:
    """How the viewer page ``got`` (file ``name``) differs from what the replay made with ``observer``
    (frames for a version 1 page, events for a version 2 page), or None."""
    from referee.view.events import EventRecorder, events_document
    from referee.view.frames import frames_document

    if isinstance(observer, EventRecorder):
        doc = events_document(header, footer, observer.table, observer.records, verified=True, mismatch=None)
        steps, what = "events", "event"
    else:
        doc = frames_document(
            header, footer, observer.frames, verified=observer.problem is None, mismatch=observer.problem
        )
        steps, what = "frames", "step"
    want = json.loads(msgspec.json.encode(doc))
    if got == want:
        return None
    if isinstance(got, dict) and isinstance(got.get(steps), list):
        items = got[steps]
        for i, (a, b) in enumerate(zip(items, want[steps], strict=False)):
            if a != b:
                return f"its viewer page {name} differs from the replay's {steps} at {what} {i}"
        if len(items) != len(want[steps]):
            return f"its viewer page {name} has {len(items)} {steps}, the replay {len(want[steps])}"
        key = next((k for k in want if got.get(k) != want[k]), "?")
        return f"its viewer page {name} differs from the replay's in {key!r}"
    return f"its viewer page {name} is not a frames document"


def _replays(paths: list[str], jobs: int) -> Iterator[dict[str, Any]]:
    """The replay summaries of ``paths``, in order."""
    if jobs <= 1 or len(paths) < PARALLEL_FROM:
        for p in paths:
            yield _replay_one(p)
        return
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        yield from pool.map(_replay_one, paths, chunksize=max(1, min(64, len(paths) // (jobs * 8))))


def _same_num(a: Any, b: Any) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_num(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return bool(a == b)


def _row_vs_log(row: GameRow, got: dict[str, Any]) -> str | None:
    """How the row differs from its (verified) log, or None."""
    header = {"game": row.game_id, "seed": row.seed, "players": row.size, "bots": row.bots}
    for key, want in header.items():
        if got.get(key) != want:
            return f"the ledger has {key} {want!r}, the log's header {got.get(key)!r}"
    footer = got.get("footer") or {}
    fields: dict[str, Any] = {
        "scores": row.scores,
        "ranks": row.ranks,
        "win_shares": row.win_shares,
        "forfeits": row.forfeits,
        "reason": row.reason,
        "detail": row.detail,
        "faults": row.faults,
        "think_ms": row.think,
    }
    for key, want in fields.items():
        if not _same_num(want, footer.get(key)):
            return f"the ledger has {key} {_short(want)}, the log's footer {_short(footer.get(key))}"
    return None


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 100 else text[:97] + "..."


# --------------------------------------------------------------------------
# the audit


def verify(
    out: str | Path, *, jobs: int | None = None, progress: Callable[[int, int], None] | None = None
) -> AuditReport:
    """Audit the output directory ``out`` (see the module docstring).
    ``progress(done, total)`` is called as replays finish. Raises
    :class:`UserError` when ``out`` cannot be audited at all."""
    t0 = time.monotonic()
    out = Path(out)
    if not out.is_dir():
        raise UserError(f"{out}: no such directory; give the output directory of a league run")
    report = AuditReport(out=out, running=run_lock_held(out))
    with Ledger.in_dir(out, create=False) as ledger:
        night = NightPlan.of_ledger(ledger)
        league = night.everyone or night.league
        if league.secret and league.seed is None:
            raise UserError(
                f"{ledger.path}: the ledger of a secret night holds no seed (damaged, or no game was "
                "ever started); restore it from a copy"
            )
        planned = {g.game_id: g for g in night.games()}
        ladder = night.ladder(row for _, row, _ in ledger.each_row() if row is not None)  # damaged rows: below
        report.planned = night.total()
        todo: list[tuple[GameRow, Path]] = []
        named: set[str] = set()
        for gid, row, damage in ledger.each_row():
            report.rows += 1
            if row is None:
                report.problems.append(Problem("damaged row", gid, damage or "the row cannot be decoded"))
                named.update(gid + suffix for suffix in LOG_SUFFIXES)  # its log is not a stray one
                continue
            if row.log_path:
                named.add(log_file(out, row.log_path).name)
            g = planned.get(gid)
            report.held += g is not None
            if g is None:
                g = ladder.get(gid)
                report.ladder += g is not None
            if g is None:
                report.problems.append(Problem("row not in the schedule", gid, _unplanned(gid)))
                continue
            diff = _schedule_diff(row, g, league)
            if diff is not None:
                report.problems.append(Problem("row not in the schedule", gid, diff))
                continue
            if not row.log_path:
                report.problems.append(Problem("missing log", gid, "the ledger names no log for this game"))
                continue
            path = log_file(out, row.log_path)
            if not path.is_file():
                report.problems.append(Problem("missing log", gid, f"{row.log_path} is not there"))
                continue
            todo.append((row, path))
    _check_logs(report, todo, jobs or os.cpu_count() or 1, progress)
    for name in _orphans(out / "games", named):
        if report.running:
            report.in_flight.append(name)
        else:
            report.problems.append(
                Problem(
                    "log without a row",
                    name,
                    "no ledger row names this log (a game played but never recorded, or a file put there)",
                )
            )
    report.problems.sort(key=lambda p: (KINDS.index(p.kind), p.game))
    report.seconds = time.monotonic() - t0
    return report


def _check_logs(
    report: AuditReport, todo: list[tuple[GameRow, Path]], jobs: int, progress: Callable[[int, int], None] | None
) -> None:
    for i, ((row, path), got) in enumerate(zip(todo, _replays([str(p) for _, p in todo], jobs), strict=True)):
        if "error" in got:
            report.problems.append(Problem("altered log", row.game_id, _after_path(got["error"], path)))
        elif got["mismatch"] is not None:
            report.problems.append(
                Problem("altered log", row.game_id, f"the replay differs from the log: {got['mismatch']}")
            )
        else:
            diff = _row_vs_log(row, got)
            if diff is not None:
                report.problems.append(Problem("row differs from its log", row.game_id, diff))
            elif got.get("viewer") is not None:
                report.problems.append(Problem("viewer differs from its log", row.game_id, got["viewer"]))
            else:
                report.verified += 1
        if progress is not None:
            progress(i + 1, len(todo))


def _after_path(text: str, path: Path) -> str:
    """A replay error without the log's path in front (the problem names the game)."""
    for prefix in (f"{path}: ", f"{path} "):
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text


def _orphans(games: Path, named: Iterable[str]) -> list[str]:
    """Log files in ``games`` that no row names (temporary files aside)."""
    names = set(named)
    try:
        entries = sorted(os.listdir(games))
    except OSError:
        return []
    return [e for e in entries if e.endswith(LOG_SUFFIXES) and e not in names]
