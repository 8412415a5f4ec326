"""The site on a Dask cluster (``referee host --workers N``): the SPRT duel of a candidate is played by
the cluster's workers, as its gauntlet and the ladder are (a real local cluster of one worker process, on
ports of its own: not in the "dask" group of tests/league/test_cluster.py, whose worker runs that group's
tests one after the other)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from referee.site import pipeline
from referee.site.config import load_site
from referee.site.runtime import SiteRuntime
from tests.site.conftest import SITE_TOML, write_site
from tests.site.test_pipeline import FAST, bot_folder, submit


async def test_the_duel_is_played_on_the_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.league.cluster import Cluster

    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # (the worker process: no compiling it all again)
    monkeypatch.setenv("DASK_LOGGING__DISTRIBUTED", "critical")
    cluster = await trio.to_thread.run_sync(Cluster.start_local, 1)
    rt = SiteRuntime.open(load_site(write_site(tmp_path, text=SITE_TOML.split("[site]")[0] + FAST)), cluster)
    try:
        rt.store.add_entrant("alice")
        folder = bot_folder(tmp_path, "python", 'command = ["{python}", "bot.py"]\nruntime = "python"\n')
        old, new = await submit(rt, "alice", folder), await submit(rt, "alice", folder)
        for v in (old, new):  # (check-bot and the gauntlet are other tests': straight to the duel)
            for state in ("building", "checking", "candidate"):
                rt.store.move(v.id, state)
        old = pipeline.promote(rt.store, old.id, "the test")
        summary = await pipeline.duel(rt, new, old)
        assert summary["played_on"] == "1 local worker" and summary["against"] == "alice-v1"
        assert summary["games"] == 4 and summary["pairs"] + summary["dropped_pairs"] == 2, summary
        out = rt.site.data / "duels" / f"v{new.id}"
        logs = sorted(p.name for p in (out / "games").iterdir() if ".jsonl" in p.name)
        assert len(logs) == 4 and all(name.startswith("duel-kwartet-3p-") for name in logs), logs
        assert not (out / ".incoming").exists()  # the worker's logs were all moved in
    finally:
        rt.store.close()
        await trio.to_thread.run_sync(cluster.close)
