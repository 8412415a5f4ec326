"""Secret seeds, `referee verify`, missing-log warnings and damaged ledgers, on small real nights.

One public night and one secret night are played once per module (real bot processes) and copied
for each case; every command runs in-process through ``referee.cli.main``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from referee.cli import main
from referee.errors import UserError
from referee.league import audit
from referee.league.config import load_config
from referee.league.ledger import Ledger
from referee.league.outdir import open_ledger
from referee.league.runner import play
from referee.league.secret import settle_seed, stored_seed

from .conftest import REPO

INSTANT = REPO / "tests" / "bots" / "instant_bot.py"
pytestmark = pytest.mark.xdist_group("secret-audit")


def _config(folder: Path, seed: str = '"secret"', bots: int = 3, deals: int = 2, name: str = "night.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    # plain logs: the tests read and edit them as text (verify reads both forms)
    # reuse = "table": one process per seat for a whole table (session mode starts a fresh set for every
    # rotation of a deal); the seeds, verify and the damage it finds are checked, not how bots are reused
    body = f'seed = {seed}\nout = "out"\nconcurrency = 1\nreuse = "table"\n'
    body += '[clock]\nmove_ms = 2000\n[output]\ncompress = "none"\n'
    for b in "abcd"[:bots]:
        body += f'[[bots]]\nname = "{b}"\ncommand = ["{{python}}", "{INSTANT}"]\n'
    body += f'[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = {deals}\n'
    p = folder / name
    p.write_text(body)
    return p


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    got = capsys.readouterr()
    return status, got.out, got.err


def _seed_forms(seed: int) -> list[str]:
    return [str(seed), f"{seed:x}", f"{seed:X}", f"{seed:#x}"]


def _files_text(out: Path) -> str:
    """Everything in OUT a reader may see, the ledger aside (logs decompressed are plain here)."""
    return "\n".join(
        p.read_text(errors="replace")
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.startswith("ledger.sqlite")
    )


class _Stop:
    """A progress hook that interrupts the night (as Ctrl-C would) after ``after`` games."""

    def __init__(self, after: int) -> None:
        self.after = after

    def __call__(self, stats: object, tally: object) -> None:
        if getattr(stats, "played", 0) >= self.after:
            raise KeyboardInterrupt


@pytest.fixture(scope="module")
def public_night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished public night: 6 games (3 bots, kwartet 3p, 2 deals)."""
    cfg = _config(tmp_path_factory.mktemp("public"), seed="5")
    assert main(["run", str(cfg), "--quiet"]) == 0
    return cfg.parent / "out"


@pytest.fixture
def night(public_night: Path, tmp_path: Path) -> Path:
    """A copy of the public night to damage."""
    dst = tmp_path / "out"
    shutil.copytree(public_night, dst)
    return dst


# --------------------------------------------------------------------------------------- secret seeds


