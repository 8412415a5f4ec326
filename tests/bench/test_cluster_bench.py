"""``referee bench cluster``'s commit path runs end to end (a smoke test: the
figures are reported, never asserted). The whole bench starts Dask clusters and
is run by hand; its nights are the real runner's, tested in tests/league."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.bench.cluster import _BOT, _commit_path, create_cost_us
from referee.cli import main


@pytest.mark.parametrize("in_place", [False, True], ids=["log sent", "log written in place"])
def test_the_commit_path_commits_every_synthetic_game(tmp_path: Path, in_place: bool) -> None:
    out = _commit_path(12, str(_BOT), str(tmp_path), in_place=in_place)
    assert out["games"] == 12 and out["cpu_ms_per_game"] > 0 and out["log_bytes"] > 0
    # a game written in place crosses the wire without its log
    assert (out["wire_bytes"] < 2000) == in_place, out
    assert list(tmp_path.iterdir()) == [], "the bench's folders are removed"


def test_create_cost_and_a_bad_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert create_cost_us(str(tmp_path), n=20) > 0 and list(tmp_path.iterdir()) == []
    assert main(["bench", "cluster", "--dir", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: bench cluster --dir") and err.count("\n") == 1, err
