"""The zoo in real leagues (``referee run`` on configs in a tmp dir; the zoo's nine nights side by
side, each through ``referee.cli.main`` in its own thread, tests/parallel_cli.py), and the
referee's own crash safety: SIGKILL of ``python -m referee run`` at random
moments, resumed until done, must give exactly the planned ledger, and no bot
process may outlive a killed referee."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from referee.cli import main
from referee.league import schedule as sched
from referee.league.config import load_config
from referee.league.ledger import Ledger
from referee.runtime.gamelog import read_log_bytes
from tests.parallel_cli import Run, cli_runs

from .conftest import PYTHON, REPO, ZOO, assert_no_survivors, new_tag

# the faults each hostile bot must show over its league (8 games: 2 deals in 4 rotations,
# session mode: a process plays the 2 deals of one rotation; a bot that crashed or timed
# out is restarted for the next game; a malformed or illegal one keeps its process: the
# illegal bot's answers to the referee's error messages then arrive as stale lines in its
# next game)
EXPECTED = {
    "silent": {"timeout"},
    "sleepy": {"timeout", "stale"},
    "crasher": {"crash"},
    "spew": {"malformed", "timeout"},
    "giantline": {"malformed"},
    "badutf8": {"malformed"},
    "nonjson": {"malformed"},
    "deepjson": {"malformed"},
    "wrongshape": {"malformed"},
    "illegal": {"illegal", "stale"},
    "staleid": {"stale"},
    "stderrflood": set(),
    "memhog": {"crash"},
    "forker": {"crash"},
    "closer": {"crash"},
    "byeignorer": set(),
    "lingerer": set(),
}
LEAGUES = [
    ("silent", "crasher"),
    ("sleepy", "spew"),
    ("giantline", "badutf8"),
    ("nonjson", "wrongshape"),
    ("illegal", "deepjson"),
    ("staleid", "stderrflood"),
    ("memhog", "forker"),
    ("closer", "byeignorer"),
    ("lingerer", "crasher"),
]
ARGS = {"crasher": ["0"], "stderrflood": ["300"]}


def bot_toml(name: str, script: str, tag: str, extra: list[str] = (), limits: str = "") -> str:
    args = ", ".join(f'"{a}"' for a in [str(ZOO / f"{script}.py"), tag, *extra])
    return f'[[bots]]\nname = "{name}"\ncommand = ["{{python}}", {args}]\n' + (f"limits = {limits}\n" if limits else "")


def _zoo_config(pair: tuple[str, str], folder: Path) -> tuple[Path, dict[str, str]]:
    """The league of ``pair`` and two legal bots in ``folder``: its config and the bots' tags."""
    tags = {name: new_tag(name) for name in (*pair, "legal1", "legal2")}
    # a short clock only where a bot of the pair must time out; elsewhere a generous one, so
    # that a loaded machine cannot add a timeout (a giant line takes long to read under load)
    move_ms = 300 if any("timeout" in EXPECTED[name] for name in pair) else 2000
    body = f'seed = 7\nconcurrency = 1\nout = "out"\n[clock]\nmove_ms = {move_ms}\nstartup_ms = 8000\n'
    body += bot_toml("legal1", "legal", tags["legal1"]) + bot_toml("legal2", "legal", tags["legal2"])
    for name in pair:
        body += bot_toml(name, name, tags[name], ARGS.get(name, []), "{ memory_mb = 160 }" if name == "memhog" else "")
    body += '[[variants]]\nname = "kwartet"\nsizes = 4\ndeals = 2\n'
    cfg = folder / "league.toml"
    cfg.write_text(body)
    return cfg, tags


def _warm_up_held_fds() -> None:
    """Open what a referee process opens once and keeps for its life (not a leak): the lifeline
    pipe, and as root the lock of a block of bot uids (without it, the zoo's first night in a fresh
    process looked like a leak of one fd: /run/referee-uids/block-N)."""
    from referee.runtime.sandbox import lifeline_fd
    from referee.runtime.sandbox.uids import allocate_uid, release_uid

    lifeline_fd()
    if os.geteuid() == 0:
        release_uid(*allocate_uid())


@dataclass
class ZooNights:
    """The zoo's leagues, played side by side (tests/parallel_cli.py): by pair, the config, the bots'
    tags and the run; and this process's open file descriptors before and after them all."""

    nights: dict[tuple[str, str], tuple[Path, dict[str, str], Run]]
    fds_before: int
    fds_after: int


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> ZooNights:
    configs = {pair: _zoo_config(pair, tmp_path_factory.mktemp("zoo")) for pair in LEAGUES}
    _warm_up_held_fds()
    fds_before = len(os.listdir("/proc/self/fd"))
    runs = cli_runs(("run", str(cfg), "--quiet") for cfg, _ in configs.values())
    fds_after = len(os.listdir("/proc/self/fd"))
    nights = {pair: (cfg, tags, runs["run", str(cfg), "--quiet"]) for pair, (cfg, tags) in configs.items()}
    return ZooNights(nights, fds_before, fds_after)


