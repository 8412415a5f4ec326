"""Bot sessions: start-up failures, stderr, clocks, many games per process."""

from __future__ import annotations

import sys

import pytest
import trio

from referee.rules import get_variant
from referee.runtime import (
    BotCrashed,
    BotSession,
    BotSpec,
    BotStartError,
    BotTimeout,
    ClockSpec,
    GameSpec,
    play_game,
    start_bots,
)
from referee.runtime.session import STDERR_TAIL

from .helpers import bot, live_in_group, log_records, play


async def test_missing_command_is_a_clear_start_error():
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotStartError, match="not found"):
            await BotSession.start(BotSpec("ghost", ["/nonexistent/bot"]), ClockSpec(), nursery)


async def test_shell_command_that_exits_reports_status_and_stderr():
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotCrashed, match=r"exit status 5.*oops"):
            await BotSession.start(BotSpec("sh", "echo oops >&2; exit 5"), ClockSpec(), nursery)


async def test_hello_timeout_kills_the_bot():
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotTimeout, match="startup limit of 300 ms"):
            await BotSession.start(BotSpec("sleepy", "sleep 30"), ClockSpec(startup_ms=300), nursery)


async def test_stderr_flood_never_blocks_and_tail_is_bounded(tmp_path):
    specs = [bot("noisy", "noisy_bot.py"), bot("a", "instant_bot.py"), bot("b", "instant_bot.py")]
    result, report = await play(specs, "kwartet", seed=2, log_dir=tmp_path, clock=ClockSpec(move_ms=5000))
    assert result.faults == [] and report.ok
    tails = [r["stderr"] for r in log_records(result.log_path) if "stderr" in r]
    noisy = tails[0]["tail"]
    line = 6001  # noisy_bot writes lines of b"noise " * 1000 + b"\n", then "noisy_bot: done\n"
    written = (8 << 20) // line * line + len("noisy_bot: done\n")
    marker, rest = noisy.split("\n", 1)
    # the marker counts every byte not shown and takes its place within the 64 KiB
    assert marker == f"[... {written - len(rest.encode())} earlier bytes dropped ...]"
    assert len(noisy.encode()) == 65536 and rest.endswith("noisy_bot: done\n")
    assert [t["tail"] for t in tails[1:]] == ["", ""]  # quiet bots: nothing, and no marker


async def test_stderr_tail_says_how_much_was_dropped():
    """Just over the 64 KiB ring: the tail starts with a marker giving the exact count."""
    async with trio.open_nursery() as nursery:
        session = await BotSession.start(bot("noisy", "noisy_bot.py", BOT_NOISE_BYTES="70000"), ClockSpec(), nursery)
        await session.close()  # the flood came before hello; closing drains stderr to its end
    written = 70000 // 6001 * 6001 + len("noisy_bot: done\n")
    tail = session.stderr_tail()
    marker, rest = tail.split("\n", 1)
    assert marker == f"[... {written - len(rest)} earlier bytes dropped ...]"
    assert len(tail) == STDERR_TAIL and rest.endswith("noisy_bot: done\n")


async def test_stderr_tail_never_starts_inside_a_utf8_character():
    # 4-byte characters: the cut after the marker lands inside one unless it is moved
    flood = "import sys; sys.stderr.write('\U0001f0a1' * 20000 + 'end'); sys.stderr.flush(); sys.exit(4)"
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotCrashed) as info:
            await BotSession.start(BotSpec("cards", [sys.executable, "-c", flood]), ClockSpec(), nursery)
    tail = info.value.session.stderr_tail()
    marker, rest = tail.split("\n", 1)
    assert "\ufffd" not in rest and rest.endswith("end") and set(rest[:-3]) == {"\U0001f0a1"}
    assert marker == f"[... {20000 * 4 + 3 - len(rest.encode())} earlier bytes dropped ...]"
    assert len(tail.encode()) <= STDERR_TAIL


async def test_short_stderr_tail_has_no_marker():
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotCrashed) as info:
            await BotSession.start(BotSpec("sh", "echo oops >&2; exit 5"), ClockSpec(), nursery)
    assert info.value.session.stderr_tail() == "oops\n"


async def test_directory_as_command_is_named_as_a_directory(tmp_path):
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotStartError) as info:
            await BotSession.start(BotSpec("dir", [str(tmp_path)]), ClockSpec(), nursery)
    text = str(info.value)
    assert f"{str(tmp_path)!r} is a directory, not a program" in text and "chmod" not in text


async def test_script_without_shebang_says_how_to_run_it(tmp_path):
    script = tmp_path / "bot.py"
    script.write_text("print('hi')\n")
    script.chmod(0o755)
    async with trio.open_nursery() as nursery:
        with pytest.raises(BotStartError) as info:
            await BotSession.start(BotSpec("nosheb", [str(script)]), ClockSpec(), nursery)
    text = str(info.value)
    assert f"{str(script)!r} is not a program the system can run" in text
    assert "#!/usr/bin/env python3" in text and f"python3 {script}" in text and "Errno" not in text


async def test_cpu_clock_and_bank_are_recorded(tmp_path):
    specs = [bot("a", "instant_bot.py"), bot("b", "instant_bot.py", BOT_SEED="4"), bot("c", "instant_bot.py")]
    clock = ClockSpec(move_ms=1000, bank_ms=60000, mode="cpu")
    result, report = await play(specs, "chickens", seed=2, log_dir=tmp_path, clock=clock)
    assert result.faults == [] and report.ok
    assert all(t.count >= 24 for t in result.think_ms)  # 3 rounds of 8 plays, plus takes
    recs = log_records(result.log_path)
    turns = [m for r in recs if r.get("to") == 0 for m in r["out"] if m["type"] == "turn"]
    assert turns[0]["clock"] == {"left_ms": 60000, "move_ms": 1000}
    assert turns[-1]["clock"]["left_ms"] <= 60000
    assert recs[0]["clock"]["mode"] == "cpu" and recs[0]["clock"]["wall_ceiling_ms"] == 3000


