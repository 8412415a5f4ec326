"""Games being played, watchable as they happen: the live files and their readers.

While a night runs, the runtime's machine feeds an event recorder as it plays (the
:class:`~referee.runtime.game.GameWatch` of :func:`referee.runtime.play_game`), so the viewer data
of a game is made once, by the game itself:

* :class:`LiveViewers` (one per night, given to the executor) makes a :class:`LiveGameWriter` per
  game. The writer appends the game's public events (:mod:`referee.view.events`, version 2 of
  ``docs/VIEWER-FORMAT.md``) to ``OUT/live/<game_id>.frames.jsonl``: the first line is the
  header (:data:`referee.view.frames.HEADER_FIELDS` with version 2, the game's ``deck``, and
  ``writer``: the host, pid and process start time of the referee writing it); then one event
  record per line, appended in batches (at most :data:`FLUSH_S` apart, and at every hand's end);
  a last line ``{"end": true}`` once the game is over. The game's final viewer page
  (``GAME.frames.js``, the same document ``events_from_log`` makes from the log) is then written
  next to its log and the live file removed.
* :func:`running_games` lists the live files of an output folder whose writer is still running (a
  file left by a killed referee is *stale*: its pid is gone, or is now another process; such
  files are not listed, and the next run in the folder removes them).
* :func:`follow` yields a running game's header and then each event record as it is appended
  (polling the file with trio), until its end.

Errors: a game id that is not one (:data:`referee.view.frames.GAME_ID_RE`) or names no running game
is a :class:`~referee.errors.UserError`. A live file or page that cannot be written never stops the
game: the writer gives up quietly (the page is then made from the log by
:func:`referee.view.viewers.write_viewers` at the night's end).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import trio

from referee.errors import UserError
from referee.view.events import EventRecorder, deck_table, deck_table_of, events_header
from referee.view.frames import GAME_ID_RE, HEADER_FIELDS, game_kind

if TYPE_CHECKING:  # pragma: no cover
    from referee.core.machine import HandMachine
    from referee.core.spec import FaultRecord, GameResult

__all__ = [
    "LIVE_DIR",
    "LiveGame",
    "LiveGameWriter",
    "LiveViewers",
    "follow",
    "live_path",
    "prune_stale",
    "running_games",
]

#: the folder of the live frames files, in the output folder
LIVE_DIR = "live"
SUFFIX = ".frames.jsonl"
END_LINE = b'{"end":true}\n'
#: how often :func:`follow` looks for new records, and how often it checks that the writer still runs
POLL_S = 0.05
#: how long the events of a game being played may wait before they are appended to its live file
#: (they are also written at every hand's end and at the game's end)
FLUSH_S = 0.05
WRITER_CHECK_S = 1.0

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


class LiveGame(msgspec.Struct, frozen=True):
    """A game being played, as :func:`running_games` lists it."""

    game: str
    variant: str
    seats: list[str]
    #: when the game started (UTC, ISO 8601, as in its log header)
    started: str | None
    #: the event records written so far
    frames: int


class Writer(msgspec.Struct, frozen=True):
    """Who writes a live file: the host, pid and start time (clock ticks since boot) of the process."""

    host: str
    pid: int
    since: int | None


def live_path(out: Path | str, game_id: str) -> Path:
    return Path(out) / LIVE_DIR / f"{game_id}{SUFFIX}"


def _since(pid: int) -> int | None:
    """The start time of process ``pid`` (``/proc/PID/stat`` field 22), None if there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    try:
        return int(stat[stat.rindex(b")") + 2 :].split()[19])
    except (ValueError, IndexError):
        return None


_HOST = socket.gethostname()
_ME: Writer | None = None


def _me() -> Writer:
    global _ME
    pid = os.getpid()
    if _ME is None or _ME.pid != pid:  # (a forked worker is another writer)
        _ME = Writer(_HOST, pid, _since(pid))
    return _ME


