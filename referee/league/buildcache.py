"""The build cache: a bot's ``build`` runs once per night, and again only when its folder or its command changes.

A night's output folder keeps ``OUT/builds.json``: for every bot built
successfully, a :class:`BuildRecord` of what the build started from and what
it made. Before a build, :func:`folder_state` reads the bot's folder (every
file's path and the SHA-256 of its contents, a symbolic link's target;
folders inside that are not the bot's - the night's output folder, the
config file - left out). The build is skipped (:func:`is_current`) when

* its command and ``env`` are the recorded ones,
* every file the build made, changed or removed (its *outputs*: what differs
  between the folder before and after it) is as the build left it, and
* every other file (the *sources*) is as it was before the build (one hash
  over their paths and hashes).

So editing a source, deleting the compiled program or changing the ``build``
command rebuilds; a resumed, grown or laddered night does not. A file the bot
itself writes into its folder while it plays counts as a change to the
sources (the next run rebuilds). ``--rebuild`` (:func:`referee.league.preflight.run_builds`'s
``rebuild``) rebuilds regardless. A failed build removes the bot's record. A
folder too large to hash at every run (more than :data:`MOST_FILES` files or
:data:`MOST_BYTES` bytes) is built every time.

Errors: a damaged or unreadable ``builds.json`` is read as empty (every bot is
built again); one that cannot be written raises ``OSError``.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Collection, Mapping
from pathlib import Path

import msgspec

#: the build cache's file in a night's output folder
RECORD_NAME = "builds.json"

#: what a file removed by the build is recorded as
ABSENT = ""


class BuildRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One bot's successful build: its ``command`` and ``env``, the hash of the
    files it did not touch (``sources``), and every file it made, changed or
    removed (path relative to the bot's folder -> content hash, :data:`ABSENT`
    for a removed one)."""

    command: str | list[str]
    env: dict[str, str] | None
    sources: str
    outputs: dict[str, str]


class _Records(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The file ``builds.json``: the records by bot name."""

    builds: dict[str, BuildRecord]


def _file_hash(path: str) -> str:
    """``sha256:HEX`` of the file at ``path``; a path that became a link or a FIFO since it was
    listed is not followed nor waited on (``unreadable:ERRNO``)."""
    h = hashlib.sha256()
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
        with open(fd, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    return "sha256:" + h.hexdigest()


#: a bot folder larger than this (files, bytes) is not hashed: its build runs every time
MOST_FILES = 50_000
MOST_BYTES = 4 * 1024**3


def folder_state(folder: str | Path, leave_out: Collection[str | Path] = ()) -> dict[str, str] | None:
    """Every file under ``folder`` (path relative to it -> ``sha256:...`` of its contents,
    ``link:TARGET`` for a symbolic link, which is not followed); paths in ``leave_out``
    (files or folders, wherever they are) are not read. None for a folder of more than
    :data:`MOST_FILES` files or :data:`MOST_BYTES` bytes (not worth hashing at every run)."""
    root = os.path.realpath(folder)
    skip = {os.path.realpath(p) for p in leave_out}
    links: dict[str, str] = {}
    files: list[str] = []
    size = 0
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if os.path.join(top, d) not in skip)
        for name in names + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            path = os.path.join(top, name)
            if path in skip:
                continue
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                try:
                    links[path] = "link:" + os.readlink(path)
                except OSError as exc:
                    links[path] = f"unreadable:{exc.errno}"
            elif stat.S_ISREG(st.st_mode):
                files.append(path)
                size += st.st_size
            if len(files) + len(links) > MOST_FILES or size > MOST_BYTES:
                return None
    state = {os.path.relpath(p, root): h for p, h in links.items()}
    for path in files:
        state[os.path.relpath(path, root)] = _file_hash(path)
    return dict(sorted(state.items()))


def _digest(state: Mapping[str, str]) -> str:
    h = hashlib.sha256()
    for rel in sorted(state):
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0" + state[rel].encode() + b"\n")
    return h.hexdigest()


def record_build(
    command: str | list[str], env: dict[str, str] | None, before: Mapping[str, str], after: Mapping[str, str]
) -> BuildRecord:
    """The record of a successful build: the folder ``before`` it and ``after`` it (:func:`folder_state`)."""
    outputs = {p: after.get(p, ABSENT) for p in set(before) | set(after) if before.get(p) != after.get(p)}
    sources = {p: h for p, h in before.items() if p not in outputs}
    return BuildRecord(command=command, env=env, sources=_digest(sources), outputs=dict(sorted(outputs.items())))


def is_current(
    record: BuildRecord | None, command: str | list[str], env: dict[str, str] | None, now: Mapping[str, str]
) -> bool:
    """Whether ``record`` still stands for a build of ``command`` with ``env`` in a folder
    now in state ``now`` (see the module docstring)."""
    if record is None or record.command != command or record.env != env:
        return False
    if any(now.get(p, ABSENT) != h for p, h in record.outputs.items()):
        return False
    return _digest({p: h for p, h in now.items() if p not in record.outputs}) == record.sources


def load_records(out: Path) -> dict[str, BuildRecord]:
    """The records in ``out/builds.json`` by bot name (empty when it is missing or damaged)."""
    try:
        data = (out / RECORD_NAME).read_bytes()
        return dict(msgspec.json.decode(data, type=_Records).builds)
    except (OSError, msgspec.DecodeError):
        return {}


def save_records(out: Path, records: Mapping[str, BuildRecord]) -> None:
    """Write ``out/builds.json`` (atomically). Raises ``OSError``."""
    from referee.fileio import write_atomic

    text = msgspec.json.format(msgspec.json.encode(_Records(builds=dict(sorted(records.items())))), indent=2)
    write_atomic(out / RECORD_NAME, text + b"\n")
