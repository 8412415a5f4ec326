"""Host uids for bots: the range a root referee runs its bots as, the pool that
hands one to each bot (and build), and named users (``limits.user``)."""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from referee.errors import UserError


def gid_of(uid: int) -> int:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_gid
    except KeyError:
        return uid


def as_user(ids: tuple[int, int] | None) -> Callable[[], None] | None:
    if ids is None:
        return None

    def switch() -> None:
        os.setgroups([])
        os.setgid(ids[1])
        os.setuid(ids[0])

    return switch


def resolve_user(user: str | int) -> tuple[int, int]:
    """``(uid, gid)`` of ``user``; ``ValueError`` with a clear text if unknown or
    if switching users needs root and the referee is not root."""
    import pwd

    try:
        entry = pwd.getpwuid(int(user)) if isinstance(user, int) or str(user).isdigit() else pwd.getpwnam(str(user))
    except KeyError:
        raise ValueError(f"user = {user!r}: no such user on this machine") from None
    if entry.pw_uid != os.geteuid() and os.geteuid() != 0:
        raise ValueError(
            f"user = {user!r}: running bots as another user needs the referee to run as root "
            f"(it runs as uid {os.geteuid()}); leave user out to run them as yourself"
        )
    return entry.pw_uid, entry.pw_gid


def check_reachable(path: str, uid: int, user: Any, what: str = "the bots' temporary folders are made in") -> None:
    """``UserError`` unless every folder above ``path`` lets ``uid`` pass."""
    parent = os.path.dirname(path)
    while True:
        st = os.stat(parent)
        if not (st.st_mode & 0o001 or (st.st_uid == uid and st.st_mode & 0o100)):
            raise UserError(
                f"user = {user!r}: {what} {os.path.dirname(path)}, but that user "
                f"cannot enter {parent}; "
                + (
                    "set TMPDIR to a folder it can reach (e.g. /var/tmp)"
                    if "temporary" in what
                    else "make it reachable (chmod o+x) or move it"
                )
            )
        if parent == "/":
            return
        parent = os.path.dirname(parent)


# --------------------------------------------------------------------------
# a host uid of its own for every bot (a root referee without ``user``)

#: the default range of host uids (and gids) a root referee gives its bots: above
#: systemd's container range (up to 0x6FFFFFFF) and below its foreign range (0x7FFE0000)
UID_BASE = 2_000_000_000
UID_COUNT = 65536
#: where referee processes on one host lock the uids their bots run as: one file per
#: block of :data:`UID_BLOCK` uids (``block-N``: uids N * UID_BLOCK ... + UID_BLOCK - 1)
UID_LOCK_DIR = "/run/referee-uids"
#: uids locked at once: a referee process takes a block (one ``flock``) and hands its
#: uids to its bots without another system call; more bots at once take another block
UID_BLOCK = 64

#: this process's blocks: block number -> the fd holding its lock (kept for the process's life)
_BLOCKS: dict[int, int] = {}
_UIDS_IN_USE: set[int] = set()
_UID_POOL_LOCK = threading.Lock()
_LOCK_DIRS: dict[int, str] = {}  # euid -> the lock folder, checked once
_OWNER = [os.getpid()]  # the process the blocks are locked for (a forked child has none of its own)


def _forget_inherited() -> None:
    """In a process forked from the one that locked the blocks: drop them (the
    locks are the parent's, and so are the uids it hands out)."""
    if _OWNER[0] != os.getpid():
        for fd in _BLOCKS.values():
            try:
                os.close(fd)
            except OSError:
                pass
        _BLOCKS.clear()
        _UIDS_IN_USE.clear()
        _OWNER[0] = os.getpid()


