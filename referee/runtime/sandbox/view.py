"""What a bot sees of the host: the paths its command names, resolved; its own
folder; the mounts its sandbox makes; the protected paths it is refused; the
hints for a bot that failed on a path it cannot see; its environment."""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from referee.errors import UserError

from .linux import LANG

#: the system paths a runtime needs, mounted read-only (the ones that exist)
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = ("ld.so.cache", "alternatives", "localtime", "nsswitch.conf", "passwd", "group")
#: /etc files only a bot with network access needs (name resolution, TLS certificates)
ETC_NET = ("hosts", "resolv.conf", "gai.conf", "services", "ssl/certs", "pki/tls/certs")
#: /etc folders some runtimes reach through symlinks (Debian's Python, JDKs) or read (mono's dllmap config,
#: without which it cannot load its own native library)
ETC_GLOBS = ("python3", "java", "mono")
#: folders never mounted whole (a named file in them is mounted alone)
_NEVER_WHOLE = (
    "/",
    "/tmp",
    "/var/tmp",
    "/dev/shm",
    "/dev",
    "/proc",
    "/sys",
    "/run",
    "/etc",
    "/var",
    "/home",
    "/root",
    "/usr",
    "/opt",
    "/mnt",
    "/media",
    "/srv",
    "/boot",
)


# --------------------------------------------------------------------------
# what a bot may see (bwrap)

#: paths no bot ever sees: the league's output folder and config (see protect_paths), each with the
#: number of registrations that hold it (a path leaves when the last one is released)
_PROTECTED: Counter[str] = Counter()
#: other bots' own folders: hidden from a bot whose own folders they do not overlap
_OTHERS: Counter[str] = Counter()
#: the registrations of the innermost :func:`protection_scope` (None outside any: they stay)
_SCOPE: ContextVar[list[tuple[Counter[str], str]] | None] = ContextVar("protection_scope", default=None)


def protect_paths(secret: list[str] | tuple[str, ...] = (), bot_folders: list[str] | tuple[str, ...] = ()) -> None:
    """Register paths hidden from every bot in bubblewrap from now on (for this
    process, or until the :func:`protection_scope` it is called in ends):
    ``secret`` ones (a league's output folder and config) are never
    visible, and no bot whose sandbox would mount one of them - equal to it,
    holding it or inside it, also by a link - starts (:func:`check_view`);
    ``bot_folders`` (the bots' own folders) are refused the same way to every
    bot whose own folder is not that very folder. Both are kept as given and
    resolved (``realpath``)."""
    scope = _SCOPE.get()
    for table, paths in ((_PROTECTED, secret), (_OTHERS, bot_folders)):
        for p in paths:
            for q in {os.path.abspath(p), os.path.realpath(p)}:
                table[q] += 1
                if scope is not None:
                    scope.append((table, q))


@contextmanager
def protection_scope() -> Iterator[None]:
    """The paths :func:`protect_paths` registers inside (in this task and the tasks it starts) are
    released on the way out: a night's output folder, config and bots' folders are hidden for that
    night only, not from every later night of a long-lived process (the site's host, a test calling
    ``referee.cli.main``). A path another registration still holds (an enclosing scope's, a
    concurrent night's, one made outside any scope) stays protected."""
    added: list[tuple[Counter[str], str]] = []
    token = _SCOPE.set(added)
    try:
        yield
    finally:
        _SCOPE.reset(token)
        for table, q in added:
            table[q] -= 1
            if table[q] <= 0:
                del table[q]


_SYSTEM_PREFIXES = tuple(d + "/" for d in SYSTEM_DIRS)


def inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def is_system(path: str) -> bool:
    return path in SYSTEM_DIRS or path.startswith(_SYSTEM_PREFIXES)


def _program_path(word: str, env: dict[str, str] | None) -> str | None:
    if "/" in word:
        return word if os.path.isabs(word) and os.path.exists(word) else None
    path = (env or {}).get("PATH", os.environ.get("PATH", os.defpath))
    return shutil.which(word, path=path)


def _folder_for(path: str) -> str | None:
    """What to mount for a named file or folder: a folder itself; a file's
    folder - the install prefix for ``.../bin/prog`` - or the file alone in
    folders never mounted whole (``/tmp``...); None for such a folder itself."""
    path = os.path.normpath(path)
    if os.path.isdir(path):
        return None if path in _NEVER_WHOLE else path
    folder = os.path.dirname(path)
    if os.path.basename(folder) in ("bin", "sbin") and os.path.dirname(folder) not in _NEVER_WHOLE:
        folder = os.path.dirname(folder)
    elif os.path.basename(folder) == "shims" and os.path.dirname(folder) not in _NEVER_WHOLE:
        # a version manager's shim (pyenv, rbenv, asdf: ~/.pyenv/shims/python3) is a script that
        # runs the manager from its root, which holds the real interpreters: the whole root
        folder = os.path.dirname(folder)
    return path if folder in _NEVER_WHOLE else folder


