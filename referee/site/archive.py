"""Unpacking a submitted bot safely: a zip or a tar.gz with a manifest, into a fresh folder.

:func:`unpack(data, dest, caps)` refuses (:class:`ArchiveError`, a :class:`~referee.errors.UserError`
whose message says what to change) an archive that:

- is neither a zip nor a gzip-compressed tar (told apart by their first bytes, not by a file name);
- holds a member with an absolute path (``/x``, ``C:\\x``, ``\\x``), a ``..`` component, a NUL, an
  empty name, or two members of the same name;
- holds a link (symbolic or hard), a device file, a fifo or a socket: only regular files and folders;
- holds more than ``caps.max_files`` members (a bomb by count), declares or actually unpacks more
  than ``caps.max_bytes`` in all, a member whose data is longer than it declares, or unpacks to
  more than ``caps.max_ratio`` times its own size (a bomb by ratio); sizes are checked as declared
  before anything is written and counted again while each member streams out, so a lying header
  gains nothing;
- has no manifest :data:`MANIFEST` (at its top, or in its one top-level folder), or one that does not
  decode (:class:`Manifest`).

Nothing is written outside ``dest``, which must not exist (a fresh folder per version); on any refusal
``dest`` is removed again. Files are created with ``O_EXCL | O_NOFOLLOW``, mode 0644 (0755 when the
member was executable).
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, Literal

import msgspec

from referee.errors import UserError

#: the manifest's file name, at the top of the bot's folder
MANIFEST = "referee.toml"
CHUNK = 1 << 16


class ArchiveError(UserError):
    """A submission refused: the message says why and what to change."""


class Manifest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``referee.toml`` of a submitted bot: how to start it (``command``, as a league config's
    ``[[bots]] command``: an argv list or a shell string; ``{python}`` is the referee's Python), how
    to build it (``build``, run once in its folder in the sandbox) and its language preset
    (``runtime``: python, node, java, c, cpp, rust, go, csharp; :mod:`referee.runtime.runtimes`)."""

    command: str | list[str]
    build: str | list[str] | None = None
    runtime: str | None = None


@dataclass(frozen=True)
class Caps:
    max_bytes: int = 64 << 20
    max_files: int = 2000
    max_ratio: float = 100.0


def caps_of(settings: Any) -> Caps:
    """The caps of a site's ``[site]`` settings (``unpacked_mb``, ``max_files``, ``max_ratio``)."""
    return Caps(max_bytes=int(settings.unpacked_mb * 2**20), max_files=settings.max_files, max_ratio=settings.max_ratio)


FIX_ARCHIVE = (
    "pack your bot's folder again as a zip or tar.gz of plain files and folders (no links, no absolute or '..' "
    "paths) with referee.toml at its top, within this site's limits; referee submit DIR does it for you"
)


@dataclass(frozen=True)
class Unpacked:
    root: Path  # the bot's folder (holds the manifest): dest, or its one top-level folder
    manifest: Manifest
    files: int
    size: int
    kind: Literal["zip", "tar.gz"]


@dataclass(frozen=True)
class _Member:
    name: str  # the checked, normalised relative path
    kind: Literal["file", "dir"]
    size: int
    executable: bool


def kind_of(data: bytes) -> Literal["zip", "tar.gz"]:
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        return "zip"
    if data[:2] == b"\x1f\x8b":
        return "tar.gz"
    raise ArchiveError("the upload is neither a zip nor a tar.gz archive: pack your bot's folder as one of them")


def safe_name(raw: str) -> str:
    """A member's name as a safe relative path, or :class:`ArchiveError`."""
    if "\x00" in raw:
        raise ArchiveError(f"member {raw!r}: a NUL in its name")
    name = raw.replace("\\", "/") if "\\" in raw else raw
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError(f"member {raw!r}: an absolute path; pack the folder with relative paths only")
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(f"member {raw!r}: a '..' in its path; pack the folder without paths that leave it")
    if not parts:
        raise ArchiveError(f"member {raw!r}: an empty name")
    return "/".join(parts)


