"""Schedule: counts, stable ids, lazy generation, duplicate seat rotations."""

from __future__ import annotations

import math
import textwrap
from collections import Counter
from pathlib import Path

from referee.league import schedule as sched
from referee.league.config import load_config
from referee.rules import get_variant


def league_with(tmp_path: Path, nbots: int, body: str, extra: str = ""):
    bots = "".join(f'[[bots]]\nname = "b{i}"\ncommand = "x"\n' for i in range(nbots))
    p = tmp_path / "l.toml"
    p.write_text(textwrap.dedent(extra) + bots + textwrap.dedent(body))
    return load_config(p)


MIXED = """
        [[variants]]
        name = "kwartet"
        sizes = [3, 4, 6]
        deals = 3
        [[variants]]
        name = "chickens"
        sizes = 5
        deals = 2
    """


def test_counts_are_combinations_times_deals_times_rotations(tmp_path: Path) -> None:
    league = league_with(tmp_path, 6, MIXED)
    rows = sched.plan(league)
    expected = {
        ("kwartet", 3): math.comb(6, 3) * 3 * 3,
        ("kwartet", 4): math.comb(6, 4) * 3 * 4,
        ("kwartet", 6): 1 * 3 * 6,
        ("chickens", 5): math.comb(6, 5) * 2 * 5,
    }
    assert {(r.variant, r.size): r.games for r in rows} == expected
    games = list(sched.games(league))
    assert len(games) == sum(expected.values()) == sched.total_games(league)
    assert len({g.game_id for g in games}) == len(games)
    assert sum(1 for _ in sched.tables(league)) == sched.total_tables(league) == 20 + 15 + 1 + 6
    # stable: the same config gives the same ids and seeds
    again = list(sched.games(league_with(tmp_path, 6, MIXED)))
    assert [(g.game_id, g.seed, g.seats) for g in games] == [(g.game_id, g.seed, g.seats) for g in again]
    assert games[0].game_id == "kwartet-3p-t0000-d000-r0"


def test_schedule_is_lazy(tmp_path: Path) -> None:
    league = league_with(tmp_path, 40, '[[variants]]\nname = "kwartet"\nsizes = 6\ndeals = 1000\n')
    assert sched.total_games(league) == math.comb(40, 6) * 1000 * 6  # about 23 billion games
    it = sched.games(league)
    first = [next(it) for _ in range(5)]
    assert [g.rotation for g in first] == [0, 1, 2, 3, 4]


def test_fill_repeat_seats_every_bot(tmp_path: Path) -> None:
    league = league_with(
        tmp_path, 2, '[[variants]]\nname = "kwartet"\nsizes = [3, 4]\ndeals = 1\n', 'fill = "repeat"\n'
    )
    tables = list(sched.tables(league))
    lineups = [t.lineup for t in tables]
    assert lineups == [(0, 0, 1), (0, 1, 1), (0, 0, 0, 1), (0, 0, 1, 1), (0, 1, 1, 1)]
    assert sched.total_games(league) == 2 * 3 + 3 * 4


def test_every_bot_holds_every_hand_of_every_deal(tmp_path: Path) -> None:
    league = league_with(tmp_path, 5, '[[variants]]\nname = "authors"\nsizes = 4\ndeals = 2\n', "seed = 99\n")
    rules = get_variant("authors")
    held: dict[tuple[int, int, int], Counter] = {}
    for g in sched.games(league):
        hands = [tuple(rules.new_game(g.size, seed=g.seed).hand(s)) for s in range(g.size)]
        for seat, bot in enumerate(g.seats):
            held.setdefault((g.table, g.deal, bot), Counter())[hands[seat]] += 1
    for (table, deal, _bot), counter in held.items():
        g0 = next(g for g in sched.games(league) if g.table == table and g.deal == deal)
        all_hands = {tuple(rules.new_game(4, seed=g0.seed).hand(s)) for s in range(4)}
        assert set(counter) == all_hands and all(v == 1 for v in counter.values())
    # deals differ from each other, and every table plays the same deals
    seeds = {(g.deal, g.seed) for g in sched.games(league)}
    assert len(seeds) == 2


def test_cyclic_orders_change_between_deals_so_neighbours_balance(tmp_path: Path) -> None:
    """Rotations keep who sits left of whom; over (k-1)! deals every cyclic order
    occurs once, so every bot has every other bot as its left neighbour equally often."""
    for size in (3, 4):
        deals = math.factorial(size - 1)
        league = league_with(tmp_path, size, f'[[variants]]\nname = "kwartet"\nsizes = {size}\ndeals = {deals}\n')
        left_of: Counter = Counter()
        orders = set()
        for g in sched.games(league):
            for s in range(size):
                left_of[(g.seats[s], g.seats[(s + 1) % size])] += 1
            if g.rotation == 0:
                orders.add(g.seats)
        assert len(orders) == deals  # a different cyclic order for every deal
        counts = set(left_of.values())
        assert len(counts) == 1, left_of  # every ordered pair of neighbours equally often
        assert len(left_of) == size * (size - 1)


def test_example_tournaments_load_and_plan() -> None:
    root = Path(__file__).resolve().parents[2] / "tournaments"
    configs = sorted(root.glob("*.toml"))
    assert {"demo.toml", "full.toml", "custom-variant.toml"} <= {p.name for p in configs}
    for p in configs:
        league = load_config(p)
        assert sched.total_games(league) == sum(1 for _ in sched.games(league))
        for bot in league.bots:
            assert Path(bot.cwd).is_dir()
    demo = load_config(root / "demo.toml")
    assert {v.rules.name for v in demo.variants} == {
        "happy-families",
        "happy-families-jaques",
        "authors",
        "kwartet",
        "chickens",
    }
    custom = load_config(root / "custom-variant.toml")
    assert custom.variants[0].rules.members == ("G1", "G2", "P1", "P2", "C1", "C2")
    assert custom.variants[0].rules.stock == 6
