"""check-bot's games look like a league's: the same game-id shape (a real check-bot run)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from referee.cli import main
from referee.league import schedule as sched
from referee.league.config import load_config

ROOT = Path(__file__).resolve().parents[2]
#: a league game id: variant, table size, table, deal, rotation
LEAGUE_ID = re.compile(r"^[a-z0-9-]+-\d+p-t\d{4}-d\d{3}-r\d+$")


def test_check_bot_game_ids_are_shaped_like_league_ids(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    bot = [sys.executable, str(ROOT / "sample_bots" / "random_bot.py")]
    assert main(["check-bot", "--log-dir", str(logs), "--", *bot]) == 0
    ids = sorted(p.name.split(".")[0] for p in logs.iterdir() if ".jsonl" in p.name)
    assert len(ids) >= 4 and len(set(ids)) == len(ids)  # session, self-play and per-game games
    assert all(LEAGUE_ID.match(i) and "checkbot" not in i for i in ids), ids
    # and a league's own ids have the same shape
    cfg = tmp_path / "league.toml"
    cfg.write_text(
        'seed = 1\nout = "out"\n'
        + "".join(f'[[bots]]\nname = "{n}"\ncommand = ["x"]\n' for n in "abcd")
        + '[[variants]]\nname = "kwartet"\nsizes = 4\ndeals = 1\n'
    )
    assert all(LEAGUE_ID.match(g.game_id) for g in sched.games(load_config(cfg)))
