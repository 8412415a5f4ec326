"""A secret night grows with a fresh secret per growth epoch: the bots added play deals of
their own (drawn from the epoch's secret, staged with the epoch), never the deals whose
hands are already in the night's logs and report; every secret stays hidden until every
planned game of every epoch is recorded, then all are shown, and verify re-derives every
game's seed from its epoch's secret. A resume mid-epoch keeps the epoch's secret."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from referee.errors import UserError
from referee.league import schedule as sched
from referee.league.config import Epoch, League, load_config
from referee.league.ledger import Ledger
from referee.league.schedule import deal_seed
from referee.league.secret import epoch_seeds_text, settle_seed, stored_epoch_seeds
from referee.league.shards import parse_shard

from .conftest import REFEREE, REPO, cli

INSTANT = REPO / "tests" / "bots" / "instant_bot.py"


def _config(path: Path, bots: str, seed: str = '"secret"', out: str = "out") -> Path:
    # reuse = "table": one process per seat for a whole table (3 starts, not 9 in session mode with one
    # deal); the seeds, epochs and secrets are checked, not how bots are reused (test_session_cuts)
    body = f'seed = {seed}\nout = "{out}"\nconcurrency = 2\nreuse = "table"\n'
    body += "".join(f'[[bots]]\nname = "{b}"\ncommand = ["{{python}}", "{INSTANT}"]\n' for b in bots)
    path.write_text(body + '[[variants]]\nname = "kwartet"\nsizes = 3\ndeals = 1\n')
    return path


def _meta(out: Path) -> dict[str, str]:
    with sqlite3.connect(out / "ledger.sqlite") as db:
        return dict(db.execute("select key, value from meta"))


def _seeds(out: Path) -> dict[str, int]:
    """Game id -> the seed its ledger row records."""
    with sqlite3.connect(out / "ledger.sqlite") as db:
        return {g: int(s) for g, s in db.execute("select game_id, seed from games")}


def test_a_secret_night_grows_with_a_fresh_secret_per_epoch(tmp_path: Path) -> None:
    cfg = _config(tmp_path / "night.toml", "abc")
    assert cli("run", str(cfg), "--quiet").returncode == 0
    out = tmp_path / "out"
    seed = int(_meta(out)["secret_seed"])
    assert json.loads((out / "standings.json").read_text())["seed"] == seed  # complete: revealed
    kwartet = load_config(cfg).variants[0]
    published = set(_seeds(out).values())
    assert published == {deal_seed(seed, kwartet, 3, 0)}  # 1 table, 1 deal, 3 rotations
    assert "epoch_secrets" not in _meta(out)

    # two late entries; the run is killed (kill -9) a few games into the new epoch
    _config(cfg, "abcde")
    proc = subprocess.Popen(
        [*REFEREE, "run", str(cfg), "--progress-every", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stdout is not None
    seen = 0
    for line in proc.stdout:  # one line per finished game
        seen += line.startswith("[")
        if seen >= 2:
            break
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    meta = _meta(out)
    secrets = json.loads(meta["epoch_secrets"])  # staged with the epoch, committed before its first game
    assert list(secrets) == ["1"] and json.loads(meta["epochs"])[1]["added"] == ["d", "e"]
    fresh = int(secrets["1"])
    assert fresh != seed
    partial = _seeds(out)
    assert 3 + 2 <= len(partial) < 30
    # incomplete: no secret shown anywhere (the first one was shown before the night grew: its deals are public)
    shown = cli("standings", str(out), "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["seed"] == "secret"
    assert str(fresh) not in shown.stdout + shown.stderr and "epoch_seeds" not in shown.stdout

    resumed = cli("run", str(cfg), "--quiet")  # resumes the epoch: the same secret, no new one
    assert resumed.returncode == 0, resumed.stderr
    assert str(fresh) not in resumed.stdout + resumed.stderr
    assert json.loads(_meta(out)["epoch_secrets"]) == secrets
    rows = _seeds(out)
    assert len(rows) == 10 * 3  # C(5, 3) tables, 1 deal, 3 rotations
    assert all(rows[g] == s for g, s in partial.items())
    new = {g: s for g, s in rows.items() if not g.startswith("kwartet-3p-t0000-")}
    assert len(new) == 27 and set(new.values()) == {deal_seed(fresh, kwartet, 3, 0)}
    assert not published & set(new.values())  # no added bot's game is dealt a published deal

    # complete: every epoch's secret shown, so anyone can re-derive every deal
    standings = json.loads((out / "standings.json").read_text())
    assert standings["seed"] == seed and standings["epoch_seeds"] == [fresh]
    assert f"epoch 1: {fresh}" in (out / "report.html").read_text()
    check = cli("verify", str(out))
    assert check.returncode == 0, check.stdout + check.stderr

    # verify checks every game's seed against its epoch's secret
    with sqlite3.connect(out / "ledger.sqlite") as db:
        db.execute("update meta set value = ? where key = 'epoch_secrets'", (json.dumps({"1": str(fresh + 1)}),))
    bad = cli("verify", str(out))
    assert bad.returncode != 0 and "kwartet-3p-t0001-d000-r0" in bad.stdout + bad.stderr
    assert "kwartet-3p-t0000-d000-r0" not in bad.stdout + bad.stderr


def test_a_public_night_grows_as_before(tmp_path: Path) -> None:
    pub = _config(tmp_path / "public.toml", "abc", seed="4", out="pub")
    assert cli("run", str(pub), "--quiet").returncode == 0
    _config(pub, "abcd", seed="4", out="pub")
    assert cli("run", str(pub), "--quiet").returncode == 0
    out = tmp_path / "pub"
    kwartet = load_config(pub).variants[0]
    assert set(_seeds(out).values()) == {deal_seed(4, kwartet, 3, 0)}  # every table the master seed's deals
    assert len(_seeds(out)) == 4 * 3 and "epoch_secrets" not in _meta(out)
    assert "epoch_seeds" not in json.loads((out / "standings.json").read_text())


def _grown(tmp_path: Path, kind: str, seed: str) -> League:
    """A night of bots a-e whose d and e joined in epoch 1, as the ledger rebuilds it (no process)."""
    cfg = _config(tmp_path / f"{kind}.toml", "abcde", seed=seed)
    if kind != "round-robin":
        cfg.write_text(cfg.read_text() + f'schedule = {{ kind = "{kind}", seats_per_bot = 3 }}\n')
    league = load_config(cfg)
    epochs = (Epoch(bots=("a", "b", "c")), Epoch(bots=tuple("abcde"), added=("d", "e")))
    league = dataclasses.replace(league, roster=tuple("abcde"), epochs=epochs)
    return dataclasses.replace(league, seed=11, epoch_seeds=(None, 22)) if league.secret else league


def test_which_tables_are_an_epochs_and_their_seeds(tmp_path: Path) -> None:
    rr = _grown(tmp_path, "round-robin", '"secret"')
    v = rr.variants[0]
    tables = list(sched.tables(rr))
    assert [t.epoch for t in tables] == [0] + [1] * 9  # colex: only t0000 seats a, b, c alone
    assert all(3 in t.lineup or 4 in t.lineup for t in tables if t.epoch == 1)
    assert sched.epoch_of(rr, v, 3, 0) == 0 and sched.epoch_of(rr, v, 3, 9) == 1
    assert sched.table_at(rr, v, 3, 5).epoch == 1
    seeds = {t.epoch: {g.seed for g in sched.table_games(rr, t)} for t in tables}
    assert seeds == {0: {deal_seed(11, v, 3, 0)}, 1: {deal_seed(22, v, 3, 0)}}
    # a balanced night: the first plan is epoch 0's, the top-up (d, e against the field) epoch 1's
    bal = _grown(tmp_path, "balanced", '"secret"')
    ps = sched.parts(bal, bal.variants[0], 3)
    assert [(p.epoch, p.topup) for p in ps] == [(0, False), (1, True)]
    for t in sched.tables(bal):
        assert t.epoch == (1 if t.index >= ps[1].start else 0)
        want = deal_seed(22 if t.epoch else 11, bal.variants[0], 3, 0)
        assert {g.seed for g in sched.table_games(bal, t)} == {want}
    topup = sched.part_plan(bal, bal.variants[0], 3, ps[1])
    assert topup.seed == sched.plan_seed(22, bal.variants[0], 3, 1)
    assert sched.part_plan(bal, bal.variants[0], 3, ps[0]).seed == sched.plan_seed(11, bal.variants[0], 3)
    # an epoch whose secret is not read is never dealt from another's: a bug, not a silent seed
    with pytest.raises(RuntimeError, match="secret of epoch 1"):
        list(sched.games(dataclasses.replace(rr, epoch_seeds=())))
    assert sched.undrawn_epochs(dataclasses.replace(bal, epoch_seeds=())) == [1]
    assert len(sched.coverages(dataclasses.replace(bal, epoch_seeds=()))) == 1  # the top-up's left out


def test_a_public_grown_night_keeps_its_master_seeds(tmp_path: Path) -> None:
    for kind in ("round-robin", "balanced"):
        pub = _grown(tmp_path, kind, "9")
        v = pub.variants[0]
        assert {g.seed for g in sched.games(pub)} == {deal_seed(9, v, 3, 0)}
        for p in sched.parts(pub, v, 3):
            assert sched.part_plan(pub, v, 3, p).seed == sched.plan_seed(9, v, 3, p.epoch if p.topup else 0)


def test_epoch_secrets_are_read_back_and_a_damaged_record_is_refused() -> None:
    seeds = (None, 5, 2**63 - 1)
    assert stored_epoch_seeds(epoch_seeds_text(seeds)) == seeds
    assert stored_epoch_seeds(None) == () and stored_epoch_seeds("{}") == ()
    for bad in ("[1]", '{"1": 5}', '{"0": "5"}', '{"x": "5"}', '{"1": "-5"}', "nope", f'{{"1": "{2**64}"}}'):
        with pytest.raises(UserError, match="epoch_secrets"):
            stored_epoch_seeds(bad, "L")


def test_a_grown_secret_night_is_not_played_as_a_shard(tmp_path: Path) -> None:
    grown = _grown(tmp_path, "round-robin", '"secret"')
    (tmp_path / "x").mkdir()
    with Ledger.in_dir(tmp_path / "x") as ledger:
        ledger.set_meta("secret_seed", "11")
        league = dataclasses.replace(grown, seed=None, epoch_seeds=(), shard=parse_shard("1/2"))
        with pytest.raises(UserError, match=r"a grown secret night cannot be split into shards \(--shard 1/2\)"):
            settle_seed(league, ledger)
        # whole: the epoch's secret is drawn, staged (committed with the epoch), and kept by the next settle
        whole = settle_seed(dataclasses.replace(league, shard=None), ledger)
        assert whole.seed == 11 and len(whole.epoch_seeds) == 2 and whole.epoch_seeds[1] is not None
        ledger.commit_staged()
        again = settle_seed(dataclasses.replace(league, shard=None), ledger)
        assert again.epoch_seeds == whole.epoch_seeds


def test_a_withdrawn_bot_cannot_come_back_to_its_old_epochs_deals(tmp_path: Path) -> None:
    # a, b, c, d play a secret night; it is stopped (kill -9) before d's tables; d is withdrawn, the
    # night completes without it (its secret shown), grows (e, epoch 1): d coming back would play the
    # deals of epoch 0, already played and shown; it is refused with why, and joins under a new name
    cfg = _config(tmp_path / "night.toml", "abcd")
    proc = subprocess.Popen(
        [*REFEREE, "run", str(cfg), "--progress-every", "0", "-j", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # one line per finished game
        if line.startswith("["):
            break
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    out = tmp_path / "out"
    assert 1 <= len(_seeds(out)) < 12
    assert cli("run", str(_config(cfg, "abc")), "--quiet").returncode == 0  # d withdrawn
    assert cli("run", str(_config(cfg, "abce")), "--quiet").returncode == 0  # e joins: epoch 1
    seed = int(_meta(out)["secret_seed"])
    kwartet = load_config(cfg).variants[0]
    before = _seeds(out)

    back = cli("run", str(_config(cfg, "abcde")), "--quiet")
    assert back.returncode == 2 and "Traceback" not in back.stderr, back.stderr
    err = back.stderr
    assert "'d' was withdrawn from this secret night" in err and "deals of epoch 0" in err, err
    assert "Add it under a new name (e.g. 'd-2')" in err, err
    assert _seeds(out) == before  # nothing played

    # under a new name it is a newcomer: a new epoch, a fresh secret, none of the deals played before
    text = cfg.read_text().replace('name = "d"', 'name = "d-2"')
    cfg.write_text(text)
    assert "d-2" in text and 'name = "e"' in text
    grown = cli("run", str(cfg), "--quiet")
    assert grown.returncode == 0, grown.stderr
    rows = _seeds(out)
    secrets = json.loads(_meta(out)["epoch_secrets"])
    assert sorted(secrets) == ["1", "2"]
    newcomer = {g: s for g, s in rows.items() if g not in before}
    assert newcomer and set(newcomer.values()) == {deal_seed(int(secrets["2"]), kwartet, 3, 0)}
    assert deal_seed(seed, kwartet, 3, 0) not in newcomer.values()