def uid_range(limits: Any = None) -> tuple[int, int]:
    """``(first, count)``: the host uids a root referee runs its bots as -
    ``limits.uid_base`` / ``uid_count``, else ``REFEREE_UID_BASE`` /
    ``REFEREE_UID_COUNT`` from the environment, else :data:`UID_BASE` and
    :data:`UID_COUNT`. ``UserError`` for a bad value or a range that holds
    uid 0 or reaches past 2**32 - 2."""
    out = []
    for key, env, default in (
        ("uid_base", "REFEREE_UID_BASE", UID_BASE),
        ("uid_count", "REFEREE_UID_COUNT", UID_COUNT),
    ):
        value = getattr(limits, key, None)
        if value is None:
            text = os.environ.get(env, "").strip()
            if text:
                if not text.isdigit() or int(text) < 1:
                    raise UserError(f"{env}={text!r}: expected a whole number >= 1")
                value = int(text)
            else:
                value = default
        out.append(int(value))
    first, count = out
    if first < 1 or count < 1 or first + count > (1 << 32) - 2:
        raise UserError(
            f"uid_base = {first}, uid_count = {count}: the bots' host uids must lie in 1 .. 4294967293 "
            "(never 0, never (uid_t) -1)"
        )
    return first, count


def _uid_lock_dir() -> str:
    """The lock folder (root's own, 0700), made and checked on first use."""
    euid = os.geteuid()
    if euid in _LOCK_DIRS:
        return _LOCK_DIRS[euid]
    for top in (UID_LOCK_DIR, os.path.join(tempfile.gettempdir(), "referee-uids-0")):
        try:
            os.makedirs(top, mode=0o700, exist_ok=True)
            st = os.lstat(top)
        except OSError:
            continue
        if st.st_uid == euid and not os.path.islink(top) and not st.st_mode & 0o022:
            _LOCK_DIRS[euid] = top
            return top
    raise UserError(f"cannot make a private folder to lock the bots' uids in ({UID_LOCK_DIR})")


def _lock_block(top: str, block: int) -> int | None:
    """An fd holding the exclusive ``flock`` of ``block`` (fd >= 10, close-on-exec), or
    None when another referee process holds it."""
    fd = os.open(os.path.join(top, f"block-{block}"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


def _free_uid(first: int, count: int, blocks: list[int]) -> tuple[int, int] | None:
    """A uid of the range in one of ``blocks`` (this process's) not in use here, with its block's fd."""
    for block in blocks:
        lo, hi = max(first, block * UID_BLOCK), min(first + count, (block + 1) * UID_BLOCK)
        for uid in range(lo, hi):
            if uid not in _UIDS_IN_USE:
                return uid, _BLOCKS[block]
    return None


def allocate_uid(limits: Any = None) -> tuple[int, int]:
    """A host uid no other bot runs as right now: ``(uid, lock_fd)``. The
    uid is taken in this process (a set) from a block of :data:`UID_BLOCK`
    uids this process holds on this host (an exclusive ``flock`` on
    ``UID_LOCK_DIR/block-N``, which every referee process honours; blocks are
    numbered over the whole uid space, so the ranges of different configs meet
    on the same files). ``lock_fd`` is the block's lock: the bot's watcher
    keeps a copy until the bot is dead, so a block (and its uids) passes to
    another process only once nothing runs as its uids any more - even when
    the referee was killed. A process keeps its blocks; referee processes
    start their search for a block at different places (from their pid).
    Give the uid back with :func:`release_uid`. ``UserError`` when every uid
    of the range is taken."""
    first, count = uid_range(limits)
    lo, hi = first // UID_BLOCK, (first + count - 1) // UID_BLOCK
    with _UID_POOL_LOCK:
        _forget_inherited()
        found = _free_uid(first, count, [b for b in _BLOCKS if lo <= b <= hi])
        if found is None:
            top = _uid_lock_dir()
            n = hi - lo + 1
            start = (os.getpid() * 7919) % n
            for i in range(n):
                block = lo + (start + i) % n
                if block in _BLOCKS:
                    continue
                fd = _lock_block(top, block)
                if fd is not None:
                    _BLOCKS[block] = fd
                    found = _free_uid(first, count, [block])
                    break
        if found is None:
            raise UserError(
                f"all {count} bot uids from {first} are in use on this host; raise uid_count "
                "(limits, or REFEREE_UID_COUNT) or run fewer bots at once"
            )
        _UIDS_IN_USE.add(found[0])
        return found


def release_uid(uid: int, lock_fd: int) -> None:
    """Give back a uid of :func:`allocate_uid` (its block, and ``lock_fd``, stay
    this process's; the bot's watcher may hold a copy of the lock a little longer)."""
    with _UID_POOL_LOCK:
        _UIDS_IN_USE.discard(uid)