def _alive(writer: Any) -> bool:
    """Whether the writer named in a live file's header still runs. A writer on another host
    cannot be checked from here: it counts as running."""
    if not isinstance(writer, dict) or not isinstance(writer.get("pid"), int):
        return False
    if writer.get("host") != _HOST:
        return True
    since = _since(writer["pid"])
    return since is not None and since == writer.get("since")


def _read_header(path: Path) -> tuple[dict[str, Any], bytes] | None:
    """A live file's header and its whole text; None if it cannot be read or has no complete header."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    nl = data.find(b"\n")
    if nl < 0:
        return None
    try:
        header = _decode(data[:nl])
    except msgspec.DecodeError:
        return None
    return (header, data) if isinstance(header, dict) else None


def _live_files(out: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(Path(out) / LIVE_DIR), key=lambda e: e.name)
    except OSError:
        return []
    return [
        Path(e.path)
        for e in entries
        if e.name.endswith(SUFFIX) and GAME_ID_RE.match(e.name[: -len(SUFFIX)]) and e.is_file(follow_symlinks=False)
    ]


def _tmp_files(out: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(Path(out) / LIVE_DIR) if e.name.endswith(f"{SUFFIX}.tmp")]
    except OSError:
        return []


def running_games(out: Path) -> list[LiveGame]:
    """The games being played into the output folder ``out``: its live files whose writer still
    runs and whose game is not over, in the order of their game ids."""
    games: list[LiveGame] = []
    for path in _live_files(out):
        got = _read_header(path)
        if got is None:
            continue
        header, data = got
        if not _alive(header.get("writer")) or data.endswith(END_LINE):
            continue
        lines = data.count(b"\n") - 1
        seats = [str(s.get("bot")) for s in header.get("seats") or [] if isinstance(s, dict)]
        games.append(
            LiveGame(
                game=str(header.get("game")),
                variant=str(header.get("variant")),
                seats=seats,
                started=header.get("started") if isinstance(header.get("started"), str) else None,
                frames=max(0, lines),
            )
        )
    return games


def prune_stale(out: Path) -> int:
    """Remove the live files of ``out`` whose writer is gone (a killed referee's); how many."""
    n = 0
    for entry in _tmp_files(out):  # a live file's header being written (os.rename pending)
        try:
            if time.time() - entry.stat().st_mtime >= 60:
                entry.unlink()
        except OSError:
            pass
    for path in _live_files(out):
        got = _read_header(path)
        if got is not None and _alive(got[0].get("writer")):
            continue
        if got is None:  # no complete header: stale only once its writer had time to write it
            try:
                if time.time() - path.stat().st_mtime < 60:
                    continue
            except OSError:
                continue
        try:
            path.unlink()
            n += 1
        except OSError:
            pass
    return n


def _check_id(game_id: str) -> None:
    if not isinstance(game_id, str) or not GAME_ID_RE.match(game_id):
        raise UserError(
            f"{game_id!r} is not a game id (letters, digits, '.', '_' and '-', starting with one of the first two)"
        )


async def follow(out: Path, game_id: str, start: int = 0) -> AsyncIterator[dict[str, Any]]:
    """Yield the header of the running game ``game_id`` of output folder ``out`` (the live file's
    first line without ``writer``), then each of its event records from record ``start`` on as it
    appears (``{"i": its index, "event": the record}``), and end after the game's end. Raises
    :class:`UserError` for a bad game id, a game that is not running, or a writer that stops
    (a referee killed mid-game) before the game's end."""
    _check_id(game_id)
    if start < 0:
        raise UserError(f"start must be 0 or more, not {start}")
    path = live_path(out, game_id)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        raise UserError(f"{game_id}: no such game is being played in {out}") from None
    try:
        buf = b""
        header: dict[str, Any] | None = None
        seen = 0  # the records read so far
        clock = trio.current_time
        checked = clock()
        while True:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    if header is None:
                        try:
                            header = _decode(line)
                        except msgspec.DecodeError:
                            header = None
                        if not isinstance(header, dict) or not _alive(header.get("writer")):
                            raise UserError(
                                f"{game_id}: no such game is being played in {out} (its live file is stale)"
                            )
                        yield {k: header.get(k) for k in (*HEADER_FIELDS, "deck")}
                        continue
                    if line == END_LINE[:-1]:
                        return
                    if seen >= start:
                        yield {"i": seen, "event": _decode(line)}
                    seen += 1
                continue
            now = clock()
            if now - checked >= WRITER_CHECK_S:
                checked = now
                writer = header.get("writer") if header is not None else None
                if header is None:
                    gone = os.fstat(fd).st_nlink == 0
                else:
                    gone = not _alive(writer)
                if gone:
                    # one last read: the end may have come just before the writer went
                    if os.read(fd, 1) == b"":
                        raise UserError(f"{game_id}: the referee playing it stopped before the game's end")
                    os.lseek(fd, -1, os.SEEK_CUR)
                    continue
            await trio.sleep(POLL_S)
    finally:
        os.close(fd)


# ----------------------------------------------------------------------------- the writer


class LiveGameWriter:
    """The watcher of one game (a :class:`~referee.runtime.game.GameWatch`): records its public events
    as the machine plays (:class:`referee.view.events.EventRecorder`), appends them to the live file
    (batched: at most every :data:`FLUSH_S` seconds, and at every hand's end), and at the end writes
    the game's viewer page (version 2) into ``pages`` and removes the live file."""

    def __init__(self, live: Path, pages: Path, game_id: str) -> None:
        self.path = live / f"{game_id}{SUFFIX}"
        self.pages = pages
        self.game_id = game_id
        self.fd: int | None = None
        self.builder: Any = None
        self.lines: list[bytes] = []
        self.header: dict[str, Any] = {}
        self.head = b"{}"
        self.table: dict[str, Any] | None = None
        self.failed = False
        self.flushed = 0.0

    # -------------------------------------------------------------- GameWatch
    def begin(self, machine: HandMachine | None, header: dict[str, Any]) -> None:
        self.header = header
        self.builder = EventRecorder(game_kind(header))
        try:
            self.table = deck_table(machine.rules) if machine is not None else deck_table_of(header["rules"])
        except Exception:  # (rules the registry cannot read: the recorder takes the machine's at the start)
            self.table = None
        # the header's text, once: the live file's first line and the start of the page
        self.head = _encode(events_header(header, self.table))
        me = _me()
        writer = b',"writer":' + _encode({"host": me.host, "pid": me.pid, "since": me.since}) + b"}\n"
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
            try:
                os.write(fd, self.head[:-1] + writer)
                os.rename(tmp, self.path)
            except OSError:
                os.close(fd)
                raise
            self.fd = fd
        except OSError:
            self.fd = None  # no live file; the events are still recorded for the page
        self.flushed = time.monotonic()

    def _flush(self) -> None:
        """Encode the records made since the last flush and append them to the live file."""
        records = self.builder.records
        done = len(self.lines)
        if len(records) == done:
            return
        enc = [_encode(r) for r in records[done:]]
        self.lines.extend(enc)
        self.flushed = time.monotonic()
        if self.fd is not None:
            try:
                os.write(self.fd, b"\n".join(enc) + b"\n")
            except OSError:
                self._close()

    def _close(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None

    def end(self, result: GameResult, interrupted: bool) -> None:
        if self.builder is None:
            self.failed = True  # (never begun)
        try:
            if not self.failed:
                self._flush()
                if self.fd is not None:
                    os.write(self.fd, END_LINE)
                if not interrupted and self.lines:
                    self._write_page(result)
        except Exception:  # never stops the game (see the hooks below)
            self.failed = True
        finally:
            self._close()
            try:
                self.path.unlink()
            except OSError:
                pass

    def _write_page(self, result: GameResult) -> None:
        from referee.fileio import write_atomic
        from referee.view.page import script_safe

        if self.table is None:  # (the deck was not known at the start: the header again, with it)
            self.head = _encode(events_header(self.header, self.builder.table))
        tail = {  # the keys after the header (referee.view.events.events_document)
            "result": {
                "scores": result.scores,
                "ranks": result.ranks,
                "win_shares": result.win_shares,
                "forfeits": result.forfeits,
                "reason": result.reason,
                "detail": result.detail,
            },
            "log_capped": bool(result.log_capped),
            "verified": True,
            "mismatch": None,
        }
        text = b"".join((self.head[:-1], b",", _encode(tail)[1:-1], b',"events":[', b",".join(self.lines), b"]}"))
        write_atomic(
            self.pages / f"{self.game_id}.frames.js", b"window.__referee_game_data = " + script_safe(text) + b";\n"
        )

    # -------------------------------------------------------------- the machine's observer hooks
    # A builder that fails (a bug: never expected) must not stop the game: the writer gives up, its
    # live file is removed, and the page is made from the log at the night's end (which reports it).
    def _give_up(self) -> None:
        self.failed = True
        self._close()
        try:
            self.path.unlink()
        except OSError:
            pass

    def hand_started(self, m: HandMachine) -> None:
        if self.failed:
            return
        try:
            self.builder.hand_started(m)
            self._flush()
        except Exception:
            self._give_up()

    def applied(
        self,
        m: HandMachine,
        seat: int,
        decide: str,
        action: Any,
        events: list[dict[str, Any]],
        fallback: bool,
        ms: float | None,
    ) -> None:
        if self.failed:
            return
        try:
            self.builder.applied(m, seat, decide, action, events, fallback, ms)
            if time.monotonic() - self.flushed >= FLUSH_S:
                self._flush()
        except Exception:
            self._give_up()

    def faulted(self, m: HandMachine, rec: FaultRecord) -> None:
        if self.failed:
            return
        try:
            self.builder.faulted(m, rec)
            if time.monotonic() - self.flushed >= FLUSH_S:
                self._flush()
        except Exception:
            self._give_up()

    def retried(self, m: HandMachine, seat: int, fault: str, detail: str, left: int) -> None:
        if self.failed:
            return
        try:
            self.builder.retried(m, seat, fault, detail, left)
            if time.monotonic() - self.flushed >= FLUSH_S:
                self._flush()
        except Exception:
            self._give_up()

    def hand_ended(self, m: HandMachine, scores: list[Any], ranks: list[int], reason: str, detail: str | None) -> None:
        if self.failed:
            return
        try:
            self.builder.hand_ended(m, scores, ranks, reason, detail)
            self._flush()
        except Exception:
            self._give_up()


class LiveViewers:
    """The viewers of a night's games, made as they are played: live files in ``live``
    (``OUT/live``) and each finished game's page in ``pages`` (the folder of its log). Stale live
    files of a killed earlier run are removed when this is made."""

    def __init__(self, live: Path, pages: Path, shell: Path | None = None) -> None:
        self.live = Path(live)
        self.pages = Path(pages)
        prune_stale(self.live.parent)
        if shell is not None:  # the viewer shell, so that a game can be watched from the night's start
            from referee.view.viewers import write_shell

            try:
                shell.mkdir(parents=True, exist_ok=True)
                write_shell(shell)
            except OSError:
                pass

    @classmethod
    def for_out(cls, out: Path) -> LiveViewers:
        return cls(Path(out) / LIVE_DIR, Path(out) / "games", Path(out) / "games")

    def watch(self, game_id: str) -> LiveGameWriter | None:
        """The watcher of game ``game_id`` (None for an id the viewer cannot load)."""
        if not GAME_ID_RE.match(game_id):
            return None
        return LiveGameWriter(self.live, self.pages, game_id)
