"""A duel plays each deal pair twice with A and B swapped; no bot process may play both games
of a pair (it would know its opponent's hand). The rememberer says on stderr whenever it meets a
deal it has a record of, and every game log copies its stderr: none may say so."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from referee.cli import main
from referee.runtime.gamelog import read_log_bytes

from .conftest import REPO, processes_with

REMEMBERER = REPO / "tests" / "hostile" / "bots" / "rememberer.py"
TRACKER = REPO / "sample_bots" / "tracker_bot.py"


def test_no_duel_process_meets_a_deal_twice(tmp_path: Path, capsys) -> None:
    tag = f"duel-memory-{tmp_path.name}"
    bot = f"{sys.executable} {REMEMBERER} {TRACKER}"
    logs = tmp_path / "logs"
    args = ["duel", "kwartet", "--bot", f"remembers={bot} {tag}", "--bot", f"honest={bot} --honest {tag}"]
    args += ["--field", f"f={bot} --honest {tag}", "--games", "24", "--seed", "5", "--move-ms", "3000"]
    assert main([*args, "-j", "2", "--log", str(logs), "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["games"] == 24
    tails = []
    for log in sorted(logs.iterdir()):
        for line in read_log_bytes(log.read_bytes()).splitlines():
            rec = json.loads(line)
            if "stderr" in rec and rec["stderr"]["bot"] == "remembers":
                tails.append(rec["stderr"]["tail"])
    assert len(tails) == 24 and not any("rememberer: recognised" in t for t in tails)
    assert not processes_with(tag)