@pytest.mark.xdist_group("zoo-leagues")
@pytest.mark.parametrize("pair", LEAGUES, ids=["+".join(p) for p in LEAGUES])
def test_zoo_in_a_league(pair: tuple[str, str], zoo: ZooNights) -> None:
    cfg, tags, run = zoo.nights[pair]
    assert run.status == 0, run.err
    out = cfg.parent / "out"
    league = load_config(cfg)
    planned = sorted(g.game_id for g in sched.games(league))
    with Ledger.in_dir(out, create=False) as ledger:
        rows = list(ledger.rows())
    assert sorted(r.game_id for r in rows) == planned
    seen: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        assert row.reason == "complete", row.detail
        for f in row.faults:
            seen[row.bots[f["seat"]]].add(f["fault"])
        assert abs(sum(row.win_shares) - 1) < 1e-9 or row.forfeits, row
        assert main(["replay", str(out / row.log_path)]) == 0
    assert not seen["legal1"] and not seen["legal2"], dict(seen)
    for name in pair:
        assert seen[name] == EXPECTED[name], (name, dict(seen))
    for tag in tags.values():
        trio.run(assert_no_survivors, tag)


@pytest.mark.xdist_group("zoo-leagues")
def test_the_zoo_leagues_leak_no_file_descriptor(zoo: ZooNights) -> None:
    """Nine nights of hostile bots in this process: every fd they opened is closed again."""
    leaked = zoo.fds_after - zoo.fds_before
    assert leaked <= 0, f"the referee leaked {leaked} file descriptors over the zoo's nights"


