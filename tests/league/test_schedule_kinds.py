"""[schedule] kind = "balanced" | "gauntlet": the config, its errors, the schedule and `referee plan`."""

from __future__ import annotations

import inspect
import json
import math
import textwrap
from pathlib import Path

import pytest

from referee.cli import main
from referee.errors import UserError
from referee.league import schedule as sched
from referee.league.balanced import coverage
from referee.league.config import (
    ScheduleSpec,
    decode_config,
    diff_canonical,
    from_canonical,
    load_config,
    normalize_stored,
    resolve,
)
from referee.league.shards import Shard


def bots(n: int, prefix: str = "bot") -> str:
    return "".join(f'[[bots]]\nname = "{prefix}-{i:02d}"\ncommand = "true"\n' for i in range(n))


KWARTET = '[[variants]]\nname = "kwartet"\nsizes = 4\ndeals = 2\n'


def write(tmp_path: Path, text: str, name: str = "x.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


# --------------------------------------------------------------------------
# the config


def test_a_round_robin_config_keeps_its_canonical_form(tmp_path: Path) -> None:
    """Configs written before [schedule] existed compare equal to their stored canonical form,
    which has no schedule key at all; saying the default out loud changes nothing either."""
    plain = load_config(write(tmp_path, bots(4) + KWARTET))
    canon = plain.canonical()
    assert "schedule" not in canon and all("schedule" not in v for v in canon["variants"])
    said = load_config(
        write(tmp_path, '[schedule]\nkind = "round-robin"\n' + bots(4) + KWARTET + "schedule = {}\n", "y.toml")
    )
    assert said.canonical() == canon
    assert normalize_stored(canon) == canon
    assert plain.variants[0].schedule == ScheduleSpec()
    balanced = load_config(
        write(tmp_path, '[schedule]\nkind = "balanced"\nseats_per_bot = 2\n' + bots(4) + KWARTET, "z.toml")
    )
    assert balanced.canonical()["schedule"] == {"kind": "balanced", "seats_per_bot": 2}
    assert diff_canonical(canon, balanced.canonical()) == ['schedule: added ({"kind":"balanced","seats_per_bot":2})']
    again = from_canonical(balanced.canonical(), "stored")  # what merge and the viewer rebuild
    assert again.variants[0].schedule == balanced.variants[0].schedule
    assert normalize_stored(balanced.canonical()) == balanced.canonical()


def test_a_variant_schedule_overrides_the_league_key_by_key(tmp_path: Path) -> None:
    league = load_config(
        write(
            tmp_path,
            """
        [schedule]
        kind = "gauntlet"
        seats_per_bot = 3
        challengers = ["new-b", "new-a"]
    """
            + bots(6)
            + bots(2, "new").replace("new-00", "new-a").replace("new-01", "new-b")
            + """
        [[variants]]
        name = "kwartet"
        sizes = 4
        [[variants]]
        name = "authors"
        sizes = 3
        schedule = { seats_per_bot = 5 }
        [[variants]]
        name = "happy-families"
        sizes = 3
        schedule = { kind = "balanced" }
        [[variants]]
        name = "chickens"
        sizes = 3
        schedule = { kind = "round-robin" }
    """,
        )
    )
    s = [v.schedule for v in league.variants]
    assert s[0] == ScheduleSpec("gauntlet", 3, (7, 6))  # in the order given
    assert s[1] == ScheduleSpec("gauntlet", 5, (7, 6))
    assert s[2] == ScheduleSpec("balanced", 3, ())  # challengers apply to a gauntlet only
    assert s[3] == ScheduleSpec()
    rows = sched.plan(league)
    assert [(r.schedule, r.tables) for r in rows] == [
        ("gauntlet", 6),
        ("gauntlet", 10),
        ("balanced", math.ceil(8 * 3 / 3)),
        ("round-robin", math.comb(8, 3)),
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            '[schedule]\nkind = "balanced"\nseats_per_bot = 0\n' + bots(8) + KWARTET,
            "x.toml: schedule.seats_per_bot: must be at least 1 (the tables each bot plays, per variant and size), got 0",  # noqa: E501
        ),
        (
            '[schedule]\nkind = "balanced"\nseats_per_bot = 201\n' + bots(8) + KWARTET,
            "schedule.seats_per_bot: 201 is above the most, 200 tables per bot",
        ),
        (
            '[schedule]\nkind = "balanced"\n' + bots(8) + KWARTET,
            "x.toml: schedule: a balanced schedule needs seats_per_bot = N",
        ),
        (
            '[schedule]\nkind = "gauntlet"\nseats_per_bot = 3\n' + bots(8) + KWARTET,
            'x.toml: schedule: a gauntlet needs challengers = ["name", ...]',
        ),
        (
            '[schedule]\nkind = "gauntlet"\nseats_per_bot = 3\nchallengers = ["bot-1"]\n' + bots(8) + KWARTET,
            (
                "x.toml: schedule.challengers: challenger 'bot-1' is not among the bots (did you mean 'bot-01'?); "
                "the bots are: bot-00, bot-01"
            ),
        ),
        (
            '[schedule]\nkind = "gauntlet"\nseats_per_bot = 3\nchallengers = ["bot-01", "bot-01"]\n'
            + bots(8)
            + KWARTET,
            "schedule.challengers: challenger 'bot-01' is listed twice",
        ),
        (
            '[schedule]\nkind = "gauntlet"\nseats_per_bot = 3\nchallengers = []\n' + bots(8) + KWARTET,
            "schedule.challengers: is empty: a gauntlet needs at least one challenger",
        ),
        (
            '[schedule]\nkind = "gauntlet"\nseats_per_bot = 3\nchallengers = ["bot-00", "bot-01", "bot-02"]\n'
            + bots(3)
            + KWARTET.replace("4", "3"),
            "schedule.challengers: names every bot: a gauntlet seats",
        ),
        # 1 challenger x 2 tables x 3 field seats = 6 seats for a field of 9: seats_per_bot = 3 is the least
        (
            '[schedule]\nkind = "gauntlet"\nseats_per_bot = 2\nchallengers = ["bot-00"]\n' + bots(10) + KWARTET,
            (
                "x.toml: schedule.seats_per_bot: 2 tables per challenger seat only 6 of the 9 field bots at kwartet's "
                "4-seat tables (variants[0]: 1 challenger x 2 x 3 field seats); every bot must play: use seats_per_bot = 3 "  # noqa: E501
                "or more"
            ),
        ),
        (
            '[schedule]\nkind = "gauntlet"\nseats_per_bot = 9\nchallengers = ["bot-00", "bot-01"]\n'
            + bots(4)
            + KWARTET,
            (
                "variants[0].sizes: a gauntlet seats one challenger and 3 field bots at a 4-seat table, but the field "
                "(the bots that are not challengers) has 2"
            ),
        ),
        (
            'fill = "repeat"\n[schedule]\nkind = "balanced"\nseats_per_bot = 2\n' + bots(3) + KWARTET,
            (
                "variants[0].sizes: a balanced schedule seats 4 different bots at a 4-seat table (fill does not apply), "  # noqa: E501
                "but the config has 3"
            ),
        ),
        (
            "[schedule]\nseats_per_bot = 2\n" + bots(8) + KWARTET,
            "schedule.seats_per_bot: does not apply to a round robin",
        ),
        (
            '[schedule]\nkind = "balanced"\nseats_per_bot = 2\nchallengers = ["bot-00"]\n' + bots(8) + KWARTET,
            "schedule.challengers: applies to a gauntlet only (this schedule is balanced)",
        ),
        (
            bots(8) + KWARTET + 'schedule = { kind = "balanced" }\n',
            "x.toml: variants[0].schedule: a balanced schedule needs seats_per_bot = N",
        ),
        (
            bots(8) + KWARTET + 'schedule = { kind = "gauntlet", seats_per_bot = 2, challengers = ["nobody"] }\n',
            "variants[0].schedule.challengers: challenger 'nobody' is not among the bots",
        ),
        (
            '[schedule]\nkind = "balansed"\n' + bots(8) + KWARTET,
            (
                "schedule.kind: invalid value 'balansed'; expected one of: round-robin, balanced, gauntlet "
                "(did you mean 'balanced'?)"
            ),
        ),
        (
            "[schedule]\nseats_per_bots = 3\n" + bots(8) + KWARTET,
            "schedule: unknown key 'seats_per_bots' (did you mean 'seats_per_bot'?)",
        ),
        (
            bots(8) + KWARTET + 'schedule = { kind = "balanced", seat_per_bot = 3 }\n',
            "variants[0].schedule: unknown key 'seat_per_bot' (did you mean 'seats_per_bot'?)",
        ),
        (
            '[schedule]\nkind = "gauntlet"\nseats_per_bot = 2\nchallengers = "bot-00"\n' + bots(8) + KWARTET,
            'schedule.challengers: expected a list of bot names, e.g. ["new-a", "new-b"], got a string',
        ),
        (
            '[schedule]\nkind = "balanced"\nseats_per_bot = "12"\n' + bots(8) + KWARTET,
            "schedule.seats_per_bot: expected a whole number (the tables each bot plays), e.g. 12, got a string",
        ),
    ],
)
def test_every_schedule_mistake_is_one_clear_line(
    tmp_path: Path, text: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    p = write(tmp_path, text)
    with pytest.raises(UserError) as info:
        load_config(p)
    assert expected in str(info.value)
    assert "\n" not in str(info.value)
    assert main(["plan", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {p}: ") and err.count("\n") == 1 and "Traceback" not in err


def test_a_mistake_inherited_by_every_variant_is_said_once(tmp_path: Path) -> None:
    p = write(
        tmp_path, '[schedule]\nkind = "balanced"\n' + bots(8) + KWARTET + '[[variants]]\nname = "authors"\nsizes = 3\n'
    )
    with pytest.raises(UserError) as info:
        load_config(p)
    assert str(info.value).count("needs seats_per_bot") == 1


# --------------------------------------------------------------------------
# the schedule


def _league(tmp_path: Path, schedule: str, nbots: int, variant: str = KWARTET):
    return load_config(write(tmp_path, "seed = 3\n" + schedule + bots(nbots) + variant))


def test_balanced_tables_play_every_deal_in_every_rotation(tmp_path: Path) -> None:
    league = _league(tmp_path, '[schedule]\nkind = "balanced"\nseats_per_bot = 5\n', 14)
    tables = list(sched.tables(league))
    assert len(tables) == sched.total_tables(league) == math.ceil(14 * 5 / 4) == 18
    assert [t.key for t in tables] == [f"kwartet-4p-t{i:04d}" for i in range(18)]
    seats = [sum(t.lineup.count(b) for t in tables) for b in range(14)]
    assert min(seats) >= 5 and max(seats) <= 6  # N seats, give or take one table
    plan = sched.table_plan(league, league.variants[0], 4)
    assert plan is not None and [t.lineup for t in tables] == list(plan.lineups())
    games = list(sched.games(league))
    assert len(games) == sched.total_games(league) == 18 * 2 * 4
    for t in tables:
        assert len(set(t.lineup)) == 4
        mine = [g for g in games if g.game_id.startswith(t.key + "-")]
        for d in range(2):
            deal = [g for g in mine if g.deal == d]
            assert len({g.seed for g in deal}) == 1  # duplicate: one deal, every rotation
            assert deal[0].seed == sched.deal_seed(league.seed, league.variants[0], 4, d)
            for seat in range(4):  # every bot holds every seat's hand
                assert sorted(g.seats[seat] for g in deal) == sorted(t.lineup)
            order = sched.seating_order(tuple(range(4)), d)
            assert [g.positions for g in deal] == [tuple(order[(s + r) % 4] for s in range(4)) for r in range(4)]


def test_plans_are_stable_and_each_variant_and_size_draws_its_own(tmp_path: Path) -> None:
    text = '[schedule]\nkind = "balanced"\nseats_per_bot = 3\n'
    two = KWARTET + '[[variants]]\nname = "authors"\nsizes = 4\n'
    a = [t.lineup for t in sched.tables(_league(tmp_path, text, 12, two))]
    sched._make_plan.cache_clear()
    b = [t.lineup for t in sched.tables(_league(tmp_path, text, 12, two))]
    assert a == b  # the same config: the same tables
    assert a[:9] != a[9:]  # kwartet and authors: different draws
    other = [
        t.lineup for t in sched.tables(load_config(write(tmp_path, "seed = 4\n" + text + bots(12) + two, "o.toml")))
    ]
    assert other != a  # another seed, another draw


def test_gauntlet_tables_all_seat_a_challenger(tmp_path: Path) -> None:
    league = _league(
        tmp_path, '[schedule]\nkind = "gauntlet"\nseats_per_bot = 4\nchallengers = ["bot-03", "bot-11"]\n', 12
    )
    tables = list(sched.tables(league))
    assert len(tables) == 2 * 4
    for t in tables:
        assert len({3, 11} & set(t.lineup)) == 1 and len(set(t.lineup)) == 4
    assert sum(t.lineup.count(3) for t in tables) == sum(t.lineup.count(11) for t in tables) == 4
    assert {b for t in tables for b in t.lineup} == set(range(12))  # every field bot plays
    cov = sched.coverages(league)[0].coverage
    assert (cov.kind, cov.seats_min, cov.seats_max) == ("gauntlet", 4, 4)


def test_shards_split_a_balanced_night_into_whole_tables(tmp_path: Path) -> None:
    league = _league(
        tmp_path,
        '[schedule]\nkind = "balanced"\nseats_per_bot = 3\n',
        10,
        KWARTET + '[[variants]]\nname = "authors"\nsizes = 3\n',
    )
    whole = {t.number: t for t in sched.tables(league)}
    got: dict[int, sched.Table] = {}
    for k in (1, 2, 3):
        shard = Shard(k, 3)
        part = list(sched.tables(league, shard))
        assert all(shard.holds(t.number) for t in part)
        assert len(part) == sched.total_tables(league, shard)
        got.update((t.number, t) for t in part)
    assert got == whole and sorted(whole) == list(range(len(whole)))


def test_a_10000_bot_night_is_planned_without_making_its_tables(tmp_path: Path) -> None:
    league = _league(tmp_path, '[schedule]\nkind = "balanced"\nseats_per_bot = 12\n', 10_000)
    v = league.variants[0]
    assert sched.total_tables(league) == 30_000  # arithmetic: no plan made for counts
    assert sched.total_games(league) == 30_000 * 2 * 4
    assert inspect.isgenerator(sched.tables(league)) and inspect.isgenerator(sched.games(league))
    first, last = sched.table_at(league, v, 4, 0), sched.table_at(league, v, 4, 29_999)
    assert first.key == "kwartet-4p-t0000" and last.key == "kwartet-4p-t29999" and last.number == 29_999
    assert next(sched.tables(league)) == first
    plan = sched.table_plan(league, v, 4)
    assert plan is not None and plan.method == "cyclic" and len(plan._s.bot) == 10_000  # one array of the bots
    assert last.lineup == plan.lineup(29_999) and len(set(last.lineup)) == 4
    with pytest.raises(IndexError):
        sched.table_at(league, v, 4, 30_000)
    shard = Shard(5000, 7000)  # a shard's tables, straight to them
    part = sched.tables(league, shard)
    t = next(part)
    assert t.number == 4999 and next(part).number == 11_999


def test_coverage_meets_its_bounds_from_12_to_10000_bots(tmp_path: Path) -> None:
    for n, seats in ((12, 12), (50, 6), (1000, 12), (10_000, 12)):
        league = _league(tmp_path, f'[schedule]\nkind = "balanced"\nseats_per_bot = {seats}\n', n)
        plan = sched.table_plan(league, league.variants[0], 4)
        assert plan is not None
        cov = coverage(plan)
        assert cov.seats_min >= seats and cov.seats_max <= seats + 1
        assert cov.pair_max - cov.pair_min <= 2
        assert cov.pair_min >= cov.ideal_pair_min - 1 and cov.pair_max <= cov.ideal_pair_max + 1
        assert cov.position_max - cov.position_min <= 2 + seats // 4


# --------------------------------------------------------------------------
# referee plan


def test_plan_prints_the_coverage_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, 'seed = 2\n[schedule]\nkind = "balanced"\nseats_per_bot = 3\n' + bots(12) + KWARTET)
    assert main(["plan", str(p)]) == 0
    out = capsys.readouterr().out
    assert "balanced, 3 per bot" in out
    assert "coverage of kwartet at 4 seats:" in out
    assert "tables of 4; 3-3 tables per bot" in out
    assert "pairs: 66; meetings" in out and "never meet" in out and "lineup positions: each bot holds" in out
    assert main(["plan", str(p), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rows"][0]["schedule"] == "balanced" and data["rows"][0]["seats_per_bot"] == 3
    assert data["tables"] == 9 and data["games"] == 9 * 2 * 4
    cov = data["coverage"][0]
    assert cov["variant"] == "kwartet" and cov["seats_min"] == cov["seats_max"] == 3 and cov["pairs"] == 66
    assert sum(cov["pair_histogram"].values()) == 66
    assert main(["plan", str(p), "--no-coverage"]) == 0
    assert "coverage of" not in capsys.readouterr().out


def test_plan_of_a_round_robin_looks_as_before(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, bots(5) + KWARTET)
    assert main(["plan", str(p)]) == 0
    out = capsys.readouterr().out
    assert "schedule" not in out and "coverage of" not in out
    assert main(["plan", str(p), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "coverage" not in data and data["rows"][0]["schedule"] == "round-robin"


def test_decoding_and_resolving_a_gauntlet_from_bytes(tmp_path: Path) -> None:
    data = ('[schedule]\nkind = "gauntlet"\nseats_per_bot = 1\nchallengers = ["bot-02"]\n' + bots(4) + KWARTET).encode()
    league = resolve(decode_config(data, "mem.toml"), tmp_path / "mem.toml", schedule_only=True)
    assert [t.lineup.count(2) for t in sched.tables(league)] == [1]
