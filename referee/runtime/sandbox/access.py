"""A bot under a host uid of its own reaching what it needs: folders it may not
enter covered (a tmpfs holding only the needed paths), folders it may not read or
write mounted idmapped."""

from __future__ import annotations

import ctypes
import fcntl
import os
import stat
import subprocess
from typing import TYPE_CHECKING, Any

from referee.errors import UserError

from . import uids as _uids
from .child import Child
from .linux import (
    AT_EMPTY_PATH,
    AT_FDCWD,
    AT_RECURSIVE,
    CLONE_NEWUSER,
    MOUNT_ATTR_IDMAP,
    MOUNT_ATTR_NODEV,
    MOUNT_ATTR_NOSUID,
    MOUNT_ATTR_RDONLY,
    MOVE_MOUNT_F_EMPTY_PATH,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_RDONLY,
    MS_REC,
    OPEN_TREE_CLONE,
    SYS_MOUNT_SETATTR,
    SYS_MOVE_MOUNT,
    SYS_OPEN_TREE,
    MountAttr,
    mount,
    syscall,
    unshare,
)

if TYPE_CHECKING:
    from .plan import SpawnPlan


def _can_enter(st: os.stat_result, uid: int, gid: int, bits: int = 0o1) -> bool:
    """Do the permission bits of ``st`` give ``uid``/``gid`` all of ``bits`` (as o: 1 x, 4 r)?"""
    if st.st_uid == uid:
        return (st.st_mode >> 6) & bits == bits
    if st.st_gid == gid:
        return (st.st_mode >> 3) & bits == bits
    return st.st_mode & bits == bits


def _covers(paths: list[str], uid: int, gid: int) -> list[tuple[str, list[str]]]:
    """Where ``uid`` cannot reach the host ``paths`` a bot needs (a folder on
    the way it may not enter: the interpreter in /root/.pyenv, /root being
    0700): ``(folder, [paths inside it])``, the outermost such folder each.
    The child covers each folder with an empty tmpfs that holds only those
    paths, bind-mounted (:func:`expose`): the bot reaches what it needs and
    nothing else of that folder."""
    pooled = uid == gid and uid in _uids._UIDS_IN_USE
    out: dict[str, list[str]] = {}
    for p in paths:
        p = os.path.abspath(p)
        block = _blocked_at(os.path.dirname(p), uid, gid, pooled)
        if block is not None:
            out.setdefault(block, [])
            if p not in out[block]:
                out[block].append(p)
    return sorted(out.items())


def _blocked_at(folder: str, uid: int, gid: int, pooled: bool) -> str | None:
    """The outermost folder from ``/`` down to ``folder`` that ``uid`` may not
    enter, or None. For a uid of the pool (which owns none of the folders on
    the way) the answer is the same for every such uid: it is kept
    (:data:`_BLOCKED`; a folder opened since is then covered for nothing, one
    closed since stops the bot's start with an error - never more access)."""
    if pooled and folder in _BLOCKED:
        return _BLOCKED[folder]
    found = None
    owned = False  # a folder on the way belongs to this uid or gid: the answer is its own
    cur = "/"
    for part in folder.strip("/").split("/") if folder != "/" else ():
        cur = os.path.join(cur, part)
        try:
            st = os.stat(cur)
        except OSError:
            break
        owned = owned or st.st_uid == uid or st.st_gid == gid
        if not _can_enter(st, uid, gid):
            found = cur
            break
    if pooled and not owned:
        if len(_BLOCKED) > 1024:
            _BLOCKED.clear()
        _BLOCKED[folder] = found
    return found


#: :func:`_blocked_at` of the pool's uids, by folder
_BLOCKED: dict[str, str | None] = {}