async def test_cpu_clock_times_out_a_busy_bot(tmp_path):
    busy = BotSpec("busy", [sys.executable, "-c", _BUSY])
    clock = ClockSpec(move_ms=200, mode="cpu", wall_ceiling_ms=5000)
    result, _ = await play(
        [busy, bot("a", "instant_bot.py"), bot("b", "instant_bot.py")], "kwartet", seed=1, log_dir=tmp_path, clock=clock
    )
    assert result.faults[0].fault == "timeout" and "CPU time limit of 200 ms" in result.faults[0].detail


_BUSY = """
import sys, json
for raw in sys.stdin:
    m = json.loads(raw)
    if m["type"] == "hello":
        print(json.dumps({"type": "hello", "protocol": 1, "name": "busy"}), flush=True)
    elif m["type"] == "turn":
        while True:
            pass
"""


async def test_one_process_plays_many_games_and_survives_a_faulted_game(tmp_path):
    """Session mode: the same processes play game after game; an illegal move
    forfeits one game but the session goes on (only timeouts/crashes end it)."""
    clock = ClockSpec(move_ms=3000)
    specs = [bot("bad", "illegal_bot.py", BOT_FAULT_AT="3"), bot("a", "instant_bot.py"), bot("b", "instant_bot.py")]
    rules = get_variant("authors")
    async with trio.open_nursery() as nursery:
        sessions = await start_bots(specs, clock, nursery)
        pids = [s.pid for s in sessions]
        try:
            results = []
            for g in range(4):
                results.append(await play_game(GameSpec(f"g-{g}", rules, 3, seed=g, clock=clock), sessions, tmp_path))
            assert [s.pid for s in sessions] == pids and all(s.alive for s in sessions)
            assert [r.forfeits for r in results].count([0]) == 1
            assert all(r.reason == "complete" for r in results)
        finally:
            for s in sessions:
                await s.close()
    assert all(live_in_group(p) == [] for p in pids)


async def test_every_game_of_a_session_logs_the_same_protection(tmp_path):
    """A session's sandbox description is made once and each game's header gets its own copy:
    what one header does with it cannot change the next game's."""
    clock = ClockSpec(move_ms=5000, startup_ms=20000, grace_ms=200)
    async with trio.open_nursery() as nursery:
        sessions = [await BotSession.start(bot(f"b{i}", "instant_bot.py"), clock, nursery) for i in range(3)]
        try:
            first = sessions[0].sandbox_info()
            first["sandbox"] = "changed by a reader"
            for seed in (1, 2):
                await play_game(
                    GameSpec(f"g{seed}", get_variant("kwartet"), 3, seed=seed, clock=clock), sessions, tmp_path
                )
        finally:
            for s in sessions:
                await s.close()
        nursery.cancel_scope.cancel()
    headers = [log_records(p)[0]["seats"][0]["sandbox"] for p in sorted(tmp_path.glob("g*.jsonl*"))]
    assert len(headers) == 2 and headers[0] == headers[1] == sessions[0].sandbox_info()
    assert headers[0]["sandbox"] != "changed by a reader"


async def test_a_never_started_bot_plays_its_seat_and_its_header_says_unknown(tmp_path):
    """A bot given up before the night (no process) is seated like a crash: its game runs and logs
    a header for it (this once raised AttributeError on a cluster and in the viewer's tests)."""
    clock = ClockSpec(move_ms=5000, startup_ms=20000, grace_ms=200)
    async with trio.open_nursery() as nursery:
        live = [await BotSession.start(bot(f"b{i}", "instant_bot.py"), clock, nursery) for i in range(2)]
        ghost = BotSession.never_started(bot("ghost", "instant_bot.py"), "its build failed")
        try:
            await play_game(GameSpec("g1", get_variant("kwartet"), 3, seed=1, clock=clock), [*live, ghost], tmp_path)
        finally:
            for s in live:
                await s.close()
        nursery.cancel_scope.cancel()
    seats = log_records(next(tmp_path.glob("g1.jsonl*")))[0]["seats"]
    assert seats[2]["sandbox"] == {"sandbox": "unknown"} == ghost.sandbox_info()


async def test_two_closes_at_once_say_bye_once_and_both_return_after_the_reap():
    """A session closed by two tasks at once (the pool's background close at a cut and a stand-in
    for a bot that cannot restart): the second waits for the first, so neither returns before the
    process is reaped, and the bot is told ``bye`` once."""
    clock = ClockSpec(move_ms=5000, startup_ms=20000, grace_ms=2000)
    reaped: list[bool] = []
    async with trio.open_nursery() as nursery:
        session = await BotSession.start(bot("b", "instant_bot.py"), clock, nursery)
        sent: list[bytes] = []
        real_send = session.send_bytes

        async def send_bytes(data: bytes) -> None:
            sent.append(data)
            await real_send(data)

        session.send_bytes = send_bytes  # type: ignore[method-assign]

        async def close() -> None:
            await session.close()
            reaped.append(session.process.returncode is not None)

        async with trio.open_nursery() as closers:
            closers.start_soon(close)
            closers.start_soon(close)
        nursery.cancel_scope.cancel()
    assert reaped == [True, True] and session.closed
    assert sent.count(b'{"type":"bye"}\n') == 1
