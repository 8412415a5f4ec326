"""``referee bench engine`` works end to end (figures are read, never asserted)."""

from __future__ import annotations

import argparse
import json

import pytest

from referee.bench import engine
from referee.errors import UserError
from referee.rules import RulesError, get_variant


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    engine.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_bench_engine_runs_every_variant_and_reports(capsys: pytest.CaptureFixture[str]) -> None:
    result = engine.run(parse("--seconds", "0.02", "--players", "2", "4"))
    json.dumps(result)  # JSON-able
    cases = {(r["variant"], r["players"]) for r in result["results"]}
    fits = {(v, n) for v in engine.DEFAULT_VARIANTS for n in (2, 4) if get_variant(v).min_players <= n}
    assert cases == fits and {("happy-families", 2), ("authors", 4), ("chickens", 4)} <= cases
    assert (
        {(s["variant"], s["players"]) for s in result["skipped"]}
        == {(v, n) for v in engine.DEFAULT_VARIANTS for n in (2, 4) if (v, n) not in fits}
        >= {("authors", 2), ("kwartet", 2), ("chickens", 2)}
    )
    for r in result["results"]:
        assert r["games"] >= 1 and r["actions"] >= r["games"] and r["actions_per_s"] > 0
    assert set(result["headline"]) == {"authors@4", "happy-families@4"}
    assert result["python"] and result["machine"]
    engine.print_result(result)
    out = capsys.readouterr().out
    assert "authors*" in out and "actions/s" in out


def test_bench_engine_bad_input() -> None:
    with pytest.raises(RulesError, match="unknown variant 'uno'"):
        engine.run(parse("--seconds", "0.01", "--variant", "uno"))
    with pytest.raises(UserError, match="no variant among authors allows 2 players"):
        engine.run(parse("--seconds", "0.01", "--variant", "authors", "--players", "2"))
    with pytest.raises(UserError, match="--seconds must be positive"):
        engine.run(parse("--seconds", "0"))