def _check_total(members: list[_Member], packed: int, caps: Caps) -> None:
    if len(members) > caps.max_files:
        raise ArchiveError(f"the archive holds {len(members)} members; this site takes at most {caps.max_files}")
    total = sum(m.size for m in members)
    _check_size(total, packed, caps, "declares")


def _check_size(total: int, packed: int, caps: Caps, verb: str) -> None:
    if total > caps.max_bytes:
        raise ArchiveError(
            f"the archive {verb} {total:,} bytes unpacked; this site takes at most {caps.max_bytes:,} bytes"
        )
    if packed > 0 and total > caps.max_ratio * max(packed, 1024):
        raise ArchiveError(
            f"the archive {verb} {total:,} bytes unpacked from {packed:,}: more than {caps.max_ratio:g} times its "
            "size (a zip bomb?); leave out what compresses that well"
        )


def _zip_members(zf: zipfile.ZipFile) -> list[tuple[_Member, zipfile.ZipInfo]]:
    out = []
    for info in zf.infolist():
        mode = info.external_attr >> 16
        name = safe_name(info.filename)
        if info.is_dir():
            out.append((_Member(name, "dir", 0, False), info))
            continue
        if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG):
            what = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file (a device, fifo or socket)"
            raise ArchiveError(f"member {info.filename!r} is {what}; only regular files and folders are taken")
        out.append((_Member(name, "file", info.file_size, bool(mode & 0o111)), info))
    return out


def _tar_member(info: tarfile.TarInfo) -> _Member:
    name = safe_name(info.name)
    if info.isdir():
        return _Member(name, "dir", 0, False)
    if info.issym() or info.islnk():
        kind = "a symbolic link" if info.issym() else "a hard link"
        raise ArchiveError(f"member {info.name!r} is {kind}; only regular files and folders are taken")
    if not info.isreg():
        raise ArchiveError(f"member {info.name!r} is a device file, fifo or socket; only regular files and folders")
    return _Member(name, "file", info.size, bool(info.mode & 0o111))


class _Writer:
    """Writes checked members under ``dest`` and counts what is actually written."""

    def __init__(self, dest: Path, packed: int, caps: Caps) -> None:
        self.dest = dest
        self.packed = packed
        self.caps = caps
        self.written = 0
        self.names: set[str] = set()
        self.files = 0

    def _parent(self, name: str) -> Path:
        path = self.dest / name
        path.parent.mkdir(parents=True, exist_ok=True)
        # a folder made above is real (no links are ever created), but check anyway
        real = os.path.realpath(path.parent)
        if not (real == str(self.dest) or real.startswith(str(self.dest) + os.sep)):
            raise ArchiveError(f"member {name!r} would be written outside the bot's folder")
        return path

    def add(self, m: _Member, stream: IO[bytes] | None) -> None:
        if m.name in self.names:
            raise ArchiveError(f"member {m.name!r} appears twice in the archive")
        self.names.add(m.name)
        if m.kind == "dir":
            self._parent(m.name + "/.")
            return
        path = self._parent(m.name)
        if path.is_dir():
            raise ArchiveError(f"member {m.name!r} is both a folder and a file")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755 if m.executable else 0o644)
        self.files += 1
        got = 0
        with os.fdopen(fd, "wb") as f:
            while stream is not None:
                chunk = stream.read(CHUNK)
                if not chunk:
                    break
                got += len(chunk)
                self.written += len(chunk)
                if got > m.size:
                    raise ArchiveError(f"member {m.name!r} holds more data than its header declares ({m.size:,} bytes)")
                _check_size(self.written, self.packed, self.caps, "unpacks")
                f.write(chunk)