def test_secret_seed_is_hidden_until_the_night_is_complete(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _config(tmp_path, deals=2)
    out = tmp_path / "out"
    status, plan_out, plan_err = _cli(capsys, "plan", cfg)
    assert status == 0 and "seed secret" in plan_out and "6" in plan_out

    league = load_config(cfg)
    ledger = open_ledger(league)
    league = settle_seed(league, ledger)
    with pytest.raises(KeyboardInterrupt):  # the night stops after 2 of its 6 games
        play(league, ledger, hook=_Stop(2))
    ledger.close()
    with Ledger.in_dir(out, create=False) as ledger:
        seed = stored_seed(ledger)
        assert seed is not None and seed == league.seed and seed < 2**63
        assert 2 <= ledger.count() < 6
        assert "secret" in (ledger.get_meta("config") or "") and str(seed) not in (ledger.get_meta("config") or "")
    assert stat.S_IMODE((out / "ledger.sqlite").stat().st_mode) == 0o600
    assert stat.S_IMODE(out.stat().st_mode) == 0o700 and stat.S_IMODE((out / "games").stat().st_mode) == 0o700

    said = plan_out + plan_err
    for args in (("standings", out), ("standings", out, "--json"), ("report", out), ("verify", out), ("plan", cfg)):
        status, o, e = _cli(capsys, *args)
        assert status == 0, e
        said += o + e
    st = json.loads((out / "standings.json").read_text())
    assert st["seed"] == "secret"
    assert "secret (shown once every planned game is played)" in (out / "report.html").read_text()
    seen = said + _files_text(out)
    for form in _seed_forms(seed):
        assert form not in seen, form

    # resume: the same seed, the same schedule; complete now, so the seed is shown
    status, o, e = _cli(capsys, "run", cfg, "--progress-every", "60")
    assert status == 0, e
    assert f"master seed {seed}" in o
    assert json.loads((out / "standings.json").read_text())["seed"] == seed
    assert str(seed) in (out / "report.html").read_text() and str(seed) in (out / "standings.md").read_text()
    status, o, _ = _cli(capsys, "verify", out)  # every row's seed is the schedule's of the stored seed
    assert status == 0 and "verified: all 6 games" in o
    first = min((out / "games").glob("*.jsonl*"))
    assert _cli(capsys, "replay", first, "-q")[0] == 0
    for p in (out / "games").glob("*.jsonl*"):  # a log holds only its own (derived) seed
        assert str(seed) not in p.read_text()


def test_secret_shards_need_one_seed_file_and_merge_checks_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = _config(tmp_path, bots=4, deals=1)  # 4 tables, 12 games; each shard 2 tables
    status, _, err = _cli(capsys, "run", cfg, "--shard", "1/2", "--out", tmp_path / "s1", "-q")
    assert status == 2 and err.count("\n") == 1 and "--seed-file" in err
    seed_file = tmp_path / "seed.txt"
    seed_file.write_text("1234567890123456789\n")
    other = tmp_path / "other.txt"
    other.write_text("987654321\n")
    said = ""
    for k, folder, f in ((1, "s1", seed_file), (2, "s2", seed_file), (2, "s2x", other)):
        status, o, e = _cli(capsys, "run", cfg, "--shard", f"{k}/2", "--out", tmp_path / folder, "--seed-file", f)
        assert status == 0, e
        said += o + e
    status, _, err = _cli(capsys, "run", cfg, "--shard", "1/2", "--out", tmp_path / "s1", "--seed-file", other)
    assert status == 2 and "not the seed this night was started with" in err
    status, o, e = _cli(capsys, "standings", tmp_path / "s1")
    said += o + e
    status, o, e = _cli(capsys, "merge", tmp_path / "s1", "--into", tmp_path / "half")  # incomplete: hidden
    assert status == 0, e
    said += o + e + _files_text(tmp_path / "half") + _files_text(tmp_path / "s1")
    for form in _seed_forms(1234567890123456789):
        assert form not in said
    status, _, err = _cli(capsys, "merge", tmp_path / "s1", tmp_path / "s2x", "--into", tmp_path / "bad")
    assert status == 2 and "different secret seeds" in err and "987654321" not in err
    status, o, e = _cli(capsys, "merge", tmp_path / "s1", tmp_path / "s2", "--into", tmp_path / "all", "-q")
    assert status == 0 and "complete" in o, e
    assert json.loads((tmp_path / "all" / "standings.json").read_text())["seed"] == 1234567890123456789
    assert _cli(capsys, "verify", tmp_path / "all")[0] == 0


def test_seed_file_refused_for_a_public_night(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _config(tmp_path, seed="3")
    f = tmp_path / "seed.txt"
    f.write_text("12\n")
    status, _, err = _cli(capsys, "run", cfg, "--seed-file", f)
    assert status == 2 and err.startswith("error: --seed-file is for a secret night")
    f.write_text("not a number\n")
    status, _, err = _cli(capsys, "run", _config(tmp_path / "s"), "--seed-file", f)
    assert status == 2 and "does not hold a seed" in err and "not a number" not in err


# --------------------------------------------------------------------------------------- verify


def _first_log(out: Path) -> Path:
    return min((out / "games").glob("*.jsonl*"))


def _edit_footer_score(out: Path) -> None:
    p = _first_log(out)
    lines = p.read_text().splitlines()
    rec = json.loads(lines[-1])
    rec["footer"]["scores"][0] += 1
    lines[-1] = json.dumps(rec)
    p.write_text("\n".join(lines) + "\n")


def _sql(out: Path, statement: str) -> None:
    db = sqlite3.connect(out / "ledger.sqlite")
    with db:
        db.execute(statement)
    db.close()


def _first_id(out: Path) -> str:
    return _first_log(out).name.split(".jsonl")[0]


def _forge_viewer_page(out: Path) -> None:
    page = out / "games" / f"{_first_id(out)}.frames.js"
    text = page.read_text(encoding="utf-8")
    prefix = "window.__referee_game_data = "
    data = json.loads(text[len(prefix) :].rstrip().removesuffix(";"))
    assert data["version"] == 2  # a page made as the game was played: its events
    data["events"][2] = ["R", 0, "illegal", "a step that never happened", 0]
    page.write_text(prefix + json.dumps(data) + ";\n", encoding="utf-8")


CASES = {
    "missing log": lambda out: _first_log(out).unlink(),
    "viewer differs from its log": _forge_viewer_page,
    "altered log": _edit_footer_score,
    "truncated log": lambda out: _first_log(out).write_bytes(_first_log(out).read_bytes()[:3000]),
    "row differs from its log": lambda out: _sql(
        out, f"UPDATE games SET scores = '[9.0, 0.0, 0.0]' WHERE game_id = '{_first_id(out)}'"
    ),
    "row with another seat": lambda out: _sql(
        out, f'UPDATE games SET bots = \'["c", "b", "a"]\' WHERE game_id = \'{_first_id(out)}\''
    ),
    "row not in the schedule": lambda out: _sql(
        out, f"UPDATE games SET seed = '12' WHERE game_id = '{_first_id(out)}'"
    ),
    "log without a row": lambda out: shutil.copy(
        _first_log(out), out / "games" / ("stray-game" + _first_log(out).name[_first_log(out).name.index(".jsonl") :])
    ),
    "damaged row": lambda out: _sql(out, f"UPDATE games SET ranks = 'oops' WHERE game_id = '{_first_id(out)}'"),
}
KIND = {"truncated log": "altered log", "row with another seat": "row not in the schedule"}


def test_verify_passes_a_good_night(night: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _cli(capsys, "verify", night)
    assert status == 0 and out.startswith("verified: all 6 games") and "games/s" in out


@pytest.mark.parametrize("case", sorted(CASES))
def test_verify_finds_each_damage(case: str, night: Path, capsys: pytest.CaptureFixture[str]) -> None:
    CASES[case](night)
    status, out, err = _cli(capsys, "verify", night)
    assert status == 1, err
    kind = KIND.get(case, case)
    problems = [line for line in out.splitlines() if not line.startswith("FAILED")]
    assert len(problems) == 1 and problems[0].startswith(f"{kind}: "), out
    assert out.splitlines()[-1].startswith("FAILED: 1 problem (1 ")


def test_verify_in_worker_processes_and_as_json(
    night: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit, "PARALLEL_FROM", 1)
    _edit_footer_score(night)
    status, out, _ = _cli(capsys, "verify", night, "-j", "2", "--json")
    data = json.loads(out)
    assert status == 1 and data["verified"] == 5 and data["counts"]["altered log"] == 1


def test_verify_refuses_what_is_not_a_night(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _cli(capsys, "verify", tmp_path)
    assert status == 2 and err.startswith("error: ") and err.count("\n") == 1


# --------------------------------------------------------------------------------------- missing logs


def test_run_standings_and_report_warn_about_missing_logs(
    night: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = sorted((night / "games").glob("*.jsonl*"))
    for p in logs[:2]:
        p.unlink()
    cfg = _config(tmp_path / "cfg", seed="5")
    for args in (("standings", night), ("report", night), ("run", cfg, "--out", night, "-q")):
        status, _, err = _cli(capsys, *args)
        assert status == 0, err
        warnings = [line for line in err.splitlines() if line.startswith("warning:")]
        assert len(warnings) == 1, err
        assert "2 game logs" in warnings[0] and logs[0].name.split(".jsonl")[0] in warnings[0]


# --------------------------------------------------------------------------------------- damaged ledgers


def _truncate(db: Path) -> None:
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])


def _garbage_mid_file(db: Path) -> None:
    with db.open("r+b") as f:  # page 2 (a b-tree page of the ledger's tables) overwritten
        f.seek(4096)
        f.write(bytes(range(256)) * 4)


def _wrong_schema(db: Path) -> None:
    db.unlink()
    con = sqlite3.connect(db)
    with con:
        con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        con.execute("CREATE TABLE games (game_id TEXT PRIMARY KEY, score REAL)")
        con.execute("INSERT INTO meta VALUES ('schema', '1')")
    con.close()


def _not_sqlite(db: Path) -> None:
    db.write_text("this is a shopping list, not a ledger\n" * 200)


CORRUPT = {"truncated": _truncate, "garbage": _garbage_mid_file, "schema": _wrong_schema, "not sqlite": _not_sqlite}


@pytest.mark.parametrize("how", sorted(CORRUPT))
def test_a_damaged_ledger_is_one_error_line_everywhere(
    how: str, night: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    CORRUPT[how](night / "ledger.sqlite")
    cfg = _config(tmp_path / "cfg", seed="5")
    for args in (
        ("run", cfg, "--out", night, "-q"),
        ("standings", night),
        ("report", night),
        ("verify", night),
        ("merge", night, "--into", tmp_path / "merged"),
    ):
        status, _, err = _cli(capsys, *args)
        assert status == 2, (args, err)
        assert err.startswith("error: ") and err.count("\n") == 1 and "ledger" in err, (args, err)
    from referee.view.serve import make_server

    with pytest.raises(UserError, match="ledger"):
        make_server(night, port=0)
