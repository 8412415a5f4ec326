"""The ledger's own run lock and staged meta entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.errors import UserError
from referee.league.ledger import Ledger, MergedMeta, run_lock_held


def test_the_run_lock_is_held_until_close(tmp_path: Path) -> None:
    assert not run_lock_held(tmp_path)
    first = Ledger.in_dir(tmp_path, lock=True)
    assert run_lock_held(tmp_path)
    with pytest.raises(UserError, match="another `referee run` is playing into this output directory"):
        Ledger.in_dir(tmp_path, lock=True)
    with Ledger.in_dir(tmp_path) as reader:  # readers need no lock
        assert reader.count() == 0
    first.close()
    assert not run_lock_held(tmp_path)
    Ledger.in_dir(tmp_path, lock=True).close()  # free again


def test_staged_meta_is_written_only_on_commit_in_one_go(tmp_path: Path) -> None:
    with Ledger.in_dir(tmp_path) as ledger:
        ledger.set_meta("shard", "1/2")
        ledger.stage_meta({"league": "night", "shard": None, "config": "{}"})
        assert ledger.get_meta("league") is None and ledger.get_meta("shard") == "1/2"
        ledger.commit_staged()
        assert ledger.get_meta("league") == "night" and ledger.get_meta("shard") is None
        assert ledger.config() == {}
        ledger.stage_meta({"league": "later"})
    with Ledger.in_dir(tmp_path) as ledger:  # closed without a commit: dropped
        assert ledger.get_meta("league") == "night"


def test_merged_meta_round_trips_and_a_damaged_one_is_none() -> None:
    meta = MergedMeta(of=3, shards=[1, 3], complete=False, missing_games=12)
    assert meta.text() == '{"complete": false, "missing_games": 12, "of": 3, "shards": [1, 3]}'
    assert MergedMeta.parse(meta.text()) == meta
    assert MergedMeta.parse('{"of": 3}') is None and MergedMeta.parse("not json") is None
