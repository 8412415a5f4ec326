"""A bot's stderr budget for the logs is per bot per night, also on ``--workers`` (issue 19): the
night's driver shares each bot's budget out among the units it plays at once
(referee.league.logbudget), so a bot noisy in every unit cannot write N x the budget; what the
logs used is in the ledger (a resumed night starts from it)."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from referee.cli import main
from referee.league import logbudget, runner
from referee.league.logbudget import LogBudgets
from referee.runtime.game import OVER_BUDGET_TAIL
from referee.runtime.gamelog import read_log_bytes

ROOT = Path(__file__).resolve().parents[2]
NOISY = ROOT / "tests" / "bots" / "noisy_bot.py"
INSTANT = ROOT / "tests" / "bots" / "instant_bot.py"
BUDGET = 150_000


def _noisy_tails(out: Path) -> list[int]:
    """The bytes of the noisy bot's stderr in each game log of the night."""
    sizes = []
    for log in sorted((out / "games").glob("*.jsonl*")):
        for line in read_log_bytes(log.read_bytes()).splitlines():
            rec = json.loads(line)
            if "stderr" in rec and rec["stderr"]["bot"] == "noisy":
                sizes.append(len(rec["stderr"]["tail"].encode()))
    return sizes


def test_a_noisy_bot_stays_within_its_night_budget_on_two_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "STDERR_LOG_BUDGET", BUDGET)
    cfg = tmp_path / "night.toml"
    cfg.write_text(
        f'seed = 4\nout = "out"\n[limits]\nsandbox = "none"\n'
        f'[[bots]]\nname = "noisy"\ncommand = ["{sys.executable}", "{NOISY}"]\n'
        'env = { BOT_NOISE_BYTES = "200000" }\n'
        + "".join(f'[[bots]]\nname = "{n}"\ncommand = ["{sys.executable}", "{INSTANT}"]\n' for n in "bc")
        + '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 2\n'
    )
    assert main(["run", str(cfg), "--workers", "2", "--quiet"]) == 0
    out = tmp_path / "out"
    sizes = _noisy_tails(out)
    assert len(sizes) == 6 and max(sizes) > 60_000  # each process wrote 200 kB: a full 64 KiB tail a game
    # two workers played its units at once, yet its logs hold at most the night's budget (+1 KiB a game after)
    assert sum(sizes) <= BUDGET + len(sizes) * (OVER_BUDGET_TAIL + 200), sizes
    with sqlite3.connect(out / "ledger.sqlite") as db:
        (used,) = db.execute("select value from meta where key = ?", (logbudget.META_KEY,)).fetchone()
    assert 0 < json.loads(used)["noisy"] <= BUDGET  # kept for a resumed night


def test_grants_never_exceed_the_budget_between_units_at_once() -> None:
    from referee.league.work import GameDone

    budgets = LogBudgets(["a", "b"], 1000, LogBudgets.read_used('{"a": 400}'), slots=2)
    first, second = budgets.shares([0, 1]), budgets.shares([0, 1])
    assert first == (300, 500) and second == (150, 250)  # the unreserved rest, shared by the slots
    budgets.charge((0, 1), GameDone("g", None, 0.0, stderr_logged=(300, 10)))  # type: ignore[arg-type]
    budgets.unreserve([0, 1], first)  # the first unit ended: what it did not use is free again
    assert budgets.left("a") == 1000 - 700 - 150 and budgets.left("b") == 1000 - 10 - 250
    assert json.loads(budgets.meta_text()) == {"a": 700, "b": 10}
    assert LogBudgets.read_used("not json") == {} and LogBudgets.read_used('{"a": -1}') == {}
