"""A secret night does not grow: bots added to it would play deals already played (their
hands in the night's logs and report, and once it is complete its seed revealed), so the
growth is refused with the reason; removing them resumes the night, which still verifies."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from .conftest import REPO, referee

INSTANT = REPO / "tests" / "bots" / "instant_bot.py"


def _config(path: Path, bots: str, seed: str = '"secret"') -> Path:
    body = f'seed = {seed}\nout = "out"\nconcurrency = 1\n'
    body += "".join(f'[[bots]]\nname = "{b}"\ncommand = ["{{python}}", "{INSTANT}"]\n' for b in bots)
    path.write_text(body + '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n')
    return path


def _meta(out: Path) -> dict[str, str]:
    with sqlite3.connect(out / "ledger.sqlite") as db:
        return dict(db.execute("select key, value from meta"))


def test_bots_added_to_a_secret_night_are_refused_and_the_night_still_verifies(tmp_path: Path) -> None:
    cfg = _config(tmp_path / "night.toml", "abc")
    assert referee("run", str(cfg), "--quiet").returncode == 0
    out = tmp_path / "out"
    seed = _meta(out)["secret_seed"]
    assert json.loads((out / "standings.json").read_text())["seed"] == int(seed)  # complete: revealed
    before = _meta(out)
    _config(cfg, "abcd")
    grown = referee("run", str(cfg), "--quiet")
    lines = [line for line in grown.stderr.strip().splitlines() if line.startswith("error:")]
    assert grown.returncode == 2 and len(lines) == 1 and "Traceback" not in grown.stderr
    assert lines[0].startswith(f"error: {out}: bots added to a secret night (d) are refused: ")
    assert "its seed has been revealed" in lines[0] and seed not in lines[0]
    assert _meta(out) == before  # nothing stored: not the config, not a new epoch
    with sqlite3.connect(out / "ledger.sqlite") as db:
        assert db.execute("select count(*) from games").fetchone()[0] == 3
    _config(cfg, "abc")
    assert referee("run", str(cfg), "--quiet").returncode == 0
    check = referee("verify", str(out))
    assert check.returncode == 0, check.stdout + check.stderr
    # a public night grows as before (its seed is in its config anyway)
    pub = _config(tmp_path / "public.toml", "abc", seed="4")
    pub.write_text(pub.read_text().replace('out = "out"', 'out = "pub"'))
    assert referee("run", str(pub), "--quiet").returncode == 0
    pub.write_text(
        pub.read_text().replace(
            "[[variants]]", f'[[bots]]\nname = "d"\ncommand = ["{{python}}", "{INSTANT}"]\n[[variants]]'
        )
    )
    assert referee("run", str(pub), "--quiet").returncode == 0
    with sqlite3.connect(tmp_path / "pub" / "ledger.sqlite") as db:
        assert db.execute("select count(*) from games").fetchone()[0] == 4 * 3
