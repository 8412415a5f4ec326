"""Unpacking submissions: good archives unpack, each kind of malicious one is refused with a clear message."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from referee.site.archive import MANIFEST, ArchiveError, Caps, pack_folder, unpack

GOOD_MANIFEST = b'command = ["{python}", "bot.py"]\nruntime = "python"\n'


def tgz(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
            else:
                tf.addfile(info)
    return buf.getvalue()


def file_info(name: str, mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mode = mode
    return info


def good_tar(*extra: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    return tgz([(file_info(MANIFEST), GOOD_MANIFEST), (file_info("bot.py", 0o755), b"print('hi')\n"), *extra])


def zipped(files: dict[str, bytes], attrs: dict[str, int] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zi = zipfile.ZipInfo(name)
            zi.compress_type = zipfile.ZIP_DEFLATED
            if attrs and name in attrs:
                zi.external_attr = attrs[name] << 16
            zf.writestr(zi, data)
    return buf.getvalue()


def test_a_good_tar_gz_unpacks_with_its_manifest(tmp_path: Path) -> None:
    got = unpack(good_tar((file_info("lib/util.py"), b"x = 1\n")), tmp_path / "v1")
    assert got.kind == "tar.gz" and got.files == 3
    assert got.manifest.command == ["{python}", "bot.py"] and got.manifest.runtime == "python"
    assert (got.root / "lib" / "util.py").read_text() == "x = 1\n"
    assert (got.root / "bot.py").stat().st_mode & stat.S_IXUSR


def test_a_good_zip_in_one_top_folder_unpacks(tmp_path: Path) -> None:
    data = zipped({f"mybot/{MANIFEST}": GOOD_MANIFEST, "mybot/bot.py": b"print(1)\n"})
    got = unpack(data, tmp_path / "v1")
    assert got.kind == "zip" and got.root == (tmp_path / "v1" / "mybot").resolve()


def test_pack_folder_round_trips(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / MANIFEST).write_bytes(GOOD_MANIFEST)
    (src / "bot.py").write_text("print(2)\n")
    (src / "link").symlink_to("/etc/passwd")  # never packed
    got = unpack(pack_folder(src), tmp_path / "v1")
    assert sorted(p.name for p in got.root.iterdir()) == ["bot.py", MANIFEST]


def test_the_destination_must_be_fresh(tmp_path: Path) -> None:
    (tmp_path / "v1").mkdir()
    with pytest.raises(FileExistsError):
        unpack(good_tar(), tmp_path / "v1")


@pytest.mark.parametrize(
    "name, words",
    [("/etc/evil", "absolute path"), ("../evil", "'..'"), ("a/../../evil", "'..'"), ("C:\\evil", "absolute")],
)
def test_paths_that_leave_the_folder_are_refused(tmp_path: Path, name: str, words: str) -> None:
    with pytest.raises(ArchiveError, match=words):
        unpack(good_tar((file_info(name), b"x")), tmp_path / "v1")
    assert not (tmp_path / "v1").exists() and not (tmp_path / "evil").exists()
    with pytest.raises(ArchiveError, match=words):
        unpack(zipped({MANIFEST: GOOD_MANIFEST, name: b"x"}), tmp_path / "v2")


def test_links_are_refused(tmp_path: Path) -> None:
    sym = file_info("out")
    sym.type, sym.linkname = tarfile.SYMTYPE, "/etc"
    with pytest.raises(ArchiveError, match="symbolic link"):
        unpack(good_tar((sym, None)), tmp_path / "v1")
    hard = file_info("hard")
    hard.type, hard.linkname = tarfile.LNKTYPE, "/etc/passwd"
    with pytest.raises(ArchiveError, match="hard link"):
        unpack(good_tar((hard, None)), tmp_path / "v2")
    with pytest.raises(ArchiveError, match="symbolic link"):
        unpack(zipped({MANIFEST: GOOD_MANIFEST, "out": b"/etc"}, {"out": stat.S_IFLNK | 0o777}), tmp_path / "v3")


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_devices_and_fifos_are_refused(tmp_path: Path, kind: bytes) -> None:
    dev = file_info("dev")
    dev.type = kind
    with pytest.raises(ArchiveError, match="device file, fifo"):
        unpack(good_tar((dev, None)), tmp_path / "v1")
    with pytest.raises(ArchiveError, match="not a regular file"):
        unpack(zipped({MANIFEST: GOOD_MANIFEST, "fifo": b""}, {"fifo": stat.S_IFIFO | 0o644}), tmp_path / "v2")


def test_a_zip_bomb_by_ratio_is_refused(tmp_path: Path) -> None:
    data = zipped({MANIFEST: GOOD_MANIFEST, "zeros": bytes(4 << 20)})
    assert len(data) < 40_000
    with pytest.raises(ArchiveError, match="times its size"):
        unpack(data, tmp_path / "v1", Caps(max_ratio=50))
    bomb = good_tar((file_info("zeros"), bytes(4 << 20)))
    with pytest.raises(ArchiveError, match="times its size"):
        unpack(bomb, tmp_path / "v2", Caps(max_ratio=50))
    assert not (tmp_path / "v2").exists()


def test_a_zip_bomb_by_count_and_too_many_files_are_refused(tmp_path: Path) -> None:
    many = {MANIFEST: GOOD_MANIFEST, **{f"f{i}": b"" for i in range(300)}}
    with pytest.raises(ArchiveError, match="holds 301 members; this site takes at most 100"):
        unpack(zipped(many), tmp_path / "v1", Caps(max_files=100))
    tar = good_tar(*[(file_info(f"f{i}"), b"") for i in range(300)])
    with pytest.raises(ArchiveError, match="more than 100 members"):
        unpack(tar, tmp_path / "v2", Caps(max_files=100))


def test_too_large_unpacked_is_refused(tmp_path: Path) -> None:
    import os

    noise = os.urandom(300_000)  # does not compress: the ratio is fine, the size is not
    with pytest.raises(ArchiveError, match="at most 100,000 bytes"):
        unpack(zipped({MANIFEST: GOOD_MANIFEST, "noise": noise}), tmp_path / "v1", Caps(max_bytes=100_000))
    with pytest.raises(ArchiveError, match="at most 100,000 bytes"):
        unpack(good_tar((file_info("noise"), noise)), tmp_path / "v2", Caps(max_bytes=100_000))


def test_a_member_longer_than_declared_is_refused(tmp_path: Path) -> None:
    data = bytearray(zipped({MANIFEST: GOOD_MANIFEST, "big": b"A" * 5000}))
    # lie in both headers: declare 10 bytes unpacked
    for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = 0
        while (i := data.find(sig, start)) >= 0:
            name_len = int.from_bytes(data[i + (26 if sig == b"PK\x03\x04" else 28) :][:2], "little")
            name_at = i + (30 if sig == b"PK\x03\x04" else 46)
            if data[name_at : name_at + name_len] == b"big":
                data[i + off : i + off + 4] = (10).to_bytes(4, "little")
            start = i + 4
    with pytest.raises(ArchiveError):
        unpack(bytes(data), tmp_path / "v1")
    assert not (tmp_path / "v1").exists()


@pytest.mark.parametrize(
    "manifest, words",
    [
        (None, "no referee.toml"),
        (b"command = 3\n", "referee.toml: Expected"),
        (b'command = ["x"]\ncomand = 1\n', "unknown field"),
        (b"command = [\n", "not valid TOML"),
        (b"command = []\n", "command is empty"),
    ],
)
def test_a_bad_manifest_is_refused(tmp_path: Path, manifest: bytes | None, words: str) -> None:
    files = [(file_info("bot.py"), b"print(1)\n")]
    if manifest is not None:
        files.append((file_info(MANIFEST), manifest))
    with pytest.raises(ArchiveError, match=words):
        unpack(tgz(files), tmp_path / "v1")


def test_not_an_archive_and_a_damaged_one(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="neither a zip nor a tar.gz"):
        unpack(b"hello", tmp_path / "v1")
    with pytest.raises(ArchiveError, match="damaged"):
        unpack(good_tar()[:40], tmp_path / "v2")
    with pytest.raises(ArchiveError, match="appears twice"):
        unpack(good_tar((file_info("bot.py"), b"again")), tmp_path / "v3")


def test_every_starter_has_a_manifest_matching_its_readme() -> None:
    import re

    import msgspec

    from referee.site.archive import Manifest
    from tests.site.conftest import ROOT

    for folder in sorted((ROOT / "starters").iterdir()):
        if not folder.is_dir():
            continue
        m = msgspec.toml.decode((folder / MANIFEST).read_bytes(), type=Manifest)
        readme = (folder / "README.md").read_text()
        build = re.search(r"^Build: `([^`]+)`", readme, re.M)
        assert m.build == (build[1] if build else None), folder.name
        assert f"--runtime {m.runtime} " in readme, folder.name