def _idmap_userns(owner: tuple[int, int], ids: tuple[int, int]) -> int:
    """An fd of a user namespace mapping ``owner`` (uid, gid) to ``ids``: the
    idmapping of a ``writable`` folder's mount, on which the bot (``ids``)
    owns what ``owner`` owns on disk and writes files ``owner`` owns."""
    proc = subprocess.Popen(
        ["/bin/sleep", "60"],
        preexec_fn=lambda: unshare(CLONE_NEWUSER),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with open(f"/proc/{proc.pid}/uid_map", "w") as f:
            f.write(f"{owner[0]} {ids[0]} 1")
        with open(f"/proc/{proc.pid}/gid_map", "w") as f:
            f.write(f"{owner[1]} {ids[1]} 1")
        fd = os.open(f"/proc/{proc.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(fd)
        return high
    finally:
        proc.kill()
        proc.wait()


def uid_setup(
    plan: SpawnPlan, spec: Any, ids: tuple[int, int], needed: list[str], writable: str | None
) -> tuple[list[tuple[str, list[str]]], list[tuple[str, int, bool]]]:
    """What the child prepares, as root, so that the bot running as ``ids``
    reaches the host paths it ``needed`` (:func:`_covers`) and may read them
    and write its ``writable`` folder: ``(covers, idmaps)``. A needed path the
    bot's uid may not read itself (a bot folder of mode 0700), and the
    writable folder, are mounted idmapped (``(path, user namespace fd,
    writable)``): on that mount the path's owner is the bot - read-only but
    for the writable folder, where what the bot writes belongs to the owner
    on disk. ``UserError`` saying which path, which uid and what to do where
    the machine cannot do that."""
    covers = _covers(needed, ids[0], ids[1])
    idmaps: list[tuple[str, int, bool]] = []
    for p in sorted({os.path.abspath(x) for x in needed}, key=lambda x: x.count("/")):
        if p == plan.workdir:
            continue  # made later, the bot's own
        try:
            st = os.stat(p)
        except OSError:
            continue  # not there (the bot will say so)
        if (st.st_uid, st.st_gid) == ids:
            continue
        rw = p == writable
        bits = 0o5 if stat.S_ISDIR(st.st_mode) else 0o4
        if not rw and _can_enter(st, ids[0], ids[1], bits):
            continue
        owner = (st.st_uid, st.st_gid)
        try:
            if owner not in plan._idmap_fds:
                plan._idmap_fds[owner] = _idmap_userns(owner, ids)
        except OSError as exc:
            mode = f"mode {stat.S_IMODE(st.st_mode):04o}, owner uid {st.st_uid}"
            raise UserError(
                f"bot {spec.name!r} runs as host uid {ids[0]}, which may not "
                f"{'write' if rw else 'read'} {p} ({mode}), and this machine cannot mount it idmapped for "
                f"the bot ({exc.strerror or exc}); make it {'the bot user' if rw else 'readable for others'}'s "
                f"(chown, or chmod o+r{'x' if bits == 0o5 else ''}), or set limits.user to its owner"
            ) from None
        idmaps.append((p, plan._idmap_fds[owner], rw))
        if rw:
            plan._idmapped_writable = p
    return covers, idmaps


def strip_setid(folder: str) -> None:
    """After a bot wrote ``folder`` through an idmapped mount - its files belong
    to the folder's owner on disk, perhaps root - clear every setuid and setgid
    bit it set there (the mount itself is nosuid; this is for everyone else who
    may run a file from the folder). Never raises."""
    for top, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(top, name)
            try:
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode) and st.st_mode & (stat.S_ISUID | stat.S_ISGID):
                    os.chmod(path, stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
            except OSError:
                pass


def expose(child: Child) -> None:
    """In the child, still root, in a mount namespace of the bot's own: cover
    each folder of ``child.covers`` with a tmpfs holding only the paths the
    bot needs from it (bind-mounted), and mount ``child.idmaps`` idmapped (on
    them their owner's files are the bot's; what it writes is its owner's on
    disk), read-only unless writable."""
    old = os.umask(0o022)
    try:
        fds = [(p, os.open(p, os.O_PATH | os.O_CLOEXEC)) for _f, paths in child.covers for p in paths]
        trees = []
        for path, userns, writable in child.idmaps:
            tree = syscall(SYS_OPEN_TREE, AT_FDCWD, path.encode(), OPEN_TREE_CLONE | AT_RECURSIVE | os.O_CLOEXEC)
            trees.append((path, tree))
            flags = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (0 if writable else MOUNT_ATTR_RDONLY)
            attr = MountAttr(flags, 0, 0, userns)
            syscall(SYS_MOUNT_SETATTR, tree, b"", AT_EMPTY_PATH | AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr))
        for folder, _paths in child.covers:
            mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
        for p, fd in fds:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.makedirs(p, 0o755, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(p), 0o755, exist_ok=True)
                os.close(os.open(p, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
            mount(f"/proc/self/fd/{fd}", p, None, MS_BIND | MS_REC)
            os.close(fd)
        for path, tree in trees:
            syscall(SYS_MOVE_MOUNT, tree, b"", AT_FDCWD, path.encode(), MOVE_MOUNT_F_EMPTY_PATH)
            os.close(tree)
        for path in child.hidden:
            if os.path.isdir(path):
                mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555")
            else:
                mount("/dev/null", path, None, MS_BIND)
    finally:
        os.umask(old)