def _command_words(command: list[str] | str) -> list[str]:
    """The words of a command: an argv list, or a shell string's words (``sh -c`` too)."""
    if isinstance(command, str):
        text = command
    elif len(command) >= 3 and command[0] == "/bin/sh" and command[1] == "-c":
        text = command[2]
    else:
        return list(command)
    try:
        return shlex.split(text)
    except ValueError:
        return []


@dataclass
class BotView:
    """What a bot's sandbox shows of the host besides the system (see
    :func:`bot_view`). Paths are resolved (``realpath``) unless said otherwise.

    ``folder``: the bot's own folder - its ``cwd`` when its config names one,
    else the folder of the first file its command names that is not an
    interpreter - or None (``python3 -m pkg``); ``REFEREE_BOT_DIR``.
    ``prefixes``: interpreters' install prefixes (a venv, pyenv, nvm; as
    named and resolved). ``named``: the other folders of files the command
    names outside the bot's folder. ``data``: the read-only data folders.
    ``links_out``: ``(named path, target)`` of links in the bot's folder that
    lead out of it (refused by :func:`check_view` unless into the system or a
    prefix)."""

    folder: str | None
    prefixes: list[str] = field(default_factory=list)
    named: list[str] = field(default_factory=list)
    data: list[str] = field(default_factory=list)
    links_out: list[tuple[str, str]] = field(default_factory=list)

    def mounts(self) -> list[str]:
        """Every host path to mount (sorted by depth; a path may lie inside another one)."""
        found = [*self.prefixes, *self.named, *self.data, *([self.folder] if self.folder else [])]
        return sorted({os.path.normpath(p) for p in found if not is_system(p)}, key=lambda p: (p.count("/"), p))


def bot_view(
    command: list[str] | str, base: str, env: dict[str, str] | None, named_cwd: bool, data: tuple[str, ...] = ()
) -> BotView:
    """What a bot whose ``command`` (as configured: relative paths from
    ``base``) sees of the host: its own folder, interpreters' prefixes, other
    folders its command names, its data folders. Nothing here depends on the
    directory the referee runs in. Never raises (:func:`check_view` judges)."""
    words = _command_words(command)
    base_real = os.path.realpath(base)
    folder = base_real if named_cwd and base_real not in _NEVER_WHOLE else None
    folder_lex = os.path.normpath(os.path.abspath(base)) if folder else None
    view = BotView(folder)
    files: list[tuple[str, str]] = []  # (as named, resolved): not interpreters
    for i, word in enumerate(words):
        if i == 0:
            if "/" in word and not os.path.isabs(word):  # ./bot, bin/bot: from its folder
                word = os.path.join(base, word)
            path = _program_path(word, env)
            if path is not None and not os.path.isabs(path):
                path = os.path.join(base, path)
            interp = path is not None and (
                "/" not in word
                or os.path.basename(os.path.dirname(os.path.normpath(path))) in ("bin", "sbin", "shims")
                or is_system(os.path.normpath(path))
            )
        else:
            full = word if os.path.isabs(word) else os.path.join(base, word)
            path = full if word and os.path.exists(full) else None
            # a program in a bin/ folder after a launcher (env VAR=1 .venv/bin/python bot.py): an interpreter
            interp = path is not None and os.path.basename(os.path.dirname(os.path.normpath(path))) in (
                "bin",
                "sbin",
                "shims",
            )
        if path is None:
            continue
        lex, real = os.path.normpath(os.path.abspath(path)), os.path.realpath(path)
        if interp:  # a symlink (a venv's python) needs its target too
            view.prefixes += [f for f in dict.fromkeys([_folder_for(lex), _folder_for(real)]) if f is not None]
        else:
            files.append((lex, real))
    for lex, real in files:
        if view.folder is None and not is_system(real):
            own = _folder_for(lex)
            if own is None:
                continue
            folder_lex, view.folder = own, os.path.realpath(own)
        if is_system(real) or (view.folder and inside(real, view.folder)):
            continue
        if any(inside(real, os.path.realpath(p)) for p in view.prefixes):
            continue
        if folder_lex is not None and inside(lex, folder_lex):
            view.links_out.append((lex, real))  # named inside its folder, but a link leads out of it
            continue
        view.named += [f for f in dict.fromkeys([_folder_for(lex), _folder_for(real)]) if f is not None]
    view.data = [os.path.realpath(d) for d in data]
    return view


