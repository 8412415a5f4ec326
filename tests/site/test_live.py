"""``/live/GAME``: a running game as server-sent events (header, frames as they are appended, end),
and the running games' list; stderr cut out for everyone but the host."""

from __future__ import annotations

import json

import httpx
import msgspec
import trio

from referee.site.runtime import SiteRuntime
from referee.view.live import _me, live_path


def _events(text: str) -> list[tuple[str, dict]]:
    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def _live_file(runtime: SiteRuntime, game: str) -> None:
    path = live_path(runtime.site.league_out, game)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "format": "card-referee-frames",
        "version": 1,
        "game": game,
        "variant": "kwartet",
        "seats": [{"bot": "a"}, {"bot": "b"}, {"bot": "c"}],
        "writer": msgspec.to_builtins(_me()),
    }
    frames = [{"i": 0, "state": {}}, {"i": 1, "event": {"detail": "exited 1; stderr ends: 'my secret'"}}]
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *frames]))


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
            f.write(json.dumps({"i": 2, "event": {"kind": "ask"}}) + "\n")
            f.write('{"end":true}\n')
    resp = got[0]
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
    events = _events(resp.text)
    assert [e for e, _ in events] == ["header", "frame", "frame", "frame", "end"]
    assert events[0][1]["game"] == game and [d["i"] for e, d in events if e == "frame"] == [0, 1, 2]
    assert "my secret" not in resp.text  # not the host: the crash's stderr is cut out
    assert events[-1][1] == {"game": game, "view": f"/view/{game}"}


async def test_live_of_a_game_not_running(client: httpx.AsyncClient) -> None:
    r = await client.get("/live/kwartet-3p-000001-d1-r0")
    g = "kwartet-3p-000001-d1-r0"
    assert _events(r.text) == [("error", {"error": f"{g} is not being played (a finished game is at /view/{g})"})]
    assert (await client.get("/live/..%2Fx")).status_code == 404