def _read_manifest(dest: Path) -> tuple[Path, Manifest]:
    root = dest
    if not (dest / MANIFEST).is_file():
        tops = list(dest.iterdir())
        if len(tops) == 1 and tops[0].is_dir() and (tops[0] / MANIFEST).is_file():
            root = tops[0]
        else:
            raise ArchiveError(
                f"no {MANIFEST} at the top of the archive: add one to your bot's folder, e.g.\n"
                '  command = ["{python}", "bot.py"]\n'
                '  build = "make"      # optional\n'
                '  runtime = "python"  # optional'
            )
    try:
        manifest = msgspec.toml.decode((root / MANIFEST).read_bytes(), type=Manifest)
    except msgspec.ValidationError as exc:
        text = str(exc).replace("`$.", "`")
        raise ArchiveError(f"{MANIFEST}: {text} (it takes command, build and runtime)") from None
    except msgspec.DecodeError as exc:
        raise ArchiveError(f"{MANIFEST}: not valid TOML: {exc}") from None
    if not manifest.command or (isinstance(manifest.command, list) and not all(manifest.command)):
        raise ArchiveError(f'{MANIFEST}: command is empty; give an argv list such as ["{{python}}", "bot.py"]')
    return root, manifest


def unpack(data: bytes, dest: Path, caps: Caps = Caps()) -> Unpacked:
    """Check and unpack ``data`` into the new folder ``dest`` (see the module docstring)."""
    kind = kind_of(data)
    dest = Path(os.path.abspath(dest))
    dest.mkdir(parents=True, exist_ok=False)
    dest = Path(os.path.realpath(dest))
    try:
        writer = _Writer(dest, len(data), caps)
        if kind == "zip":
            _unzip(data, writer, caps)
        else:
            _untar(data, writer, caps)
        root, manifest = _read_manifest(dest)
        return Unpacked(root, manifest, writer.files, writer.written, kind)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _unzip(data: bytes, writer: _Writer, caps: Caps) -> None:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise ArchiveError(f"the zip archive is damaged ({exc}); pack it again") from None
    with zf:
        members = _zip_members(zf)
        _check_total([m for m, _ in members], len(data), caps)
        for m, info in members:
            try:
                if m.kind == "dir":
                    writer.add(m, None)
                else:
                    with zf.open(info) as stream:
                        writer.add(m, stream)
            except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, ValueError) as exc:
                raise ArchiveError(f"member {info.filename!r} cannot be unpacked ({exc}); pack it again") from None


def _tar_infos(tf: tarfile.TarFile, caps: Caps) -> Iterator[tarfile.TarInfo]:
    n = 0
    for info in tf:
        n += 1
        if n > caps.max_files:
            raise ArchiveError(f"the archive holds more than {caps.max_files} members; this site takes at most that")
        yield info


def _untar(data: bytes, writer: _Writer, caps: Caps) -> None:
    """A tar.gz is read as a stream (``r|gz``): each member is checked, then written, one by one;
    the running totals stop a bomb that declares small sizes and the count one that holds many."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r|gz") as tf:
            for info in _tar_infos(tf, caps):
                m = _tar_member(info)
                _check_size(writer.written + m.size, len(data), caps, "declares")
                writer.add(m, tf.extractfile(info) if m.kind == "file" else None)
    except ArchiveError:
        raise
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ArchiveError(f"the tar.gz archive is damaged ({exc}); pack it again") from None


def pack_folder(folder: Path) -> bytes:
    """A tar.gz of ``folder``'s regular files and folders (what ``referee submit`` uploads): names
    relative to it, no links, nothing outside it. Raises :class:`UserError` for a folder without a
    manifest."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UserError(f"{folder}: not a folder (give the folder of your bot, which holds {MANIFEST})")
    if not (folder / MANIFEST).is_file():
        raise UserError(f"{folder}: no {MANIFEST} in it; add one (see docs/SITE.md, 'The manifest')")
    buf = io.BytesIO()
    skip = {".git", "__pycache__", ".venv", "node_modules"}
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if d not in skip and not os.path.islink(os.path.join(dirpath, d)))
            for fn in sorted(filenames):
                path = os.path.join(dirpath, fn)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                tf.add(path, arcname=os.path.relpath(path, folder), recursive=False)
    return buf.getvalue()
