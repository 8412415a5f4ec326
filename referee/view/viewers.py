"""Viewer pages next to a night's logs: one shared shell, one frames file per game.

``OUT/games/viewer.html`` is the viewer shell (:func:`referee.view.page.render_viewer_shell`, with a
link back to ``../report.html``); ``OUT/games/GAME.frames.js`` holds one game's frames (made from its
log by the replay core), so ``games/viewer.html?game=GAME`` shows it, from ``file://`` as over HTTP.

:func:`write_viewers` writes what is missing or older than its log and skips the rest, so writing
them again after a resumed night costs only the new games; the frames are made on all cores
(a process pool) when there are many.

Errors: a log that cannot be read or replayed gets no frames file (it is counted in ``failed``,
with the first reason in ``first_error``); a folder that cannot be written raises ``OSError``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from referee.view.frames import GAME_ID_RE

SHELL_NAME = "viewer.html"
#: the shell's path relative to the output folder (links in the report use it)
SHELL_HREF = f"games/{SHELL_NAME}"
_PARALLEL_FROM = 24  # fewer games than this are made in this process


@dataclass
class ViewerStats:
    written: int = 0  # frames files written now
    fresh: int = 0  # already up to date
    skipped: int = 0  # not written (over the limit)
    failed: int = 0  # logs that could not be shown
    first_error: str | None = None
    seconds: float = 0.0


def frames_path(games: Path, game_id: str) -> Path:
    return games / f"{game_id}.frames.js"


def _up_to_date(target: Path, log: Path) -> bool:
    try:
        return target.stat().st_mtime_ns >= log.stat().st_mtime_ns
    except OSError:
        return False


def _write_one(job: tuple[str, str, str]) -> str | None:
    """Make and write one game's frames file; the error text if its log cannot be shown."""
    from referee.errors import UserError
    from referee.fileio import write_atomic
    from referee.view.events import events_from_log
    from referee.view.page import frames_js

    game_id, log, target = job
    try:
        data = events_from_log(log)
        write_atomic(Path(target), frames_js(data))
    except (UserError, ValueError, TypeError, KeyError) as exc:
        return f"{game_id}: {exc}"
    return None


def write_shell(games: Path) -> Path:
    """Write ``games/viewer.html`` if it is missing or differs from this version's shell."""
    from referee.fileio import write_atomic
    from referee.view.page import render_viewer_shell

    path = games / SHELL_NAME
    text = render_viewer_shell(back_href="../report.html", back_label="report")
    try:
        if path.read_text(encoding="utf-8") == text:
            return path
    except OSError:
        pass
    write_atomic(path, text)
    return path


def write_viewers(
    out: Path, games: Iterable[tuple[str, str | None]], *, limit: int | None = None, jobs: int | None = None
) -> ViewerStats:
    """Write the viewer shell and the frames file of every game in ``games`` (``(game_id,
    log path relative to out)``) whose file is missing or older than its log. With ``limit``, write
    at most that many (the rest count as ``skipped``). ``jobs``: processes (default: all cores)."""
    t0 = time.perf_counter()
    out = Path(out)
    folder = out / "games"
    folder.mkdir(parents=True, exist_ok=True)
    write_shell(folder)
    stats = ViewerStats()
    todo: list[tuple[str, str, str]] = []
    for game_id, log in games:
        if not log or not GAME_ID_RE.match(game_id):
            continue
        log_path = Path(log) if Path(log).is_absolute() else out / log
        target = frames_path(folder, game_id)
        if _up_to_date(target, log_path):
            stats.fresh += 1
        elif limit is not None and len(todo) >= limit:
            stats.skipped += 1
        else:
            todo.append((game_id, str(log_path), str(target)))
    errors = _run(todo, jobs)
    stats.failed = sum(e is not None for e in errors)
    stats.written = len(todo) - stats.failed
    stats.first_error = next((e for e in errors if e is not None), None)
    stats.seconds = time.perf_counter() - t0
    return stats


def _run(todo: Sequence[tuple[str, str, str]], jobs: int | None) -> list[str | None]:
    workers = max(1, min(jobs or os.cpu_count() or 1, 32))
    if workers == 1 or len(todo) < _PARALLEL_FROM:
        return [_write_one(j) for j in todo]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_write_one, todo, chunksize=max(1, min(64, len(todo) // (workers * 4)))))
