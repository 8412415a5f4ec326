"""``referee bench load`` with a hog at the table: the figures (per clock mode
and CPU-weight setting) are reported, never asserted; bad options are one
``error:`` line."""

from __future__ import annotations

import json

import pytest

from referee.cli import main


@pytest.mark.parametrize(
    "option, message",
    [
        (["--weights", "maybe"], "error: --weights: 'maybe' is not on, off or on,off"),
        (["--hog", "-1"], "error: --hog: -1 is not a number of processes (0 or more)"),
        (["--modes", "sundial"], "error: --modes: sundial is not a clock mode (wall, cpu)"),
    ],
)
def test_bad_options_are_one_error_line(capsys, option, message):
    assert main(["bench", "load", *option]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [message]


def test_a_hog_at_the_table_with_and_without_weights(capsys):
    args = ["--json", "--tables", "1", "--hog", "2", "--modes", "cpu", "--weights", "on,off", "--move-ms", "500"]
    assert main(["bench", "load", *args, "--fraction", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["hog"] == 2 and "cpu_weight" in out
    assert set(out["modes"]) == {"cpu, weights on", "cpu, weights off"}
    for m in out["modes"].values():
        assert m["seat_games"] == 3  # the hog's seat is not counted
        assert {"latency_ms_median", "latency_ms_max", "false_timeouts", "decisions"} <= set(m)