def test_bot_that_never_says_hello_forfeits_and_the_league_goes_on(tmp_path: Path, capsys) -> None:
    """With ``broken_bot = "forfeit"`` (competition hosts), a bot whose process starts
    but exits before hello is a broken entry, not a broken config: the night finishes,
    the fallback plays its seats, every one of its games records a crash fault with
    the real reason, and it is not retried. (The default, "stop", refuses to start
    the night: tests/league/test_audit_fixes.py.)"""
    tag = new_tag("nohello")
    body = (
        'out = "out"\n[faults]\nbroken_bot = "forfeit"\n'
        + bot_toml("legal1", "legal", new_tag("l"))
        + bot_toml("legal2", "legal", new_tag("l"))
        + bot_toml("nohello", "nohello", tag)
        + '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 2\n'
    )
    cfg = tmp_path / "league.toml"
    cfg.write_text(body)
    assert main(["run", str(cfg), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: bot 'nohello'") == 1 and "before answering hello" in err and "Traceback" not in err
    with Ledger.in_dir(tmp_path / "out", create=False) as ledger:
        rows = list(ledger.rows())
    assert len(rows) == 6
    for row in rows:
        seat = row.bots.index("nohello")
        assert row.forfeits == [seat] and row.win_shares[seat] == 0.0
        (fault,) = row.faults
        assert fault["fault"] == "crash" and "before answering hello" in fault["detail"]
    trio.run(assert_no_survivors, tag)


def test_a_missing_bot_command_still_stops_the_league_with_a_clear_error(tmp_path: Path, capsys) -> None:
    body = (
        'out = "out"\n'
        + bot_toml("legal1", "legal", new_tag("l"))
        + bot_toml("legal2", "legal", new_tag("l"))
        + '[[bots]]\nname = "typo"\ncommand = ["./no-such-bot"]\n[[variants]]\nname = "kwartet"\nsizes = 3\n'
    )
    cfg = tmp_path / "league.toml"
    cfg.write_text(body)
    assert main(["run", str(cfg), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "bot 'typo'" in err and "not found" in err and "Traceback" not in err


def test_bot_text_is_escaped_in_the_html_report(tmp_path: Path) -> None:
    """A bot's own words (hello name/version, stderr, an illegal card name) reach
    the fault details; the HTML report must show them as text, not markup."""
    body = 'seed = 2\nout = "out"\n[clock]\nmove_ms = 300\n'
    body += "".join(
        bot_toml(n, s, new_tag(n)) for n, s in [("legal1", "legal"), ("legal2", "legal"), ("markup", "markup")]
    )
    body += '[[variants]]\nname = "kwartet"\nsizes = 3\n'
    cfg = tmp_path / "league.toml"
    cfg.write_text(body)
    assert main(["run", str(cfg), "--quiet"]) == 0
    with Ledger.in_dir(tmp_path / "out", create=False) as ledger:
        faults = [f for r in ledger.rows() for f in r.faults]
    assert faults and all(f["fault"] == "illegal" for f in faults)
    assert any("<script>" in f["detail"] for f in faults), "the detail should quote the bot's card"
    report = (tmp_path / "out" / "report.html").read_text()
    assert "<script>alert" not in report and "<img src=x" not in report
    assert "&lt;script&gt;" in report


def test_league_runs_bots_as_another_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """``[limits] user = "nobody"`` flows from the config to the bot processes;
    where that user cannot reach the temporary folders, the league refuses to
    start and says what to change. (Not root: the refusal names root.)"""
    import json

    monkeypatch.setattr(tempfile, "tempdir", "/tmp")
    body = 'seed = 4\nout = "out"\n[limits]\nuser = "nobody"\n'
    for name, script in [("l1", "legal"), ("l2", "legal"), ("who", "introspect")]:
        body += f'[[bots]]\nname = "{name}"\ncommand = ["/usr/bin/python3", "{ZOO / (script + ".py")}", "{new_tag(name)}"]\n'  # noqa: E501
    body += '[[variants]]\nname = "kwartet"\nsizes = 3\n'
    cfg = tmp_path / "league.toml"
    cfg.write_text(body)
    if os.geteuid() != 0:
        assert main(["run", str(cfg), "--quiet"]) == 2
        assert "needs the referee to run as root" in capsys.readouterr().err
        return
    if os.stat("/tmp").st_mode & 0o001 == 0:  # a private /tmp (as on the test machine): refused up front
        assert main(["run", str(cfg), "--quiet"]) == 2
        assert "set TMPDIR" in capsys.readouterr().err
    monkeypatch.setattr(tempfile, "tempdir", "/var/tmp")
    assert main(["run", str(cfg), "--quiet"]) == 0
    with Ledger.in_dir(tmp_path / "out", create=False) as ledger:
        rows = list(ledger.rows())
    assert rows and all(not r.faults for r in rows)
    header = json.loads(read_log_bytes((tmp_path / "out" / rows[0].log_path).read_bytes()).splitlines()[0])
    hello = next(s["hello"] for s in header["seats"] if s["bot"] == "who")
    import pwd

    assert json.loads(hello["version"])["uid"] == pwd.getpwnam("nobody").pw_uid


def _ledger_ids(out: Path) -> list[str]:
    if not (out / "ledger.sqlite").exists():
        return []
    with Ledger.in_dir(out, create=False) as ledger:
        return [r.game_id for r in ledger.rows()]


def test_referee_sigkill_at_random_moments_then_resume(tmp_path: Path) -> None:
    """Kill ``referee run`` with SIGKILL five times at random moments (at start-up,
    or after a random number of finished games plus a random few milliseconds,
    i.e. mid-game, mid-start or mid-shutdown of bots that ignore EOF and fork
    lingering children), resume each time; the final ledger is exactly the
    plan, and after every kill no bot process survives the watchers' clean-up."""
    rng = random.Random(20261130)
    tag = new_tag("crashsafe")
    body = 'seed = 3\nconcurrency = 2\nout = "out"\n[clock]\nmove_ms = 500\n'
    names = [f"{tag}-{n}" for n in "abcd"]  # unique names: unique temporary folder names
    body += bot_toml(names[0], "legal", tag) + bot_toml(names[1], "legal", tag)
    body += bot_toml(names[2], "lingerer", tag) + bot_toml(names[3], "byeignorer", tag)
    body += '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 4\n'
    cfg = tmp_path / "league.toml"
    cfg.write_text(body)
    planned = sorted(g.game_id for g in sched.games(load_config(cfg)))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [PYTHON, "-m", "referee", "run", str(cfg), "--progress-every", "0"]
    kills = 0
    while kills < 5:
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout is not None
        if rng.random() < 0.3:
            time.sleep(rng.uniform(0.0, 0.4))  # during start-up / the first games
        else:
            wanted, seen = rng.randint(1, 6), 0
            for line in proc.stdout:  # one progress line per finished game
                seen += line.startswith("[")
                if seen >= wanted:
                    break
            time.sleep(rng.uniform(0.0, 0.05))
        if proc.poll() is not None:
            break  # finished before the kill: fine, the loop ends
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        kills += 1
        trio.run(assert_no_survivors, tag, 2.0)  # the watchers clean up within the grace time
        ids = _ledger_ids(out)
        assert len(ids) == len(set(ids)) and set(ids) <= set(planned)
    assert 0 < len(ids) < len(planned), "the kills should fall in the middle of the league"
    done = subprocess.run([*command[:-2], "--quiet"], env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    print(f"referee killed {kills} times; {len(planned)} games planned")
    assert kills >= 3, "the league finished too fast to be killed several times; make it bigger"
    ids = _ledger_ids(out)
    assert sorted(ids) == planned, "the ledger must hold exactly the planned games, each once"
    logs = sorted(p.name for p in (out / "games").iterdir() if p.name.endswith(".jsonl.zst"))
    assert set(f"{g}.jsonl.zst" for g in planned) <= set(logs)
    trio.run(assert_no_survivors, tag)
    deadline = time.monotonic() + 3  # the watchers of the last kill may still be removing folders
    while list(Path(tempfile.gettempdir()).glob(f"referee-bot-{tag}-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    leftovers = list(Path(tempfile.gettempdir()).glob(f"referee-bot-{tag}-*"))
    assert not leftovers, f"temporary folders left behind: {leftovers}"
