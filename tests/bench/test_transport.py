"""``referee bench transport`` runs end to end with real bots (a smoke test:
the figures are reported, never asserted - speed is checked by running the
benchmark, not by the tests)."""

from __future__ import annotations

import json

from referee.cli import main


def test_bench_transport_reports_every_figure(capsys):
    assert main(["bench", "transport", "--decisions", "300", "--rounds", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in (
        "raw_round_trip_us",
        "raw_cpu_us",
        "blocking_raw_round_trip_us",
        "blocking_raw_cpu_us",
        "referee_round_trip_us",
        "referee_cpu_us",
        "referee_turn_us",
        "ratio",
        "ratio_ok",
        "cpu_ok",
    ):
        assert key in out, key
    assert out["decisions"] >= 300 and out["games"] >= 1
    assert all(out[k] > 0 for k in ("raw_round_trip_us", "blocking_raw_round_trip_us", "referee_round_trip_us"))
    assert set(out["all_rounds"]) == {"raw", "blocking_raw", "referee"}
