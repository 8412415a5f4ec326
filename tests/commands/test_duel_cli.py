"""`referee duel`: exit statuses, the JSON summary, one `error:` line for bad input, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.cli import main
from tests.league.conftest import processes_with

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
TAG = f"duel-cli-{os.getpid()}"
TRACKER = f"{PY} {ROOT / 'sample_bots' / 'tracker_bot.py'} 1 {TAG}"
RANDOM = f"{PY} {ROOT / 'sample_bots' / 'random_bot.py'} 2 {TAG}"
FIELD = f"{PY} {ROOT / 'sample_bots' / 'random_bot.py'} 3 {TAG}"
FAST = ["--move-ms", "500", "--grace-ms", "100", "--seed", "5"]

SUMMARY_KEYS = {
    "variant",
    "players",
    "seed",
    "match",
    "concurrency",
    "max_games",
    "result",
    "games",
    "pairs",
    "dropped_pairs",
    "wins",
    "draws",
    "losses",
    "stats",
    "bots",
    "wall_s",
    "log_dir",
}


def duel(*args: str) -> list[str]:
    return [
        "duel",
        "kwartet",
        "--bot",
        f"tracker={TRACKER}",
        "--bot",
        f"random={RANDOM}",
        "--field",
        f"f={FIELD}",
        *FAST,
        *args,
    ]


def test_h1_exits_0_with_the_json_summary_on_stdout(capsys) -> None:
    assert main(duel("--sprt", "0,200", "--games", "80", "-j", "2")) == 0
    out, err = capsys.readouterr()
    s = json.loads(out)
    assert set(s) == SUMMARY_KEYS and s["result"] == "H1" and s["stats"]["verdict"] == "H1"
    assert s["players"] == 3 and s["seed"] == 5 and s["max_games"] == 80 and s["games"] <= 80
    assert [(b["role"], b["name"]) for b in s["bots"]] == [("A", "tracker"), ("B", "random"), ("field", "f")]
    st = s["stats"]
    assert st["elo0"] == 0 and st["elo1"] == 200 and st["alpha"] == st["beta"] == 0.05 and st["llr"] >= st["upper"]
    assert len(st["counts"]) == 5 and sum(st["counts"]) == s["pairs"]
    # stderr: the header, the last live line (Elo with its interval, the LLR with its bounds) and the verdict
    assert "duel: A tracker vs B random, field f" in err and "LLR" in err and "Elo +" in err
    assert "H1 accepted after" in err and "Traceback" not in err
    assert not processes_with(TAG)


def test_undecided_after_max_games_exits_3_and_json_file(tmp_path: Path, capsys) -> None:
    target = tmp_path / "summary.json"
    assert main(duel("--sprt", "0,10,0.05,0.05", "--games", "2", "--json", str(target), "-q")) == 3
    out, err = capsys.readouterr()
    assert out == "" and err == ""  # --json: the summary goes to the file; -q: nothing on stderr
    s = json.loads(target.read_text())
    assert s["result"] == "undecided" and s["games"] == 2 and s["stats"]["verdict"] == "continue"
    # without --sprt a duel plays MAX games and exits 0
    assert main(duel("--games", "2", "--json", str(target), "-q")) == 0
    s = json.loads(target.read_text())
    assert s["result"] == "complete" and s["stats"]["llr"] is None and s["stats"]["elo0"] is None


@pytest.mark.parametrize(
    "args,words",
    [
        (["--sprt", "10,0"], "SPRT ELO0 (10) must be below ELO1 (0)"),
        (["--sprt", "5,5"], "SPRT ELO0 (5) must be below ELO1 (5)"),
        (["--sprt", "0,10,0,0.05"], "SPRT ALPHA must be strictly between 0 and 1"),
        (["--sprt", "0,10,0.05,1"], "SPRT BETA must be strictly between 0 and 1"),
        (["--sprt", "0,10,0.6,0.5"], "ALPHA + BETA must be below 1"),
        (["--sprt", "0,x"], "--sprt '0,x': expected ELO0,ELO1"),
        (["--sprt", "0,10,0.05"], "expected ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA"),
        (["--games", "3"], "--games 3: give an even number of at least 2"),
        (["--games", "0"], "--games 0"),
        (["--players", "9"], "--players 9: kwartet is for 3-6 players"),
        (["--players", "3", "--field", "g=x"], "2 --field bots but only 1 field seat"),
        (["--concurrency", "0"], "--concurrency 0"),
        (["--move-ms", "0"], "--move-ms must be a positive number"),
        (["--match", "best:3"], "--match 'best:3'"),
    ],
)
def test_bad_values_are_one_error_line(capsys, args, words) -> None:
    assert main(duel(*args)) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and words in err and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_input_errors_before_any_game(tmp_path: Path, capsys) -> None:
    def error(argv: list[str]) -> str:
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith("error: ") and err.count("\n") == 1, err
        return err

    assert "did you mean 'kwartet'?" in error(["duel", "kwartett", "--bot", "a=x", "--bot", "b=y"])
    assert "exactly two --bot options" in error(["duel", "kwartet", "--bot", f"a={RANDOM}"])
    assert "--bot 'a': expected NAME=COMMAND" in error(["duel", "kwartet", "--bot", "a", "--bot", "b=y"])
    err = error(["duel", "kwartet", "--bot", f"a={RANDOM}", "--bot", "b=/no/such/bot", *FAST])
    assert "--bot B 'b' could not start" in err and "not found" in err
    # a log folder that already holds this duel's logs is refused (nothing is overwritten)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "duel-kwartet-3p-5-00001-1.jsonl").write_text("x")
    assert "already holds logs of a duel" in error(duel("--log", str(logs)))
    assert "is a folder" in error(duel("--json", str(tmp_path)))
    assert not processes_with(TAG)


def test_ctrl_c_stops_prints_the_summary_so_far_and_leaves_no_process(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [PY, "-m", "referee", *duel("--games", "100000", "--log", str(logs))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )
    deadline = time.monotonic() + 60
    while not (logs.is_dir() and len(os.listdir(logs)) >= 3) and time.monotonic() < deadline:
        time.sleep(0.05)  # until the duel is well under way (its third game has begun)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err and err.rstrip().endswith(b"interrupted")
    s = json.loads(out)
    assert s["result"] == "interrupted" and s["games"] >= 2 and s["log_dir"] == str(logs)
    assert not processes_with(TAG)


@pytest.mark.parametrize("value", ["-10,0", "-10,0,0.05,0.05", "-5.5,5", "-.5,0"])
def test_negative_sprt_bounds_parse_with_a_space(value: str) -> None:
    from referee.cli import build_parser
    from referee.league.sprt import parse_sprt

    args = build_parser().parse_args(["duel", "kwartet", "--bot", "a=x", "--bot", "b=y", "--sprt", value])
    assert args.sprt == value
    assert parse_sprt(args.sprt).elo0 < 0


@pytest.mark.parametrize(
    "args,words",
    [
        (["--sprt"], "give ELO0,ELO1 after it, e.g. --sprt 0,10, or --sprt -10,0"),
        (
            ["--sprt", "-10,x"],
            "--sprt '-10,x': expected ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA, e.g. --sprt 0,10, --sprt -10,0",
        ),
    ],
)
def test_a_bad_sprt_value_says_what_to_type(capsys, args: list[str], words: str) -> None:
    try:
        status = main(["duel", "kwartet", "--bot", "a=x", "--bot", "b=y", *args])
    except SystemExit as exc:  # argparse's own errors end with SystemExit(2), as for every command
        status = exc.code  # type: ignore[assignment]
    assert status == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and words in err and err.count("\n") == 1, err


def test_the_docs_example_is_what_the_code_prints() -> None:
    """docs/DUEL.md's example lines: every number follows from its pair counts as the code computes them
    (the lines were printed by the duel the doc shows; its bots are seeded, so it plays the same games)."""
    import re
    from types import SimpleNamespace

    from referee.commands.duel import live_text
    from referee.league.sprt import Sprt, SprtState, estimate, llr
    from referee.rules import get_variant

    doc = (ROOT / "docs" / "DUEL.md").read_text()
    live = next(line for line in doc.splitlines() if line.startswith("kwartet 3p  games "))
    verdict = next(line for line in doc.splitlines() if line.startswith("H1 accepted after "))
    m = re.search(r"pairs (\d+) \[LL (\d+) LD (\d+) DD\+WL (\d+) WD (\d+) WW (\d+)\]  W-D-L (\d+)-(\d+)-(\d+)", live)
    assert m is not None, live
    pairs, *counts = (int(x) for x in m.groups()[:6])
    wins, draws, losses = (int(x) for x in m.groups()[6:])
    assert sum(counts) == pairs and wins + draws + losses == 2 * pairs
    assert "--sprt 0,20 --games 4000 --seed 7" in doc
    state = SprtState(Sprt(0, 20))
    for point, n in enumerate(counts):  # the order of the pairs changes neither the LLR nor the estimate
        state.counts[point] += n
    state.llr = llr(state.counts, Sprt(0, 20))
    state.verdict, state.decided_at = state.test.verdict(state.llr), pairs  # type: ignore[union-attr]
    assert state.verdict == "H1"
    duel = SimpleNamespace(
        spec=SimpleNamespace(rules=get_variant("kwartet"), players=3, max_pairs=2000),
        state=state,
        games=2 * pairs,
        wins=wins,
        draws=draws,
        losses=losses,
        tallies=[SimpleNamespace(fault_count=0), SimpleNamespace(fault_count=0)],
    )
    assert live_text(duel) == live  # type: ignore[arg-type]
    assert f"after {pairs} pairs" in verdict and f"(LLR {state.llr:.2f} >= {state.test.upper:.2f})" in verdict  # type: ignore[union-attr]
    plain = estimate(state.counts)
    assert f"= {plain.score:.4f}, a plain Elo of {plain.elo:+.1f}" in doc.replace("\n", " ")
    assert f"The Elo shown, {state.elo()[0]:+.1f}, is the" in doc.replace("\n", " ")
