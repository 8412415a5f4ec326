"""The live files of a game being played (referee.view.live, its public events: version 2 of
docs/VIEWER-FORMAT.md): the file the runtime appends to,
``running_games`` and ``follow``, against real games of sample bots (and hand-made files for the
stale and error cases)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from referee.errors import UserError
from referee.rules import get_variant
from referee.runtime import ClockSpec, FaultPolicy, GameSpec, play_game, start_bots
from referee.view.events import events_from_log
from referee.view.frames import HEADER_FIELDS
from referee.view.live import (
    END_LINE,
    LiveGameWriter,
    LiveViewers,
    follow,
    live_path,
    prune_stale,
    running_games,
)
from tests.runtime.helpers import RANDOM_BOT, bot


def _page(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    prefix = "window.__referee_game_data = "
    assert text.startswith(prefix) and text.endswith(";\n")
    data: dict[str, Any] = json.loads(text[len(prefix) : -2])
    return data


def _same_json(doc: Any) -> Any:
    return json.loads(json.dumps(doc))


#: the fields of a live file's header (without its writer) and of a version 2 page's
FIELDS = (*HEADER_FIELDS, "deck")


async def _play_watched(out: Path, game_id: str, watcher_task: Any, variant: str = "kwartet") -> Any:
    """Play one game of a slow bot and two random bots into ``out`` (log and page in ``out/games``,
    live file in ``out/live``), with ``watcher_task(nursery)`` started beside it."""
    games = out / "games"
    games.mkdir(parents=True, exist_ok=True)
    clock = ClockSpec(move_ms=3000)
    specs = [
        bot("slow", "slow_bot.py", BOT_DELAY_MS="60", BOT_SLOW_TURNS="4"),
        bot("r1", RANDOM_BOT),
        bot("r2", RANDOM_BOT),
    ]
    viewers = LiveViewers.for_out(out)
    spec = GameSpec(game_id, get_variant(variant), 3, seed=5, clock=clock)
    async with trio.open_nursery() as nursery:
        sessions = await start_bots(specs, clock, nursery)
        watcher_task(nursery)
        try:
            result = await play_game(spec, sessions, games, watch=viewers.watch(game_id))
        finally:
            for s in sessions:
                await s.close()
    return result


async def test_the_live_file_of_a_real_game_holds_its_final_events(tmp_path: Path) -> None:
    out = tmp_path / "night"
    gid = "kwartet-3p-t0000-d000-r0"
    seen: dict[str, Any] = {}

    def watcher(nursery: trio.Nursery) -> None:
        async def grab() -> None:
            path = live_path(out, gid)
            while True:  # open the live file as soon as it is there: it is removed at the end
                try:
                    fd = os.open(path, os.O_RDONLY)
                    break
                except FileNotFoundError:
                    await trio.sleep(0.002)
            seen["running"] = running_games(out)
            while path.exists():  # noqa: ASYNC110  removed by the writer, in another thread
                await trio.sleep(0.01)
            data = b""
            while chunk := os.read(fd, 1 << 16):
                data += chunk
            os.close(fd)
            seen["data"] = data

        nursery.start_soon(grab)

    result = await _play_watched(out, gid, watcher)
    assert result.reason == "complete"
    assert [g.game for g in seen["running"]] == [gid]
    assert seen["running"][0].seats == ["slow", "r1", "r2"] and seen["running"][0].variant == "kwartet"
    lines = seen["data"].split(b"\n")
    assert lines[-1] == b"" and lines[-2] + b"\n" == END_LINE
    header = json.loads(lines[0])
    assert header["writer"]["pid"] == os.getpid()
    records = [json.loads(x) for x in lines[1:-2]]
    page = _page(out / "games" / f"{gid}.frames.js")
    assert page["version"] == 2 and header["version"] == 2
    assert {k: header[k] for k in FIELDS} == {k: page[k] for k in FIELDS}
    assert records == page["events"] and len(records) > 20
    # the page written live is the one the log gives (the viewer can never disagree with replay)
    assert page == _same_json(events_from_log(result.log_path))
    assert page["verified"] is True
    assert not live_path(out, gid).exists() and running_games(out) == []


async def test_follow_yields_a_running_games_events_in_order_and_ends(tmp_path: Path) -> None:
    out = tmp_path / "night"
    gid = "authors-3p-t0001-d002-r1"
    got: list[dict[str, Any]] = []

    def watcher(nursery: trio.Nursery) -> None:
        async def watch() -> None:
            while not live_path(out, gid).exists():  # noqa: ASYNC110  made by the night, in another thread
                await trio.sleep(0.002)
            async for item in follow(out, gid):
                got.append(item)

        nursery.start_soon(watch)

    result = await _play_watched(out, gid, watcher, variant="authors")
    page = _page(out / "games" / f"{gid}.frames.js")
    assert got[0] == {k: page[k] for k in FIELDS}
    assert [x["event"] for x in got[1:]] == page["events"]
    assert [x["i"] for x in got[1:]] == list(range(len(page["events"])))
    assert result.reason == "complete"


@pytest.mark.parametrize("variant", ["kwartet", "chickens"])
async def test_faults_retries_and_fallback_moves_made_live_are_the_replays_events(tmp_path: Path, variant: str) -> None:
    """The event recorder on the playing machine and on the replay of the log give the same page for
    a game with a retry, an illegal move, a crash and the fallback moves after them."""
    out = tmp_path / "night"
    games = out / "games"
    games.mkdir(parents=True)
    gid = f"{variant}-4p-t0000-d000-r0"
    clock = ClockSpec(move_ms=3000)
    specs = [
        bot("illegal", "illegal_bot.py", BOT_FAULT_AT="2", BOT_THEN_LEGAL="1"),
        bot("crash", "crash_bot.py", BOT_FAULT_AT="3"),
        bot("r1", RANDOM_BOT),
        bot("r2", RANDOM_BOT),
    ]
    spec = GameSpec(gid, get_variant(variant), 4, seed=9, clock=clock, policy=FaultPolicy(retries=1))
    async with trio.open_nursery() as nursery:
        sessions = await start_bots(specs, clock, nursery)
        try:
            result = await play_game(spec, sessions, games, watch=LiveViewers.for_out(out).watch(gid))
        finally:
            for s in sessions:
                await s.close()
    page = _page(games / f"{gid}.frames.js")
    kinds = {r[0] for r in page["events"]}
    assert {"F", "R"} <= kinds and any(r[0] == "A" and r[4] for r in page["events"])
    assert page == _same_json(events_from_log(result.log_path)) and page["verified"] is True


def _fake_live(out: Path, game_id: str, writer: dict[str, Any], frames: int, end: bool = False) -> Path:
    path = live_path(out, game_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "format": "card-referee-frames",
        "version": 2,
        "game": game_id,
        "variant": "kwartet",
        "kind": "ask",
        "rules": {},
        "players": 2,
        "seats": [{"seat": 0, "bot": "a", "hello": None}, {"seat": 1, "bot": "b", "hello": None}],
        "match": None,
        "seed": 1,
        "started": "2026-12-02T19:00:00.000Z",
        "writer": writer,
    }
    lines = [json.dumps(header)] + [json.dumps(["R", 0, "illegal", f"reply {i}", 0]) for i in range(frames)]
    path.write_bytes(("\n".join(lines) + "\n").encode() + (END_LINE if end else b""))
    return path


def _me() -> dict[str, Any]:
    from referee.view.live import _me as me

    w = me()
    return {"host": w.host, "pid": w.pid, "since": w.since}


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


async def test_a_stale_live_file_is_not_listed_followed_or_kept(tmp_path: Path) -> None:
    mine = _fake_live(tmp_path, "g-running", _me(), 3)
    dead = _fake_live(tmp_path, "g-killed", {**_me(), "pid": _dead_pid()}, 5)
    reused = _fake_live(tmp_path, "g-reused", {**_me(), "since": 1}, 5)  # the pid now is another process
    _fake_live(tmp_path, "g-over", _me(), 4, end=True)
    listed = running_games(tmp_path)
    assert [(g.game, g.frames, g.seats, g.started) for g in listed] == [
        ("g-running", 3, ["a", "b"], "2026-12-02T19:00:00.000Z")
    ]
    for gid in ("g-killed", "g-reused"):
        with pytest.raises(UserError, match="stale"):
            async for _ in follow(tmp_path, gid):
                pass
    assert prune_stale(tmp_path) == 2
    assert mine.exists() and not dead.exists() and not reused.exists()


async def test_follow_from_a_start_record_and_its_errors(tmp_path: Path) -> None:
    _fake_live(tmp_path, "g-1", _me(), 5, end=True)
    got = [x async for x in follow(tmp_path, "g-1", start=3)]
    assert got[0]["game"] == "g-1" and "writer" not in got[0]
    assert [(x["i"], x["event"][3]) for x in got[1:]] == [(3, "reply 3"), (4, "reply 4")]
    for bad in ("../g-1", "", ".hidden", "g 1"):
        with pytest.raises(UserError, match="not a game id"):
            async for _ in follow(tmp_path, bad):
                pass
    with pytest.raises(UserError, match="no such game is being played"):
        async for _ in follow(tmp_path, "g-2"):
            pass


async def test_follow_ends_with_an_error_when_the_writer_dies_mid_game(tmp_path: Path, autojump_clock: Any) -> None:
    from referee.view.live import _since

    writer = subprocess.Popen(["sleep", "60"])  # noqa: ASYNC220  killed and reaped in one step (Popen.wait), so follow never sees a zombie
    try:
        _fake_live(tmp_path, "g-1", {**_me(), "pid": writer.pid, "since": _since(writer.pid)}, 2)
        got: list[Any] = []

        async def kill_writer() -> None:
            await trio.sleep(3)
            writer.kill()
            writer.wait()

        async with trio.open_nursery() as n:
            n.start_soon(kill_writer)
            with pytest.raises(UserError, match="stopped before the game's end"):
                async for item in follow(tmp_path, "g-1"):
                    got.append(item)
        assert len(got) == 3  # the header and the two records written before
    finally:
        writer.kill()
        writer.wait()


def test_a_watcher_that_cannot_write_does_not_stop_the_game(tmp_path: Path) -> None:
    # live folder is a file: no live file, no page; the game's hooks still work (nothing raises)
    (tmp_path / "live").write_text("not a folder")
    w = LiveGameWriter(tmp_path / "live", tmp_path / "missing", "g-1")
    w.begin(None, {"game": "g-1", "players": 2, "rules": {}, "seats": []})  # type: ignore[arg-type]
    assert w.fd is None
    assert msgspec.json.decode(END_LINE) == {"end": True}


def test_a_failing_builder_gives_up_without_stopping_the_game(tmp_path: Path) -> None:
    class Broken:
        records: list[Any] = []

        def applied(self, *args: Any) -> None:
            raise KeyError("a bug")

    w = LiveGameWriter(tmp_path / "live", tmp_path / "games", "g-1")
    w.begin(None, {"game": "g-1", "players": 2, "rules": {}, "seats": []})  # type: ignore[arg-type]
    assert live_path(tmp_path, "g-1").is_file()
    w.builder = Broken()
    w.applied(None, 0, "ask", None, [], False, None)  # type: ignore[arg-type]  # nothing raised
    assert w.failed and not live_path(tmp_path, "g-1").exists()
    w.end(None, False)  # type: ignore[arg-type]
    assert not (tmp_path / "games").exists()  # no page: it is made from the log at the night's end