def own_paths(argv: list[str], base: str, env: dict[str, str] | None, named_cwd: bool) -> list[str]:
    """The host paths a bot's sandbox mounts besides the system (see
    :func:`bot_view`), sorted by depth."""
    return bot_view(argv, base, env, named_cwd).mounts()


def check_view(name: str, view: BotView, data: tuple[str, ...] = ()) -> None:
    """Refuse (``UserError`` naming the bot and the path) a view that shows a
    protected path (:func:`protect_paths`): a mount equal to one, holding one
    or inside one - a link named in the command counts at its target -, a link
    in the bot's folder leading out of it (other than into the system and
    interpreters' prefixes), a data folder that does not exist."""
    for given, real in zip(data, view.data, strict=True):
        if not os.path.isdir(real):
            what = "is not a folder" if os.path.exists(real) else "does not exist"
            raise UserError(f"bot {name!r}: data folder {given} {what} (give read-only data as folders)")
    secret = sorted(p for p in tuple(_PROTECTED) if os.path.lexists(p))  # (one removed since it was registered: gone)
    # bots that name the same folder (scripts side by side, one program run twice) share it
    own = {f for f in (view.folder, *view.named) if f}
    others = sorted(o for o in tuple(_OTHERS) if os.path.realpath(o) not in own and o not in own)
    extra = {*view.prefixes, *view.data}  # not the bot's own: also refused inside another bot's folder
    for m in view.mounts():
        for p in secret:
            how = _overlap(m, p)
            if how:
                raise UserError(
                    f"bot {name!r}: its sandbox would mount {m}, which {how} {p}, a path no bot may see "
                    "(an output or log folder, a ledger, a config, a seed or deal file); give the bot a folder "
                    "of its own that holds none of them (cwd, or its program in that folder), or keep them "
                    "out of the bot's folder"
                )
        for o in others:
            how = _overlap(m, o)
            if how and (how != "lies inside" or m in extra):  # its own folders may lie inside a bigger one
                raise UserError(
                    f"bot {name!r}: its sandbox would mount {m}, which {how} {o}, another bot's folder; "
                    "give every bot a folder of its own"
                )
    for lex, real in view.links_out:
        what = next(
            (f", which {how} {p}, a path no bot may see" for p in secret if (how := _overlap(real, p))),
            next((f", which {how} {o}, another bot's folder" for o in others if (how := _overlap(real, o))), ""),
        )
        if what:
            raise UserError(f"bot {name!r}: {lex} (named in its command) leads by a link to {real}{what}")
        raise UserError(
            f"bot {name!r}: {lex} (named in its command) leads by a link to {real}, outside its folder "
            f"{view.folder}; links out of a bot's folder are followed only into system and interpreter "
            "folders: put the file in the bot's folder, or give its folder with data = [...] / --data"
        )


def _overlap(mount: str, protected: str) -> str | None:
    """How ``mount`` meets ``protected``: "is", "holds", "lies inside", or None."""
    p = os.path.realpath(protected)
    if mount in (protected, p):
        return "is"
    if inside(protected, mount) or inside(p, mount):
        return "holds"
    if inside(mount, protected) or inside(mount, p):
        return "lies inside"
    return None


def outermost(paths: list[str]) -> list[str]:
    """``paths`` (sorted by depth) without those inside another one."""
    out: list[str] = []
    for p in paths:
        if not any(inside(p, q) for q in out):
            out.append(p)
    return out


@functools.cache
def sdk_folder() -> str | None:
    """The bot SDK's package folder (``protocol/``: public code, standard library
    only), mounted read-only for every bot so that bots written with it - the
    sample bots insert the folder above their own into ``sys.path`` - find it."""
    try:
        import protocol

        return os.path.dirname(os.path.realpath(protocol.__file__))
    except (ImportError, TypeError):
        return None


def bot_folders(command: list[str] | str, cwd: str, named_cwd: bool) -> list[str]:
    """A bot's own folder (its ``cwd`` when its config names one, else the
    folder of its program or script: :func:`bot_view`), to refuse to the other
    bots (:func:`protect_paths`); empty when it has none."""
    folder = bot_view(command, cwd, None, named_cwd).folder
    return [folder] if folder else []


def masked_paths(binds: list[str], own: list[str]) -> list[str]:
    """Registered paths inside the mounted ``binds`` that this bot must not see."""
    out = []
    for p in sorted({*tuple(_PROTECTED), *tuple(_OTHERS)}):
        if not os.path.lexists(p) or not any(inside(p, b) and p != b for b in binds):
            continue
        if p not in _PROTECTED and any(inside(o, p) for o in own):
            continue  # another bot's folder that holds this bot's own files (a shared folder)
        out.append(p)
    return out


