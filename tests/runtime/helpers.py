"""Helpers for the runtime tests: real bot processes, real games, replay checks."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import msgspec
import trio

from referee.rules import get_variant
from referee.runtime import BotSpec, ClockSpec, FaultPolicy, GameSpec, play_game, start_bots
from referee.runtime.replay import replay

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"


def bot(name: str, script: str | Path, **env: str) -> BotSpec:
    path = script if isinstance(script, Path) else BOTS / script
    return BotSpec(name, [sys.executable, str(path)], env={**os.environ, **env})


def live_in_group(pgid: int) -> list[int]:
    """Pids of live (non-zombie) processes whose process group is ``pgid``."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            data = open(f"/proc/{name}/stat", "rb").read()
        except OSError:
            continue
        rest = data[data.rfind(b")") + 2 :].split()
        if rest[0] != b"Z" and int(rest[2]) == pgid:
            out.append(int(name))
    return out


def live_with_token(token: str) -> list[int]:
    """Pids of live (non-zombie) processes whose environment holds ``BOT_TOKEN=token``.

    Robust whatever the sandbox does (a PID namespace hides the bot's real pid
    and group from the bot itself; the environment is inherited by everything
    it starts)."""
    needle = f"BOT_TOKEN={token}".encode()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            env = open(f"/proc/{name}/environ", "rb").read()
            data = open(f"/proc/{name}/stat", "rb").read()
        except OSError:
            continue
        state = data[data.rfind(b")") + 2 :].split()[0]
        if state != b"Z" and needle in env.split(b"\0"):
            out.append(int(name))
    return out


async def left_behind(pgid: int, token: str | None = None, within_s: float = 3.0) -> list[int]:
    """Live processes of a killed bot (its process group, and with ``token`` its
    ``BOT_TOKEN`` holders) once they have had ``within_s`` seconds to finish dying.

    The runtime SIGKILLs the whole group and reaps the leader before it
    returns, but the kernel tears down the other members (the bot inside the
    sandbox's PID namespace, its children) asynchronously; on a loaded machine
    one can still be seen running for a few milliseconds. Empty list: all gone."""
    with trio.move_on_after(within_s):
        while True:
            live = live_in_group(pgid) + (live_with_token(token) if token is not None else [])
            if not live:
                return []
            await trio.sleep(0.01)
    return live_in_group(pgid) + (live_with_token(token) if token is not None else [])


async def play(
    specs: list[BotSpec],
    variant: str = "kwartet",
    *,
    seed: int = 1,
    log_dir: Path,
    clock: ClockSpec | None = None,
    policy: FaultPolicy | None = None,
    match: Any = None,
    game_id: str = "g-000001",
    seat_clocks: list[ClockSpec | None] | None = None,
) -> Any:
    """Start the bots, play one game, close them; return (result, replay report)."""
    clock = clock or ClockSpec(move_ms=2000)
    rules = get_variant(variant)
    spec = GameSpec(
        game_id,
        rules,
        len(specs),
        seed=seed,
        clock=clock,
        policy=policy or FaultPolicy(),
        match=match,
        seat_clocks=seat_clocks,
    )
    async with trio.open_nursery() as nursery:
        sessions = await start_bots(specs, clock, nursery)
        try:
            result = await play_game(spec, sessions, log_dir)
        finally:
            for s in sessions:
                await s.close()
    report = replay(result.log_path)
    return result, report


def log_records(path: str | Path) -> list[dict[str, Any]]:
    """A game log's records (plain or compressed)."""
    from referee.runtime.gamelog import read_log_bytes

    return [msgspec.json.decode(line) for line in read_log_bytes(Path(path).read_bytes()).splitlines()]


def sent_to(path: str | Path, seat: int, msg_type: str) -> list[dict[str, Any]]:
    """Messages of ``msg_type`` the log says were written to ``seat``."""
    out = []
    for rec in log_records(path):
        if rec.get("to") == seat:
            out.extend(m for m in rec["out"] if m.get("type") == msg_type)
    return out
