"""The checks before a night's first game (referee.league.preflight), on loaded configs."""

from __future__ import annotations

import os
from pathlib import Path

from referee.league.config import load_config
from referee.league.preflight import memory_warning

from .conftest import bots_toml

PHYS_MIB = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20
VARIANT = '[[variants]]\nname = "kwartet"\nsizes = 4\n'


def _league(make_config, big_mib: int, small_mib: int) -> object:
    body = (
        f'seed = 1\nout = "out"\n[limits]\nmemory_mb = {small_mib}\n'
        + bots_toml(["a", "b", "c", "d", "e"])
        + f'[[bots]]\nname = "big"\ncommand = "./big"\nlimits = {{ memory_mb = {big_mib} }}\n'
        + VARIANT
    )
    return load_config(make_config(body))


def test_the_memory_estimate_adds_up_each_seats_own_limit(make_config) -> None:
    # one bot at 1/4 of the machine, the rest at 1/32: a table of 4 needs 1/4 + 3/32 = 11/32;
    # 2 tables fit (22/32), 3 do not (33/32). Counting every seat at the largest limit said 2 tables need 2x
    big, small = PHYS_MIB // 4, PHYS_MIB // 32
    league = _league(make_config, big, small)
    assert memory_warning(league, 2) is None
    warning = memory_warning(league, 3)
    assert warning is not None and warning.startswith("warning: 3 tables at once x 4 seats")
    per_table = big + 3 * small
    assert f"{big} + {small} + {small} + {small} = {per_table} MiB a table" in warning
    assert f"{3 * per_table * 2**20 / 1024**3:.1f} GiB" in warning and "Lower `concurrency`" in warning


def test_the_same_limit_everywhere_is_said_once(make_config, tmp_path: Path) -> None:
    league = _league(make_config, PHYS_MIB // 4, PHYS_MIB // 4)
    warning = memory_warning(league, 2)
    assert warning is not None and f"x 4 seats, {PHYS_MIB // 4} MiB memory limit per bot" in warning
    assert memory_warning(league, 1) is None
