"""The build cache's decisions (referee.league.buildcache), on real folders."""

from __future__ import annotations

import os
from pathlib import Path

from referee.league.buildcache import (
    BuildRecord,
    folder_state,
    is_current,
    load_records,
    record_build,
    save_records,
)


def _built(folder: Path, command: str = "cc -o bot bot.c") -> BuildRecord:
    """A build that compiles bot.c into bot, rewrites a generated header and removes a temp file."""
    before = folder_state(folder)
    (folder / "bot").write_bytes(b"\x7fELF...")
    (folder / "gen.h").write_text("#define N 2\n")
    (folder / "scratch.tmp").unlink()
    return record_build(command, None, before, folder_state(folder))


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "bot"
    (folder / "src").mkdir(parents=True)
    (folder / "bot.c").write_text("int main(void) { return 0; }\n")
    (folder / "gen.h").write_text("#define N 1\n")
    (folder / "scratch.tmp").write_text("x")
    (folder / "src" / "util.c").write_text("/* util */\n")
    os.symlink("bot.c", folder / "main.c")
    return folder


def test_an_unchanged_folder_is_current_with_its_outputs_left_as_the_build_made_them(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    rec = _built(folder)
    assert set(rec.outputs) == {"bot", "gen.h", "scratch.tmp"} and rec.outputs["scratch.tmp"] == ""
    assert is_current(rec, "cc -o bot bot.c", None, folder_state(folder))


def test_a_changed_source_command_env_or_output_is_not_current(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    rec = _built(folder)
    now = folder_state(folder)
    assert not is_current(rec, "cc -O2 -o bot bot.c", None, now)
    assert not is_current(rec, "cc -o bot bot.c", {"CFLAGS": "-O2"}, now)
    assert not is_current(None, "cc -o bot bot.c", None, now)
    (folder / "src" / "util.c").write_text("/* util, edited */\n")
    assert not is_current(rec, "cc -o bot bot.c", None, folder_state(folder))
    (folder / "src" / "util.c").write_text("/* util */\n")
    assert is_current(rec, "cc -o bot bot.c", None, folder_state(folder))
    (folder / "bot").unlink()  # the compiled program is gone
    assert not is_current(rec, "cc -o bot bot.c", None, folder_state(folder))


def test_new_files_links_and_left_out_folders(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "out").mkdir()
    rec = _built(folder)
    (folder / "out" / "ledger.sqlite").write_text("the night's output, not the bot's")
    assert is_current(rec, "cc -o bot bot.c", None, folder_state(folder, [folder / "out"]))
    assert not is_current(rec, "cc -o bot bot.c", None, folder_state(folder))
    (folder / "main.c").unlink()
    os.symlink("src/util.c", folder / "main.c")  # a link pointing elsewhere is a change
    assert not is_current(rec, "cc -o bot bot.c", None, folder_state(folder, [folder / "out"]))


def test_records_round_trip_and_a_damaged_file_reads_as_empty(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    rec = _built(folder)
    save_records(tmp_path, {"cbot": rec})
    assert load_records(tmp_path) == {"cbot": rec}
    (tmp_path / "builds.json").write_text('{"builds": {"cbot": 3}}')
    assert load_records(tmp_path) == {}
    assert load_records(tmp_path / "missing") == {}


def test_a_folder_too_large_to_hash_has_no_state(tmp_path: Path, monkeypatch) -> None:
    import referee.league.buildcache as buildcache

    folder = _folder(tmp_path)
    assert folder_state(folder) is not None
    monkeypatch.setattr(buildcache, "MOST_FILES", 3)  # the folder has 5 files and a link
    assert folder_state(folder) is None
    monkeypatch.setattr(buildcache, "MOST_FILES", 100)
    monkeypatch.setattr(buildcache, "MOST_BYTES", 10)
    assert folder_state(folder) is None


def test_a_worker_that_does_not_see_out_keeps_the_records_in_a_folder_of_its_own(tmp_path):
    from types import SimpleNamespace

    from referee.league.cluster import worker_build_records

    seen = tmp_path / "out"
    seen.mkdir()
    assert worker_build_records(SimpleNamespace(out=seen)) == seen
    elsewhere = worker_build_records(SimpleNamespace(out=Path("/no/such/host/out")))
    assert elsewhere.is_dir() and elsewhere != seen and "card-referee-builds-" in str(elsewhere)
    assert worker_build_records(SimpleNamespace(out=Path("/no/such/host/out"))) == elsewhere  # stable
    assert worker_build_records(SimpleNamespace(out=Path("/no/such/host/other"))) != elsewhere