#: a path in a bot's error output: absolute, or relative with ``./`` / ``../``
_PATH_IN_TEXT = re.compile(r"""(?:(?<=[\s'"(=:,\[])|^)((?:/|\.\.?/)[^\s'"():,\]]+)""")
#: host paths a bot is never pointed at by a hint (its private or system folders)
_NO_HINT = ("/proc", "/sys", "/dev", "/run", "/etc")


def unseen_paths(text: str, mounts: list[str], folder: str | None) -> list[str]:
    """The paths named in ``text`` (a bot's stderr or fault detail) that exist
    on this machine but not in a sandbox mounting ``mounts`` (besides the
    system); relative ones (``../data/t.json``) are taken from the bot's
    ``folder`` - the bot runs in a temporary folder."""
    out: list[str] = []
    for m in _PATH_IN_TEXT.finditer(text):
        word = m.group(1).rstrip(".;")
        if not os.path.isabs(word):
            if folder is None:
                continue
            word = os.path.join(folder, word)
        host = os.path.normpath(word)
        if host in out or any(inside(host, d) for d in _NO_HINT) or is_system(host) or not os.path.exists(host):
            continue
        real = os.path.realpath(host)
        if not os.path.isabs(m.group(1)) or not any(inside(real, b) for b in mounts):
            out.append(host)
    return out


def unseen_hint(text: str, mounts: list[str], folder: str | None) -> str:
    """The hint of :meth:`SpawnPlan.view_hint` (``""`` when ``text`` names no such path)."""
    paths = unseen_paths(text, mounts, folder)
    if not paths:
        return ""
    path = paths[0]
    real = os.path.realpath(path)
    if folder is not None and inside(real, folder):
        return (
            f"; {path} exists on this machine and in the bot's folder {folder}, but the bot runs in a "
            "temporary folder: open it relative to REFEREE_BOT_DIR (the bot's folder), or give the bot a cwd"
        )
    where = real if os.path.isdir(real) else os.path.dirname(real)
    return (
        f"; {path} exists on this machine but not in the bot's sandbox, which shows only its own folder "
        f'({folder or "none"}) and the system: give the bot that folder read-only with data = ["{where}"] '
        f"in its [[bots]] entry of the league config (referee play, duel, check-bot: --data {where})"
    )


_SHELL_WORD = re.compile(r"(?<![^\s])([A-Za-z0-9_./+@%:,-]+)(?![^\s])")


def _absolutize(arg: str, base: str) -> str:
    """``arg`` as an absolute path if it names an existing file or folder
    (relative to ``base``), its folders resolved (``realpath``: a ``..`` after
    a folder the sandbox does not mount, ``/srv/a/../bots/bot.py``, would not
    resolve inside it) and its last part kept (a venv's ``python`` link stays
    a link); other words unchanged."""
    if not arg or arg.startswith("-") or arg in (".", ".."):
        return arg
    path = arg if os.path.isabs(arg) else os.path.join(base, arg)
    if (os.path.isabs(arg) or "/" in arg or "." in arg) and os.path.exists(path):
        if os.path.isdir(path):
            return os.path.realpath(path)
        return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    return arg


def resolve_command(command: list[str] | str, base: str) -> list[str]:
    """The argv to run ``command`` from another working directory: every
    argument naming an existing file or folder relative to ``base`` (e.g.
    ``bots/mine.py``) is made absolute. A shell string gets the same treatment
    for its plain words and runs as ``/bin/sh -c STRING``."""
    if isinstance(command, str):
        fixed = _SHELL_WORD.sub(lambda m: shlex.quote(_absolutize(m.group(1), base)), command)
        return ["/bin/sh", "-c", fixed]
    argv = list(command)
    return [argv[0] if "/" not in argv[0] else _absolutize(argv[0], base)] + [_absolutize(a, base) for a in argv[1:]]


def minimal_env(extra: dict[str, str] | None, home: str) -> dict[str, str]:
    """The scrubbed environment: ``PATH`` (the referee's), ``HOME`` and
    ``TMPDIR`` (the bot's working directory), ``LANG``/``LC_ALL`` C.UTF-8, then
    ``extra`` (what the config passes) on top."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": home,
        "TMPDIR": home,
        "LANG": LANG,
        "LC_ALL": LANG,
        "PYTHONUNBUFFERED": "1",
    }
    if extra:
        env.update(extra)
    return env
