"""``/live/GAME``: a running game as server-sent events (header, the event records of version 2 of
docs/VIEWER-FORMAT.md as they are appended, end), and the running games' list; stderr cut out for
everyone but the host."""

from __future__ import annotations

import json

import httpx
import msgspec
import trio

from referee.site.runtime import SiteRuntime
from referee.view.live import _me, live_path


def _blocks(text: str) -> list[dict[str, str]]:
    return [dict(line.split(": ", 1) for line in block.splitlines()) for block in text.strip().split("\n\n")]


def _events(text: str) -> list[tuple[str, dict]]:
    return [(b["event"], json.loads(b["data"])) for b in _blocks(text)]


def _live_file(runtime: SiteRuntime, game: str) -> None:
    path = live_path(runtime.site.league_out, game)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "format": "card-referee-frames",
        "version": 2,
        "game": game,
        "variant": "kwartet",
        "seats": [{"bot": "a"}, {"bot": "b"}, {"bot": "c"}],
        "deck": {"cards": []},
        "writer": msgspec.to_builtins(_me()),
    }
    records = [
        ["S", 0, [0, 1, 2], {"hands": [[], [], []]}],
        ["F", 1, "b", "crash", "exited 1; stderr ends: 'my secret'", "the bot crashed"],
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *records]))


async def test_live_follows_a_running_game_to_its_end(client: httpx.AsyncClient, runtime: SiteRuntime) -> None:
    game = "kwartet-3p-L000001-d1-r0"
    _live_file(runtime, game)
    r = await client.get("/api/games/running")
    assert [(g["game"], g["kind"], g["live"]) for g in r.json()["games"]] == [(game, "ladder", f"/live/{game}")]
    got: list[httpx.Response] = []

    async def watch() -> None:
        got.append(await client.get(f"/live/{game}"))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch)
        await trio.sleep(0.3)  # the stream is open and has sent what there was
        with live_path(runtime.site.league_out, game).open("a") as f:
            f.write(json.dumps(["R", 0, "illegal", "no such card", 1]) + "\n")
            f.write('{"end":true}\n')
    resp = got[0]
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
    events = _events(resp.text)
    assert [e for e, _ in events] == ["header", "event", "event", "event", "end"]
    assert events[0][1]["game"] == game and events[0][1]["version"] == 2 and events[0][1]["deck"] == {"cards": []}
    assert "writer" not in events[0][1]
    records = [d for e, d in events if e == "event"]
    assert [d["i"] for d in records] == [0, 1, 2]
    assert [b.get("id") for b in _blocks(resp.text)] == [None, "0", "1", "2", None]  # (for a reconnection)
    assert [d["event"][0] for d in records] == ["S", "F", "R"] and records[2]["event"][3] == "no such card"
    assert "my secret" not in resp.text and records[1]["event"][4].startswith("exited 1")  # not the host: cut out
    assert events[-1][1] == {"game": game, "view": f"/view/{game}"}


async def test_live_of_a_game_not_running(client: httpx.AsyncClient) -> None:
    r = await client.get("/live/kwartet-3p-000001-d1-r0")
    g = "kwartet-3p-000001-d1-r0"
    assert _events(r.text) == [("error", {"error": f"{g} is not being played (a finished game is at /view/{g})"})]
    assert (await client.get("/live/..%2Fx")).status_code == 404
