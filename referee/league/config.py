"""League configuration: a TOML file decoded strictly into msgspec Structs.

:func:`load_config` reads a league config and returns a resolved :class:`League`
(paths made absolute, placeholders filled in, variants looked up through
:func:`referee.rules.get_variant`). Every mistake raises
:class:`referee.errors.UserError` whose message starts with the config file and
the key path of the mistake, e.g. (several mistakes: one message that lists
them all, one line each)::

    tournaments/x.toml: bots[2].command: expected a string or a list of strings, got an integer
    tournaments/x.toml: bots[0]: unknown key 'comand' (did you mean 'command'?)

The file format (all keys optional unless marked required)::

    name = "demo"            # league name (default: the file name without .toml)
    seed = 42                # master seed; every deal is derived from it. "secret": drawn at the
                             # first run, kept in the ledger only, shown once the night is complete
                             # (referee.league.secret)
    out = "out/demo"         # output directory, relative to this file
    concurrency = 2          # tables played at once (default: number of CPU cores)
    reuse = "session"        # "session": one process per seat for the deals of one rotation; "game": fresh per game;
                             # "table": one process per seat for a whole table (faster with few deals, but a
                             # bot that remembers sees each deal again: trusted bots only; the preset refuses it)
    fill = "none"            # "repeat": seat several instances of the same bots when bots < seats

    [clock]                  # move_ms, bank_ms, startup_ms, mode ("wall" | "cpu"), wall_ceiling_ms
    [limits]                 # resource limits and sandbox switches for every bot (docs/SECURITY.md):
                             # sandbox ("bwrap" | "basic" | "none"), require_sandbox, memory_mb,
                             # cpu_seconds, processes, file_size_mb, open_files, network, writable,
                             # build_seconds, build_network, pid_namespace, temp_workdir, clean_env, user
    [faults]                 # retries, max_line, max_decisions (default: automatic, see
                             # referee.runtime.spec.max_decisions_for), broken_bot
    [output]                 # compress = "zstd" (default: GAME.jsonl.zst) or "none" (GAME.jsonl)
    [competition]            # strict = true (implied by [limits] require_sandbox = true): the competition
                             # preset, everything a host needs on and what undoes it refused (COMPETITION)

    [[bots]]
    name = "alice"                                        # required, unique
    command = ["{python}", "random_bot.py"]               # required: argv list or shell string
    cwd = "../sample_bots"   # its own folder and working directory, relative to this file (default: a fresh
                             # temporary folder; relative paths in the command are resolved against this
                             # file's folder, and the bot's folder is its program's)
    data = ["../tables"]     # folders it may read besides its own (read-only; referee.runtime.sandbox)
    env = { LEVEL = "3" }    # extra environment variables (the rest of the environment is scrubbed)
    build = "make"           # run once before the league, in cwd, in the bot's sandbox
    clock = { move_ms = 2000 }   # per-bot clock overrides
    limits = { memory_mb = 512 } # this bot's limits, key by key on top of [limits]
    runtime = "java"         # a language preset (referee.runtime.runtimes: python, node, java, c, cpp,
                             # rust, go, csharp): its limits between [limits] and the bot's, its env under env

    [[variants]]
    name = "kwartet"         # required: a preset name, or the name of a custom variant
    rules = { ... }          # custom ask variant parameters (see referee.rules.get_variant)
    sizes = [3, 4]           # table sizes: one integer or a list (default: every size the bots can fill)
    deals = 2                # deals per table (each played in every seat rotation)
    match = "single"         # or { kind = "fixed", hands = 3 } or { kind = "race", target = 10 };
                             # both take max_hands (default 50): at most this many hands, tie-breaks included
    schedule = { seats_per_bot = 6 }   # this variant's schedule, key by key on top of [schedule]

    [schedule]               # who sits at which table, for every variant and size (default: round robin)
    kind = "balanced"        # "round-robin" (default): every combination of the bots, once;
                             # "balanced": every bot at seats_per_bot tables, pairs met as evenly as possible;
                             # "gauntlet": only tables with one challenger, the other seats from the field
    seats_per_bot = 12       # balanced and gauntlet: tables per bot (gauntlet: per challenger), per variant
                             # and size; 1 to 200 (MAX_SEATS_PER_BOT)
    challengers = ["new-a"]  # gauntlet: the bots on trial (names of [[bots]]); the others are the field

Placeholders in ``command`` and ``build``: ``{python}`` is the Python interpreter
running the referee, ``{config_dir}`` the folder holding the config file.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import sys
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec

from referee.core.schema_errors import parse_schema_error
from referee.core.spec import ClockSpec, FaultPolicy, max_decisions_for
from referee.errors import UserError
from referee.rules.match import MatchFormat

# --------------------------------------------------------------------------
# the file format


class _Cfg(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


class ClockConfig(_Cfg):
    move_ms: int = 1000
    bank_ms: int | None = None
    startup_ms: int = 10000
    mode: Literal["wall", "cpu"] = "wall"
    wall_ceiling_ms: int | None = None


class BotClockConfig(_Cfg):
    move_ms: int | None = None
    bank_ms: int | None = None
    startup_ms: int | None = None
    mode: Literal["wall", "cpu"] | None = None
    wall_ceiling_ms: int | None = None


class FaultConfig(_Cfg):
    retries: int = 0
    max_line: int = 65536
    #: a hand still running after this many decisions is aborted; None (the default): automatic,
    #: 5000 or 10 per card and seat for big custom decks (referee.runtime.spec.max_decisions_for)
    max_decisions: int | None = None
    #: a bot that fails the start check before the night (it cannot start, or its process
    #: exits, hangs or speaks another protocol before answering hello): "stop" the run with
    #: an error before any game (default), or let it "forfeit" all its games and play on
    broken_bot: Literal["stop", "forfeit"] = "stop"


class OutputConfig(_Cfg):
    #: game logs: "zstd" (default) writes each as GAME.jsonl.zst, compressed as it is written;
    #: "none" writes plain GAME.jsonl. Every reader takes both (docs/PERFORMANCE.md, "Compact logs")
    compress: Literal["zstd", "none"] = "zstd"


class CompetitionConfig(_Cfg):
    #: the competition preset (:data:`COMPETITION`); None: implied by ``[limits] require_sandbox = true``
    strict: bool | None = None


#: what ``[competition] strict = true`` turns on (``referee plan`` prints it); the keys it
#: refuses are in :func:`_refused_by_competition`
COMPETITION = (
    'every bot in bubblewrap only (require_sandbox = true; sandbox = "basic" or "none" refused; as root '
    "each bot runs under its own uid)",
    "no network for the bots (network = false; network = true refused)",
    "no writable folder: a bot writes only to a fresh temporary folder and /tmp of its own process, gone "
    "with it (writable = true refused)",
    "memory-proof sessions: no bot process plays the same deal twice (session cuts by rotation)",
    'a secret seed, drawn at the first run and revealed at the end (seed = "secret"; a fixed seed refused)',
    "growth only with a fresh secret seed per epoch for the games of the bots added",
    "CPU fairness: every bot timed and limited alike",
)


class BotConfig(_Cfg):
    name: str
    command: str | list[str]
    cwd: str | None = None
    env: dict[str, str] = {}
    build: str | list[str] | None = None
    clock: BotClockConfig | None = None
    limits: dict[str, Any] | None = None
    runtime: str | None = None  # a language preset (referee.runtime.runtimes)
    data: list[str] = []


class MatchConfig(_Cfg):
    kind: Literal["single", "fixed", "race"] = "single"
    hands: int | None = None
    target: int | None = None
    max_hands: int = 50


class ScheduleConfig(_Cfg):
    """``[schedule]``, or a variant's ``schedule`` (its keys replace the league's, key by key).
    A key left out is None: inherited (the league's table: round robin)."""

    kind: Literal["round-robin", "balanced", "gauntlet"] | None = None
    seats_per_bot: int | None = None
    challengers: list[str] | None = None


class VariantConfig(_Cfg):
    name: str
    rules: dict[str, Any] | None = None
    sizes: int | list[int] | None = None
    deals: int = 1
    match: str | MatchConfig = "single"
    schedule: ScheduleConfig | None = None


#: the config's ``seed`` that asks for a secret seed (:mod:`referee.league.secret`)
SECRET = "secret"


class LeagueConfig(_Cfg):
    name: str | None = None
    seed: int | Literal["secret"] = 0
    out: str | None = None
    concurrency: int | None = None
    reuse: Literal["session", "game", "table"] = "session"
    fill: Literal["none", "repeat"] = "none"
    clock: ClockConfig = msgspec.field(default_factory=ClockConfig)
    faults: FaultConfig = msgspec.field(default_factory=FaultConfig)
    output: OutputConfig = msgspec.field(default_factory=OutputConfig)
    limits: dict[str, Any] | None = None
    schedule: ScheduleConfig = msgspec.field(default_factory=ScheduleConfig)
    competition: CompetitionConfig = msgspec.field(default_factory=CompetitionConfig)
    bots: list[BotConfig] = []
    variants: list[VariantConfig] = []


#: config keys that do not change any game's result; a resumed league may change them freely
#: (dotted paths name keys inside a table)
NON_RESULT_KEYS = frozenset({"out", "concurrency", "name", "faults.broken_bot", "output"})

#: the master seed's range (as ``referee play --seed``)
SEED_LIMIT = 2**64

#: the most tables per bot of a balanced or gauntlet schedule (per variant and size): planning
#: a small field's greedy schedule grows faster than its tables (a 1,024-bot, 6-seat plan of
#: 200 tables a bot takes about 17 s); more games per table come from ``deals`` instead
MAX_SEATS_PER_BOT = 200

# --------------------------------------------------------------------------
# the resolved league


@dataclass(frozen=True)
class Bot:
    """One bot of the league, ready for the runtime."""

    name: str
    command: list[str] | str
    cwd: str
    env: dict[str, str] | None
    build: list[str] | str | None
    #: its own clock: the league clock with its ``clock`` overrides on top; None without overrides
    clock: ClockSpec | None
    limits: dict[str, Any] | None
    data: tuple[str, ...] = ()  # read-only data folders (resolved), besides its own folder


@dataclass(frozen=True)
class ScheduleSpec:
    """A variant's schedule, resolved: ``kind`` ("round-robin", "balanced", "gauntlet"),
    ``seats_per_bot`` (0 for a round robin) and the ``challengers`` (indices into
    ``League.bots``, in the order given; a gauntlet's only)."""

    kind: str = "round-robin"
    seats_per_bot: int = 0
    challengers: tuple[int, ...] = ()


@dataclass(frozen=True)
class Variant:
    """One variant of the league: its rules record, table sizes, deals, match format,
    schedule and fault policies, resolved to the runtime's types (``match``: the
    :class:`~referee.rules.match.MatchFormat`, kind "single" for one game per deal;
    ``policies``: the :class:`~referee.core.spec.FaultPolicy` of each size, in
    ``sizes`` order; see :meth:`policy`)."""

    name: str
    slug: str  # the variant's part of game ids
    rules: Any  # referee.rules.Rules
    sizes: tuple[int, ...]
    deals: int
    match: MatchFormat
    schedule: ScheduleSpec = ScheduleSpec()
    policies: tuple[FaultPolicy, ...] = ()

    def policy(self, size: int) -> FaultPolicy:
        """The fault policy of this variant's tables of ``size`` seats (``[faults]``;
        ``max_decisions``: the config's, or :func:`~referee.runtime.spec.max_decisions_for`
        of the variant and size)."""
        return self.policies[self.sizes.index(size)]


class Epoch(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One planning epoch of a night (:mod:`referee.league.roster`): the bots
    playing when it began (``bots``, by name, in joining order) and those it
    added (``added``; empty for the night's start). Balanced and gauntlet
    schedules plan their tables epoch by epoch (:mod:`referee.league.schedule`);
    the ledger's meta ``epochs`` lists them (JSON), absent until a night grows."""

    bots: tuple[str, ...]
    added: tuple[str, ...] = ()


@dataclass(frozen=True)
class League:
    path: Path
    config_dir: Path
    name: str
    #: the master seed; None for a secret seed not read from the ledger yet
    #: (:func:`referee.league.secret.settle_seed` fills it in before a game is scheduled)
    seed: int | None
    out: Path
    concurrency: int
    reuse: str
    fill: str
    #: the league clock (``[clock]``), resolved: what times every seat of a bot without its own
    clock: ClockSpec
    #: ``[faults]`` as written (``broken_bot`` and ``max_line``); each table's runtime
    #: policy is its variant's :meth:`Variant.policy`
    faults: FaultConfig
    bots: tuple[Bot, ...]
    variants: tuple[Variant, ...]
    raw: LeagueConfig = field(repr=False)
    #: the share of the schedule this run plays (``referee run --shard K/N``); None: the whole
    #: league. Not part of the canonical config (every shard has the same config); the ledger
    #: stores it separately (meta ``shard``)
    shard: Any = None  # referee.league.shards.Shard | None
    #: the night's bots by name in the order they joined it, withdrawn ones included (a night that
    #: grew, :mod:`referee.league.roster`); empty: ``bots`` in config order. The schedule numbers
    #: its tables over this list, so adding a bot never renumbers an earlier table
    roster: tuple[str, ...] = ()
    #: the planning epochs of a night that grew (``Epoch``; the ledger's meta ``epochs``); empty:
    #: one epoch, the roster (``slots``). Balanced and gauntlet tables are planned epoch by epoch
    epochs: tuple[Epoch, ...] = ()
    #: a secret night that grew: the secret of each epoch (index = epoch; entry 0 unused, the first
    #: epoch's is ``seed``), read from the ledger's meta ``epoch_secrets`` (:mod:`referee.league.secret`);
    #: every seed of an epoch's games is derived from it. Empty for a public night or one that never grew
    epoch_seeds: tuple[int | None, ...] = ()

    @property
    def slots(self) -> tuple[str, ...]:
        """The roster (see ``roster``): every bot that ever joined the night, in joining order."""
        return self.roster or tuple(b.name for b in self.bots)

    @property
    def withdrawn(self) -> tuple[str, ...]:
        """The bots of the roster that the config no longer has, in joining order."""
        names = {b.name for b in self.bots}
        return tuple(n for n in self.roster if n not in names)

    @property
    def secret(self) -> bool:
        """Whether the config says ``seed = "secret"``."""
        return self.raw.seed == SECRET

    @property
    def strict(self) -> bool:
        """Whether the competition preset is on (:func:`is_strict`)."""
        return is_strict(self.raw)

    @property
    def compress(self) -> bool:
        """Whether game logs are written compressed (``[output] compress``)."""
        return self.raw.output.compress == "zstd"

    def canonical(self) -> dict[str, Any]:
        """The config in canonical form (defaults filled in, keys sorted), without
        the keys that cannot change a result (:data:`NON_RESULT_KEYS`)."""
        return canonical_form(self.raw)


def canonical_form(cfg: LeagueConfig) -> dict[str, Any]:
    data = msgspec.to_builtins(cfg)
    if cfg.competition.strict is not True:
        # not given (or false): the canonical form of configs before [competition], so that a night
        # started with require_sandbox and a fixed seed resumes with strict = false
        data.pop("competition", None)
    data = _schedule_canonical(data)
    # a bot without a runtime preset keeps the canonical form it had before presets existed
    data["bots"] = [
        {k: v for k, v in b.items() if k != "runtime" or v is not None} if isinstance(b, dict) else b
        for b in data.get("bots", [])
    ]
    return _drop_non_result(data)


def is_strict(cfg: LeagueConfig) -> bool:
    """Whether the competition preset is on: ``[competition] strict``, or when
    that is not given, ``[limits] require_sandbox = true``."""
    if cfg.competition.strict is not None:
        return cfg.competition.strict
    return (cfg.limits or {}).get("require_sandbox") is True


#: what the competition preset refuses in a limits table: key -> (the refused values, why)
_COMPETITION_REFUSES: dict[str, tuple[tuple[Any, ...], str]] = {
    "sandbox": (("basic", "none", False), "runs every bot in bubblewrap only"),
    "require_sandbox": ((False,), "runs every bot in bubblewrap only"),
    "network": ((True,), "runs the bots without network"),
    "writable": ((True,), "gives no bot a writable folder (what a bot writes must not outlive its process)"),
}


def _refused_by_competition(table: dict[str, Any] | None, where: str, err: ErrorAt) -> None:
    """Raise ``err`` for the first key of a limits ``table`` that undoes the competition preset."""
    for key, (values, why) in _COMPETITION_REFUSES.items():
        if key not in (table or {}):
            continue
        value = (table or {})[key]
        if any(value is v if isinstance(v, bool) else value == v for v in values):
            shown = f'"{value}"' if isinstance(value, str) else str(value).lower()
            raise err(
                f"{where}.{key}",
                f"{key} = {shown} is refused by the competition preset ([competition] strict = true, "
                f"implied by require_sandbox = true), which {why}; remove it "
                "(or set [competition] strict = false for a night that is no competition)",
            )


def _schedule_canonical(data: dict[str, Any]) -> dict[str, Any]:
    """The schedule keys in canonical form: only the keys given, and no ``schedule`` at all
    where nothing is given (a round robin's config, written before schedules existed, keeps
    exactly its old canonical form, so its ledgers still match)."""

    def given(table: Any) -> dict[str, Any] | None:
        if not isinstance(table, dict):
            return None
        out = {k: v for k, v in table.items() if v is not None}
        return out or None

    top = given(data.get("schedule"))
    if top == {"kind": "round-robin"}:
        top = None
    data = {k: v for k, v in data.items() if k != "schedule"}
    if top is not None:
        data["schedule"] = top
    variants = data.get("variants")
    if isinstance(variants, list):
        fixed = []
        for v in variants:
            if isinstance(v, dict) and "schedule" in v:
                own = given(v["schedule"])
                v = {k: x for k, x in v.items() if k != "schedule"}
                if own is not None:
                    v["schedule"] = own
            fixed.append(v)
        data["variants"] = fixed
    return data


def _drop_non_result(data: dict[str, Any]) -> dict[str, Any]:
    data = dict(data)
    for key in NON_RESULT_KEYS:
        head, _, rest = key.partition(".")
        if not rest:
            data.pop(key, None)
        elif isinstance(data.get(head), dict):
            data[head] = {k: v for k, v in data[head].items() if k != rest}
    ordered: dict[str, Any] = _sort_keys(data)
    return ordered


def normalize_stored(stored: dict[str, Any] | None) -> dict[str, Any] | None:
    """A canonical config read from a ledger, in today's canonical form: keys
    added since it was written get their defaults, keys that no longer count
    (:data:`NON_RESULT_KEYS`, e.g. ``name``) are dropped. A stored config that
    does not decode any more is returned without those keys, for the diff."""
    if not isinstance(stored, dict):
        return stored
    try:
        return canonical_form(msgspec.convert(stored, type=LeagueConfig))
    except (msgspec.ValidationError, TypeError, ValueError):
        return _drop_non_result(_schedule_canonical(stored))


def _sort_keys(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _sort_keys(x[k]) for k in sorted(x)}
    if isinstance(x, list):
        return [_sort_keys(v) for v in x]
    return x


def diff_canonical(old: Any, new: Any, path: str = "") -> list[str]:
    """Key-by-key differences between two canonical configs, as readable lines
    (``"bots[1].command: was [...], now [...]"``)."""
    out: list[str] = []
    label = path or "(config)"
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            sub = f"{path}.{k}" if path else k
            if k not in old:
                out.append(f"{sub}: added ({_short(new[k])})")
            elif k not in new:
                out.append(f"{sub}: removed (was {_short(old[k])})")
            else:
                out.extend(diff_canonical(old[k], new[k], sub))
    elif isinstance(old, list) and isinstance(new, list) and all(isinstance(v, dict) for v in old + new):
        for i in range(max(len(old), len(new))):
            sub = f"{path}[{i}]"
            if i >= len(old):
                out.append(f"{sub}: added ({_short(new[i])})")
            elif i >= len(new):
                out.append(f"{sub}: removed (was {_short(old[i])})")
            else:
                out.extend(diff_canonical(old[i], new[i], sub))
    elif old != new:
        out.append(f"{label}: was {_short(old)}, now {_short(new)}")
    return out


def describe_diff(old: Any, new: Any, most: int = 20) -> str:
    """:func:`diff_canonical` for an error message: the lines joined with a
    newline and two spaces of indent, at most ``most`` of them and then
    ``... and N more``."""
    diffs = diff_canonical(old, new)
    more = f"\n  ... and {len(diffs) - most} more" if len(diffs) > most else ""
    return "\n  ".join(diffs[:most]) + more


def _short(x: Any) -> str:
    text = msgspec.json.encode(x).decode()
    return text if len(text) <= 80 else text[:77] + "..."


# --------------------------------------------------------------------------
# loading


_TYPE_WORDS = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "array": "a list",
    "object": "a table",
    "null": "nothing",
}

#: hints for fields whose generic type text would be unhelpful (path pattern -> wording)
_HINTS = {
    r"bots\[\d+\]\.command": "a string or a list of strings",
    r"bots\[\d+\]\.build": "a string or a list of strings",
    r"variants\[\d+\]\.sizes": "an integer or a list of integers",
    r"variants\[\d+\]\.match": 'a string ("single") or a table such as { kind = "fixed", hands = 3 }',
    r"bots\[\d+\]\.env": 'a table of strings, e.g. { LEVEL = "3" }',
    r"seed": 'a whole number from 0 to 2**64 - 1, or "secret" (drawn at the first run, kept in the ledger)',
    r"(variants\[\d+\]\.)?schedule\.seats_per_bot": "a whole number (the tables each bot plays), e.g. 12",
    r"(variants\[\d+\]\.)?schedule\.challengers": 'a list of bot names, e.g. ["new-a", "new-b"]',
    r"variants\[\d+\]\.schedule": 'a table such as { kind = "balanced", seats_per_bot = 12 }',
    r"schedule": 'a table: [schedule] with kind = "balanced" and seats_per_bot = 12',
}


def _words(type_text: str) -> str:
    return " or ".join(_TYPE_WORDS.get(t.strip(), t.strip()) for t in type_text.split("|"))


def _segments(path: str) -> list[str | int]:
    segs: list[str | int] = []
    for m in re.finditer(r"\.([^.\[]+)|\[(\d+)\]", path):
        segs.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
    return segs


def _unwrap(tp: Any, want: str) -> Any:
    """From a (possibly union) type, the member that is a Struct ('struct'),
    a list ('list') or a Literal ('literal')."""
    args = typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
    for a in args:
        if want == "struct" and isinstance(a, type) and issubclass(a, msgspec.Struct):
            return a
        if want == "list" and typing.get_origin(a) is list:
            return typing.get_args(a)[0]
        if want == "literal" and typing.get_origin(a) is Literal:
            return typing.get_args(a)
    return None


def _type_at(segs: list[str | int]) -> Any:
    tp: Any = LeagueConfig
    for s in segs:
        if isinstance(s, int):
            tp = _unwrap(tp, "list")
        else:
            st = _unwrap(tp, "struct")
            if st is None:
                return None
            tp = typing.get_type_hints(st).get(s)
        if tp is None:
            return None
    return tp


def _explain(exc: msgspec.ValidationError | str) -> str:
    e = parse_schema_error(exc)
    path = e.path
    segs = _segments("." + path)
    if e.kind == "unknown" and e.field is not None:
        key = e.field
        st = _unwrap(_type_at(segs), "struct")
        valid = list(st.__struct_fields__) if st else []
        close = difflib.get_close_matches(key, valid, n=1, cutoff=0.5)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        where = f"{path}: " if path else ""
        if path and not close and key in LeagueConfig.__struct_fields__:
            hint = (
                f" ('{key}' is a top-level key: in TOML, put top-level keys before the first "
                "[table] or [[table]] header)"
            )
        return f"{where}unknown key '{key}'{hint}; valid keys here: {', '.join(valid)}"
    if e.kind == "missing":
        where = f"{path}: " if path else ""
        return f"{where}missing required key '{e.field}'"
    if e.kind == "type" and e.expected is not None and e.got is not None:
        wanted = _words(e.expected)
        for pattern, hint in _HINTS.items():
            if re.fullmatch(pattern, path):
                wanted = hint
        return f"{path or '(top level)'}: expected {wanted}, got {_words(e.got)}"
    if e.kind == "enum" and e.value is not None:
        allowed = _unwrap(_type_at(segs), "literal") or ()
        val = e.value.strip("'\"")
        if path == "seed":
            return f"seed: invalid value {e.value}; expected {_HINTS['seed']}"
        close = difflib.get_close_matches(val, [str(a) for a in allowed], n=1, cutoff=0.5)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return f"{path}: invalid value {e.value}; expected one of: {', '.join(map(str, allowed))}{hint}"
    return e.text.replace(" - at `$", " - at `").replace("`$.", "`")


def decode_config(data: bytes, source: str) -> LeagueConfig:
    """Decode TOML bytes strictly; raise :class:`UserError` naming the key path
    of every mistake (each top-level key and each ``[[bots]]``/``[[variants]]``
    table is checked on its own, so one message lists them all)."""
    try:
        return msgspec.toml.decode(data, type=LeagueConfig)
    except msgspec.ValidationError as exc:
        problems = _Problems(source)
        for text in _every_type_mistake(data) or [str(exc)]:
            problems.items.append(f"{source}: {_name_map_keys(_explain(text), data)}")
        # the variants that did decode are checked too, so a misspelled variant is said with the rest
        problems.items += [f"{source}: {text}" for text in _variant_mistakes(data)]
        problems.raise_if_any()
        raise AssertionError("unreachable") from exc  # pragma: no cover - raise_if_any raised
    except msgspec.DecodeError as exc:
        raise UserError(f"{source}: not valid TOML: {exc}") from None


def _every_type_mistake(data: bytes) -> list[str]:
    """The validation messages of every top-level key and every array-of-tables
    entry of a config that does not decode, with the key path of each (as
    msgspec words them: ``... - at `$.bots[2].command```), in file order."""
    try:
        raw = msgspec.toml.decode(data)
    except msgspec.DecodeError:  # pragma: no cover - the typed decode got past the TOML syntax
        return []
    if not isinstance(raw, dict):  # pragma: no cover - a TOML document is a table
        return []
    hints = typing.get_type_hints(LeagueConfig)
    out: list[str] = []

    def at(text: str, path: str) -> str:
        if " - at `$" in text:
            return text.replace(" - at `$", f" - at `${path}", 1)
        return f"{text} - at `${path}`"

    for key, value in raw.items():
        if key not in hints:
            out.append(f"Object contains unknown field `{key}`")
            continue
        tp = hints[key]
        items = list(enumerate(value)) if key in ("bots", "variants") and isinstance(value, list) else [(None, value)]
        elem = typing.get_args(tp)[0] if items and items[0][0] is not None else tp
        for i, item in items:
            try:
                msgspec.convert(item, type=elem)
            except msgspec.ValidationError as exc:
                out.append(at(str(exc), f".{key}" if i is None else f".{key}[{i}]"))
    return out


def _variant_mistakes(data: bytes) -> list[str]:
    """``variants[i].name: ...`` for every ``[[variants]]`` table that decodes but names no variant
    (an unknown preset, bad custom parameters), for a config whose other mistakes stop the decode."""
    try:
        raw = msgspec.toml.decode(data)
    except msgspec.DecodeError:  # pragma: no cover - the typed decode got past the TOML syntax
        return []
    variants = raw.get("variants") if isinstance(raw, dict) else None
    out: list[str] = []
    for i, item in enumerate(variants if isinstance(variants, list) else []):
        try:
            v = msgspec.convert(item, type=VariantConfig)
        except msgspec.ValidationError:
            continue  # already among the type mistakes
        try:
            _rules(v, f"variants[{i}]", lambda where, text: UserError(f"{where}: {text}"))
        except UserError as exc:
            out.append(str(exc))
    return out


def _name_map_keys(message: str, data: bytes) -> str:
    """msgspec reports a bad value inside a table of free keys (``env``) as
    ``env[...]``; name the actual key, found in the raw TOML."""
    m = re.match(r"(bots\[(\d+)\]\.env)\[\.\.\.\](.*)", message)
    if not m:
        return message
    try:
        env = msgspec.toml.decode(data)["bots"][int(m[2])]["env"]
        bad = next(k for k, v in env.items() if not isinstance(v, str))
    except Exception:  # noqa: BLE001 - the plain message is still right, only less precise
        return message
    return f'{m[1]}.{bad}{m[3]} (environment values are strings: write {bad} = "...")'


def _fill_placeholders(x: str, config_dir: Path) -> str:
    return x.replace("{python}", sys.executable).replace("{config_dir}", str(config_dir))


def _command(cmd: str | list[str], config_dir: Path, where: str) -> str | list[str]:
    if isinstance(cmd, str):
        if not cmd.strip():
            raise UserError(f"{where}: the command is empty")
        return cmd.replace("{python}", shlex.quote(sys.executable)).replace(
            "{config_dir}", shlex.quote(str(config_dir))
        )
    if not cmd or not cmd[0]:
        raise UserError(f'{where}: the command is empty; give an argv list such as ["{{python}}", "bot.py"]')
    return [_fill_placeholders(a, config_dir) for a in cmd]


_SLUG_RE = re.compile(r"[^a-z0-9]+")


def slugify(name: str) -> str:
    return _SLUG_RE.sub("-", name.lower()).strip("-") or "variant"


def from_canonical(canonical: dict[str, Any], where: str) -> League:
    """Rebuild the schedule-relevant League of a canonical config stored in a
    ledger (``schedule_only``: this machine's paths and limits are not checked).
    Raises :class:`UserError` naming ``where`` if it does not decode."""
    try:
        cfg = msgspec.convert(canonical, type=LeagueConfig)
    except msgspec.ValidationError as exc:
        raise UserError(
            f"{where}: the stored config cannot be read ({exc}); was it written by another referee version?"
        ) from None
    return resolve(cfg, Path(where) / "stored-config.toml", source=f"{where} (stored config)", schedule_only=True)


def load_config(path: str | os.PathLike[str], *, out: str | None = None) -> League:
    """Read, decode and check a league config.

    ``out`` overrides the config's output directory (relative to the current
    directory, as a command-line path). Raises :class:`UserError` on any
    mistake, naming the file and the key path.
    """
    p = Path(path)
    source = str(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{source}: no such config file") from None
    except OSError as exc:
        raise UserError(f"{source}: cannot read the config file: {exc.strerror}") from None
    cfg = decode_config(data, source)
    if is_strict(cfg) and cfg.seed == 0 and "seed" not in msgspec.toml.decode(data):
        cfg = msgspec.structs.replace(cfg, seed=SECRET)  # the competition preset's secret seed
    return resolve(cfg, p, source=source, out=out)


#: makes the error for a key path (``where``) of the config being resolved
ErrorAt = Callable[[str, str], UserError]


class _Problems:
    """Every mistake of a config, collected so that one run reports them all.

    ``with problems.check(): ...`` records the :class:`UserError` the block
    raises (and goes on); :meth:`raise_if_any` raises one :class:`UserError`:
    the single message as it was, or for several mistakes
    ``"<source>: N mistakes:"`` and one indented line per mistake
    (``"  bots[1].name: ..."``), in the order of the file."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.items: list[str] = []

    @contextmanager
    def check(self) -> Iterator[None]:
        try:
            yield
        except UserError as exc:
            if str(exc) not in self.items:  # a mistake inherited by several variants: said once
                self.items.append(str(exc))

    def raise_if_any(self) -> None:
        if not self.items:
            return
        if len(self.items) == 1:
            raise UserError(self.items[0])
        prefix = f"{self.source}: "
        lines = [m.removeprefix(prefix) for m in self.items]
        raise UserError(f"{self.source}: {len(lines)} mistakes:\n" + "\n".join(f"  {line}" for line in lines))


@dataclass
class _Resolving:
    """What resolving one config needs besides the config: where it comes from,
    and the mistakes found so far (each check records its own and goes on)."""

    source: str  # the config file as named to the user
    config_dir: Path  # relative paths in the config start here
    schedule_only: bool  # skip the checks that depend on this machine
    problems: _Problems = field(init=False)

    def __post_init__(self) -> None:
        self.problems = _Problems(self.source)

    def err(self, where: str, msg: str) -> UserError:
        return UserError(f"{self.source}: {where}: {msg}")

    def check(self) -> Any:
        return self.problems.check()


def resolve(
    cfg: LeagueConfig, path: Path, *, source: str | None = None, out: str | None = None, schedule_only: bool = False
) -> League:
    """Check a decoded config and resolve it into a :class:`League`.

    ``schedule_only=True`` skips the checks that depend on this machine (bot
    working directories, resource limits): enough to rebuild the schedule of
    a config stored in a ledger played elsewhere (``referee merge``); such a
    League must not be used to play. Raises one :class:`UserError` naming
    ``source`` (default: ``path``) and the key path of every mistake.
    """
    ctx = _Resolving(source or str(path), path.resolve().parent, schedule_only)
    limits_ok = _check_top(cfg, ctx)
    names: dict[str, int] = {}
    bots = tuple(_resolve_bot(cfg, i, names, ctx, limits_ok) for i in range(len(cfg.bots)))
    if not schedule_only:
        _check_linked_cwds(cfg, bots, ctx)
    top = _schedule_table(cfg.schedule, "schedule", cfg.schedule.kind or "round-robin", cfg, ctx)
    slugs: dict[str, int] = {}
    variants = [_resolve_variant(cfg, i, slugs, ctx, top) for i in range(len(cfg.variants))]
    ctx.problems.raise_if_any()
    return League(
        path=path.resolve(),
        config_dir=ctx.config_dir,
        name=cfg.name or path.stem,
        seed=cfg.seed if isinstance(cfg.seed, int) else None,  # a secret seed is read from the ledger
        out=_out_dir(cfg, path, ctx.config_dir, out),
        concurrency=cfg.concurrency or os.cpu_count() or 1,
        reuse=cfg.reuse,
        fill=cfg.fill,
        clock=_clock_spec(cfg.clock),
        faults=cfg.faults,
        bots=bots,
        variants=tuple(v for v in variants if v is not None),
        raw=cfg,
    )


def _check_top(cfg: LeagueConfig, ctx: _Resolving) -> bool:
    """The league-wide keys: bots and variants present, concurrency, clock, seed,
    faults, the league's ``[limits]``. Returns whether those limits are valid."""
    err = ctx.err
    with ctx.check():
        if not cfg.bots:
            raise UserError(f"{ctx.source}: no bots: add at least one [[bots]] table with a name and a command")
    with ctx.check():
        if not cfg.variants:
            raise UserError(f'{ctx.source}: no variants: add at least one [[variants]] table, e.g. name = "kwartet"')
    with ctx.check():
        if cfg.concurrency is not None and cfg.concurrency < 1:
            raise err("concurrency", "must be at least 1")
    with ctx.check():
        if cfg.clock.move_ms < 1:
            raise err("clock.move_ms", "must be at least 1 (milliseconds)")
    with ctx.check():
        if cfg.clock.startup_ms < 1:
            raise err("clock.startup_ms", "must be at least 1 (milliseconds)")
    with ctx.check():
        if cfg.clock.bank_ms is not None and cfg.clock.bank_ms < 1:
            raise err("clock.bank_ms", "must be at least 1 (milliseconds), or left out for no bank")
    with ctx.check():
        if isinstance(cfg.seed, int) and not 0 <= cfg.seed < SEED_LIMIT:
            raise err(
                "seed",
                f"must be a whole number from 0 to 2**64 - 1 ({SEED_LIMIT - 1}), as for "
                f"referee play --seed; got {cfg.seed}",
            )
    with ctx.check():
        _check_ceiling(cfg.clock.wall_ceiling_ms, cfg.clock.move_ms, "clock.wall_ceiling_ms", "clock.move_ms", err)
    with ctx.check():
        if cfg.faults.retries < 0:
            raise err("faults.retries", "must be 0 or more")
    with ctx.check():
        if cfg.faults.max_decisions is not None and cfg.faults.max_decisions < 1:
            raise err(
                "faults.max_decisions",
                "must be at least 1 (a hand still running after that many decisions "
                "is aborted), or left out for the automatic cap",
            )
    with ctx.check():
        if cfg.faults.max_line < 64:
            raise err("faults.max_line", "must be at least 64 (bytes)")
    if is_strict(cfg) and not ctx.schedule_only:  # (a stored config was checked when it was stored)
        with ctx.check():
            if cfg.reuse == "table":
                raise err(
                    "reuse",
                    'reuse = "table" is refused by the competition preset ([competition] strict = true, implied '
                    "by require_sandbox = true), which lets no bot process play the same deal twice: use "
                    '"session" (the default) or "game"',
                )
        with ctx.check():
            if cfg.seed != SECRET:
                raise err(
                    "seed",
                    f"a fixed seed ({cfg.seed}) is refused by the competition preset ([competition] strict = "
                    'true, implied by require_sandbox = true), which plays with seed = "secret" (drawn at the '
                    "first run, revealed at the end): remove the seed",
                )
    if ctx.schedule_only:
        return True
    limits_ok = False
    with ctx.check():
        _check_league_limits(cfg.limits, err)
        limits_ok = True
    if is_strict(cfg):
        with ctx.check():
            _refused_by_competition(cfg.limits, "limits", err)
    return limits_ok


def _resolve_bot(cfg: LeagueConfig, i: int, names: dict[str, int], ctx: _Resolving, limits_ok: bool) -> Bot:
    """``bots[i]``: its name (unique: ``names`` holds the earlier ones), working
    directory, clock overrides, limits and commands (each mistake recorded)."""
    b = cfg.bots[i]
    where = f"bots[{i}]"
    err = ctx.err
    with ctx.check():
        if not b.name.strip():
            raise err(f"{where}.name", "must not be empty")
    with ctx.check():
        if b.name in names:
            raise err(
                f"{where}.name", f"duplicate bot name '{b.name}' (also bots[{names[b.name]}]); names must be unique"
            )
    names.setdefault(b.name, i)
    cwd = (ctx.config_dir / b.cwd).resolve() if b.cwd is not None else ctx.config_dir
    with ctx.check():
        if not cwd.is_dir() and not ctx.schedule_only:
            raise err(f"{where}.cwd", f"directory {cwd} does not exist (paths are relative to the config file)")
    data = tuple(str((ctx.config_dir / d).resolve()) for d in b.data)
    for j, d in enumerate(data):
        with ctx.check():
            if not os.path.isdir(d) and not ctx.schedule_only:
                what = "is not a folder" if os.path.exists(d) else "does not exist"
                raise err(
                    f"{where}.data[{j}]",
                    f"{d} {what} (data = [...] takes folders the bot may read, relative to the config file)",
                )
    clock = _bot_clock(cfg, b, where, ctx)
    limits = None
    env = dict(b.env) if b.env else None  # extra variables; the runtime's sandbox adds a minimal base
    if not ctx.schedule_only and limits_ok:
        with ctx.check():
            limits, env = _runtime_preset(cfg, b, where, err)
    command: Any = None
    build: Any = None
    with ctx.check():
        command = _command(b.command, ctx.config_dir, f"{ctx.source}: {where}.command")
    with ctx.check():
        build = _command(b.build, ctx.config_dir, f"{ctx.source}: {where}.build") if b.build is not None else None
    return Bot(
        name=b.name,
        command=command,
        cwd=str(cwd),
        env=env,
        build=build,
        clock=clock,
        limits=limits,
        data=data,
    )


def _check_linked_cwds(cfg: LeagueConfig, bots: tuple[Bot, ...], ctx: _Resolving) -> None:
    """A ``cwd`` reached through a link (``cwd = "bots/a/peek"``, ``peek`` a link to
    ``../b``) must not lead to another bot's folder, into it or around it (bots that
    name the same folder without a link share it, see docs/SECURITY.md)."""
    from referee.runtime.sandbox import bot_folders

    folders = [
        bot_folders(b.command, b.cwd, named_cwd=c.cwd is not None) if b.command is not None else []
        for b, c in zip(bots, cfg.bots, strict=True)
    ]
    for i, (b, c) in enumerate(zip(bots, cfg.bots, strict=True)):
        if c.cwd is None or os.path.normpath(os.path.join(ctx.config_dir, c.cwd)) == b.cwd:
            continue
        for j, other in enumerate(bots):
            for f in folders[j] if j != i else []:
                if b.cwd == f or b.cwd.startswith(f + "/") or f.startswith(b.cwd + "/"):
                    with ctx.check():
                        raise ctx.err(
                            f"bots[{i}].cwd",
                            f"{c.cwd} leads by a link to {b.cwd}, "
                            + ("the folder" if b.cwd == f else "into or around the folder")
                            + f" {f} of bot '{other.name}'; give every bot a folder of its own",
                        )


def _clock_spec(c: ClockConfig, overrides: dict[str, Any] | None = None) -> ClockSpec:
    """The runtime clock of ``[clock]``, with a bot's ``overrides`` (the keys it gives) on top."""
    data: dict[str, Any] = msgspec.structs.asdict(c)
    if overrides:
        data.update(overrides)
    return ClockSpec(**data)


def _bot_clock(cfg: LeagueConfig, b: BotConfig, where: str, ctx: _Resolving) -> ClockSpec | None:
    """A bot's own clock (the league clock with its overrides on top; None without
    overrides), its overrides checked against the league clock."""
    clock = {k: v for k, v in msgspec.to_builtins(b.clock).items() if v is not None} if b.clock else {}
    for k, v in clock.items():
        with ctx.check():
            if isinstance(v, int) and v < 1:
                raise ctx.err(f"{where}.clock.{k}", "must be at least 1 (milliseconds)")
    if "move_ms" in clock or "wall_ceiling_ms" in clock:
        own = "wall_ceiling_ms" in clock
        with ctx.check():
            _check_ceiling(
                clock.get("wall_ceiling_ms", cfg.clock.wall_ceiling_ms),
                clock.get("move_ms", cfg.clock.move_ms),
                f"{where}.clock.wall_ceiling_ms" if own else f"{where}.clock.move_ms",
                f"{where}.clock.move_ms" if "move_ms" in clock else "clock.move_ms",
                ctx.err,
                inherited=None if own else "clock.wall_ceiling_ms",
            )
    return _clock_spec(cfg.clock, clock) if clock else None


def _resolve_variant(
    cfg: LeagueConfig, i: int, slugs: dict[str, int], ctx: _Resolving, top: _Sched | None = None
) -> Variant | None:
    """``variants[i]``: its rules, name (unique as a game-id part: ``slugs``
    holds the earlier ones), table sizes, deals, match format and schedule
    (``top``: the league's ``[schedule]``, checked); None when a mistake
    (recorded) leaves it unusable."""
    v = cfg.variants[i]
    where = f"variants[{i}]"
    err = ctx.err
    rules: Any = None
    with ctx.check():
        rules = _rules(v, where, err)
    slug = slugify(v.name)
    with ctx.check():
        if slug in slugs:
            raise err(
                f"{where}.name",
                f"variant '{v.name}' appears twice (also variants[{slugs[slug]}]); give each a distinct name",
            )
    slugs.setdefault(slug, i)
    with ctx.check():
        if v.deals < 1:
            raise err(f"{where}.deals", "must be at least 1")
    match: MatchFormat | None = None
    with ctx.check():
        match = _match(v.match, f"{where}.match", err)
    if rules is None:
        return None  # its table sizes and match cannot be checked without its rules
    if top is None:
        top = _schedule_table(cfg.schedule, "schedule", cfg.schedule.kind or "round-robin", cfg, ctx)
    sched = _variant_schedule(cfg, v, where, top, ctx)
    sizes: tuple[int, ...] = ()
    with ctx.check():
        if sched is None or sched.kind == "round-robin":
            sizes = _sizes(v, rules, len(cfg.bots), cfg.fill, where, err)
        else:
            sizes = _schedule_sizes(v, rules, sched, len(cfg.bots), where, err)
    if sched is not None and sched.kind == "gauntlet":
        for size in sizes:
            with ctx.check():
                _check_gauntlet_field(v, sched, size, len(cfg.bots), where, err)
    with ctx.check():
        if match is not None and match.kind != "single" and not _matches(rules):
            raise err(
                f"{where}.match", f'{rules.name} is played as single games only; remove match or set match = "single"'
            )
    if not sizes or match is None or sched is None:
        return None
    spec = ScheduleSpec(kind=sched.kind, seats_per_bot=sched.seats or 0, challengers=sched.challengers or ())
    f = cfg.faults
    policies = tuple(
        FaultPolicy(
            retries=f.retries, max_line=f.max_line, max_decisions=f.max_decisions or max_decisions_for(rules, size)
        )
        for size in sizes
    )
    return Variant(
        name=v.name,
        slug=slug,
        rules=rules,
        sizes=sizes,
        deals=v.deals,
        match=match,
        schedule=spec,
        policies=policies,
    )


# --------------------------------------------------------------------------
# the schedule of a variant ([schedule] and a variant's own schedule table)


@dataclass(frozen=True)
class _Sched:
    """A schedule table, checked (``[schedule]`` or a variant's ``schedule``), or a
    variant's effective schedule. ``seats``/``challengers``: None when not given
    (or, with ``bad``, given but wrong: already reported). ``*_at``: the key path
    each value comes from (for the error of a value that does not fit)."""

    kind: str
    kind_at: str
    seats: int | None
    seats_at: str
    challengers: tuple[int, ...] | None
    challengers_at: str
    bad: bool = False


def _schedule_table(s: ScheduleConfig, at: str, kind: str, cfg: LeagueConfig, ctx: _Resolving) -> _Sched:
    """Check one schedule table on its own: ``seats_per_bot`` in range, the
    challengers among the bots (the closest name suggested), each once, not every
    bot, and no key the table's ``kind`` (its own, else the one it inherits) does not take."""
    from referee.league.balanced import challenger_indices

    err = ctx.err
    bad = False
    seats = s.seats_per_bot
    chal: tuple[int, ...] | None = None
    names = [b.name for b in cfg.bots]
    with ctx.check():
        if seats is not None:
            if kind == "round-robin":
                seats, bad = None, True
                raise err(
                    f"{at}.seats_per_bot",
                    "does not apply to a round robin (every combination of the bots sits "
                    'at one table once): remove it, or set kind = "balanced" or '
                    '"gauntlet"',
                )
            if seats < 1:
                seats, bad = None, True
                raise err(
                    f"{at}.seats_per_bot",
                    f"must be at least 1 (the tables each bot plays, per variant and size), got {s.seats_per_bot}",
                )
            if seats > MAX_SEATS_PER_BOT:
                seats, bad = None, True
                raise err(
                    f"{at}.seats_per_bot",
                    f"{s.seats_per_bot} is above the most, {MAX_SEATS_PER_BOT} tables "
                    "per bot; for more games at each table raise the variant's deals, "
                    "or use a round robin",
                )
    with ctx.check():
        if s.challengers is not None:
            if kind != "gauntlet":
                bad = True
                raise err(
                    f"{at}.challengers",
                    f"applies to a gauntlet only (this schedule is {_kind_words(kind)}): "
                    'set kind = "gauntlet", or remove it',
                )
            if not s.challengers:
                bad = True
                raise err(
                    f"{at}.challengers",
                    'is empty: a gauntlet needs at least one challenger, e.g. challengers = ["new-a"]',
                )
            try:
                chal = challenger_indices(names, s.challengers)
            except ValueError as exc:
                bad = True
                raise err(f"{at}.challengers", f"{exc}; the bots are: {_name_list(names)}") from None
            if len(set(chal)) >= len(set(names)):
                chal, bad = None, True
                raise err(
                    f"{at}.challengers",
                    "names every bot: a gauntlet seats its challengers against the field "
                    "(the bots that are not challengers), so leave some bots out of it "
                    '(or use kind = "balanced")',
                )
    return _Sched(kind, f"{at}.kind", seats, f"{at}.seats_per_bot", chal, f"{at}.challengers", bad)


def _kind_words(kind: str) -> str:
    return {"round-robin": "a round robin", "balanced": "balanced", "gauntlet": "a gauntlet"}[kind]


def _name_list(names: list[str], most: int = 8) -> str:
    shown = ", ".join(names[:most])
    return shown + (f", ... ({len(names)} in all)" if len(names) > most else "")


def _variant_schedule(cfg: LeagueConfig, v: VariantConfig, where: str, top: _Sched, ctx: _Resolving) -> _Sched | None:
    """A variant's effective schedule: its own ``schedule`` keys, the league's
    ``[schedule]`` for the keys it leaves out (a key that does not apply to the
    variant's kind is not inherited). None when a mistake (recorded) leaves it unusable."""
    own = v.schedule
    at = f"{where}.schedule"
    eff = top
    if own is not None:
        kind = own.kind or top.kind
        mine = _schedule_table(own, at, kind, cfg, ctx)
        eff = _Sched(
            kind=kind,
            kind_at=mine.kind_at if own.kind is not None else top.kind_at,
            seats=mine.seats if own.seats_per_bot is not None else (top.seats if kind != "round-robin" else None),
            seats_at=mine.seats_at if own.seats_per_bot is not None else top.seats_at,
            challengers=(
                mine.challengers if own.challengers is not None else top.challengers if kind == "gauntlet" else None
            ),
            challengers_at=mine.challengers_at if own.challengers is not None else top.challengers_at,
            bad=mine.bad or top.bad,
        )
    if eff.bad:
        return None
    if eff.kind == "round-robin":
        return eff
    who = "challenger" if eff.kind == "gauntlet" else "bot"
    ok = True
    with ctx.check():
        if eff.seats is None:
            ok = False
            raise ctx.err(
                eff.kind_at.removesuffix(".kind"),
                f"a {eff.kind} schedule needs seats_per_bot = N (the tables each {who} plays, per variant "
                "and size), e.g. seats_per_bot = 12",
            )
    with ctx.check():
        if eff.kind == "gauntlet" and eff.challengers is None:
            ok = False
            raise ctx.err(
                eff.kind_at.removesuffix(".kind"),
                'a gauntlet needs challengers = ["name", ...]: the bots on trial (every table seats one of '
                "them; the other bots are the field)",
            )
    return eff if ok else None


def _schedule_sizes(
    v: VariantConfig, rules: Any, sched: _Sched, nbots: int, where: str, err: ErrorAt
) -> tuple[int, ...]:
    """The table sizes of a balanced or gauntlet variant: every table seats
    different bots (``fill`` does not apply), a gauntlet's one challenger and
    ``size - 1`` field bots. Given sizes are checked; by default every size
    that can be seated."""
    lo, hi = rules.min_players, rules.max_players
    if sched.kind == "gauntlet":
        field_bots = nbots - len(sched.challengers or ())
        most = field_bots + 1
        why = (
            f"a gauntlet seats one challenger and {{s1}} field bots at a {{s}}-seat table, but the field (the "
            f"bots that are not challengers) has {field_bots}"
        )
    else:
        most = nbots
        why = (
            f"a balanced schedule seats {{s}} different bots at a {{s}}-seat table (fill does not apply), but "
            f"the config has {nbots}"
        )
    if v.sizes is None:
        sizes = tuple(range(lo, min(hi, most) + 1))
        if not sizes:
            raise err(where, why.format(s=lo, s1=lo - 1) + f"; '{v.name}' needs at least {lo} players: add bots")
        return sizes
    return _given_sizes(
        v,
        lo,
        hi,
        where,
        err,
        lambda s: why.format(s=s, s1=s - 1) + f"; use tables of at most {most} seats or add bots" if s > most else None,
    )


def _check_gauntlet_field(v: VariantConfig, sched: _Sched, size: int, nbots: int, where: str, err: ErrorAt) -> None:
    """Every field bot must get a seat: ``challengers x seats_per_bot x (size - 1)``
    field seats for a field of ``nbots - challengers`` bots."""
    c = len(sched.challengers or ())
    n = sched.seats or 0
    field_bots = nbots - c
    seats = c * n * (size - 1)
    if seats >= field_bots:
        return
    need = -(-field_bots // (c * (size - 1)))
    raise err(
        sched.seats_at,
        f"{n} table{'s' if n != 1 else ''} per challenger seat only {seats} of the {field_bots} field bots at "
        f"{v.name}'s {size}-seat tables ({where}: {c} challenger{'s' if c != 1 else ''} x {n} x {size - 1} "
        f"field seats); every bot must play: use seats_per_bot = {need} or more, more challengers, or fewer "
        "field bots",
    )


def _matches(rules: Any) -> bool:
    """Whether ``rules``' kind plays multi-hand matches (its registration says)."""
    from referee.rules import kind_of

    return kind_of(rules).matches


def _rules(v: VariantConfig, where: str, err: ErrorAt) -> Any:
    """The rules of a variant: a preset by name, or custom parameters (``rules``)."""
    from referee.rules import RulesError, get_variant

    try:
        if v.rules is None:
            return get_variant(v.name)
        params = dict(v.rules)
        params.setdefault("name", v.name)
        return get_variant(params)
    except RulesError as exc:  # an unknown name's message names the closest preset
        raise err(f"{where}.rules" if v.rules is not None else f"{where}.name", str(exc)) from None


def _sizes(v: VariantConfig, rules: Any, nbots: int, fill: str, where: str, err: ErrorAt) -> tuple[int, ...]:
    """The table sizes of a variant: given (checked against the rules and the
    bot count), or every size the bots can fill."""
    lo, hi = rules.min_players, rules.max_players
    if v.sizes is None:
        sizes = tuple(range(lo, (hi if fill == "repeat" else min(hi, nbots)) + 1))
        if not sizes:
            raise err(
                where,
                f"'{v.name}' needs at least {lo} players but the config has {nbots} bot(s); "
                'add bots or set fill = "repeat" to seat several instances of the same bots',
            )
        return sizes
    return _given_sizes(
        v,
        lo,
        hi,
        where,
        err,
        lambda s: (
            (
                f"table size {s} needs {s} bots but the config has {nbots}; "
                'set fill = "repeat" (top level) to seat several instances of the same bots'
            )
            if s > nbots and fill != "repeat"
            else None
        ),
    )


def _given_sizes(
    v: VariantConfig, lo: int, hi: int, where: str, err: ErrorAt, too_big: Callable[[int], str | None]
) -> tuple[int, ...]:
    """A variant's ``sizes`` as given (one size or a list), checked: not empty, within the rules'
    ``lo..hi``, each seatable (``too_big(s)``: why size ``s`` cannot be seated, or None), none twice."""
    raw = [v.sizes] if isinstance(v.sizes, int) else list(v.sizes or ())
    if not raw:
        raise err(f"{where}.sizes", "is empty; give one table size or a list")
    for s in raw:
        if not lo <= s <= hi:
            raise err(f"{where}.sizes", f"table size {s} is outside {v.name}'s {lo}..{hi} players")
        why = too_big(s)
        if why is not None:
            raise err(f"{where}.sizes", why)
    if len(set(raw)) != len(raw):
        raise err(f"{where}.sizes", "lists a table size twice")
    return tuple(sorted(raw))


def _out_dir(cfg: LeagueConfig, path: Path, config_dir: Path, out: str | None) -> Path:
    """The output directory: ``out`` (a command-line path), else the config's
    ``out`` (relative to the config file), else ``out/<config name>`` next to it."""
    if out is not None:
        return Path(out).resolve()
    if cfg.out is not None:
        return (config_dir / cfg.out).resolve()
    return (config_dir / "out" / path.stem).resolve()


def _check_ceiling(
    ceiling: int | None, move_ms: int, where: str, move_key: str, err: ErrorAt, inherited: str | None = None
) -> None:
    """A wall ceiling (the wall limit per decision of the cpu clock) must be at
    least 1 ms and not below the move limit it bounds."""
    if ceiling is None:
        return
    if inherited is not None:
        if ceiling < move_ms:
            raise err(
                where,
                f"{move_ms} is above the league's {inherited} ({ceiling}), which bounds every "
                f"decision; give this bot its own clock.wall_ceiling_ms (at least {move_ms})",
            )
        return
    if ceiling < 1:
        raise err(where, "must be at least 1 (milliseconds), or left out for the default (3 x move_ms)")
    if ceiling < move_ms:
        raise err(
            where,
            f"{ceiling} is below {move_key} ({move_ms}): the wall ceiling bounds every decision, "
            f"so it must be at least the move limit (or leave it out for 3 x move_ms)",
        )


def _runtime_preset(
    cfg: LeagueConfig, b: BotConfig, where: str, err: ErrorAt
) -> tuple[dict[str, Any], dict[str, str] | None]:
    """A bot's merged limits table and its env, with its ``runtime`` preset applied
    (``referee.runtime.runtimes``: the preset's limits between the league's and the
    bot's, its variables under the bot's ``env``)."""
    from referee.runtime.limits import parse_limits
    from referee.runtime.runtimes import UnknownRuntime, apply_runtime, runtime_env

    try:
        own = apply_runtime(b.runtime, cfg.limits, b.limits)
    except UnknownRuntime as exc:
        raise err(f"{where}.runtime", str(exc)) from None
    limits = _check_limits(cfg.limits, own, b.cwd is not None, f"{where}.limits", err, is_strict(cfg))
    return limits, runtime_env(b.runtime, parse_limits(limits), dict(b.env) if b.env else None)


def _check_limits(
    league: dict[str, Any] | None,
    bot: dict[str, Any] | None,
    cwd_named: bool,
    where: str,
    err: ErrorAt,
    strict: bool = False,
) -> dict[str, Any]:
    """Check the league's ``[limits]`` and a bot's ``limits`` (see
    ``referee.runtime.limits.parse_limits``); return the bot's merged table
    (a bot whose config names a ``cwd`` runs there, not in a temporary folder).
    ``strict``: the competition preset, which refuses what undoes it and turns on
    bubblewrap only, no network, no writable folder."""
    from referee.runtime.limits import LimitsError, parse_limits
    from referee.runtime.sandbox import limits_problem

    try:
        parse_limits(league)
    except LimitsError as exc:
        raise err(f"limits.{exc.key}" if exc.key else "limits", exc.message) from None
    if strict:
        _refused_by_competition(bot, where, err)
    merged = {**(league or {}), **(bot or {})}
    if cwd_named and "temp_workdir" not in (bot or {}):
        merged["temp_workdir"] = False
    if strict:
        merged.update(require_sandbox=True, network=False, writable=False)
    try:
        problem = limits_problem(parse_limits(merged))
    except LimitsError as exc:
        raise err(f"{where}.{exc.key}" if exc.key else where, exc.message) from None
    if problem:
        raise err(where, problem)
    return merged


def _check_league_limits(league: dict[str, Any] | None, err: ErrorAt) -> None:
    """Check the league's ``[limits]`` table on its own (raises ``err(...)``)."""
    from referee.runtime.limits import LimitsError, parse_limits

    try:
        parse_limits(league)
    except LimitsError as exc:
        raise err(f"limits.{exc.key}" if exc.key else "limits", exc.message) from None


def _match(m: str | MatchConfig, where: str, err: ErrorAt) -> MatchFormat:
    if isinstance(m, str):
        if m != "single":
            raise err(
                where,
                f'unknown match format {m!r}; use "single", or a table such as '
                '{ kind = "fixed", hands = 3 } or { kind = "race", target = 10 }',
            )
        return MatchFormat()
    takes = {"single": (), "fixed": ("hands", "max_hands"), "race": ("target", "max_hands")}[m.kind]
    given = {"hands": m.hands is not None, "target": m.target is not None, "max_hands": m.max_hands != 50}
    for key in ("hands", "target", "max_hands"):
        if given[key] and key not in takes:
            what = {
                "single": 'takes no other keys (for several hands use { kind = "fixed", hands = N })',
                "fixed": "takes hands (the number of hands played) and max_hands (at most this many hands, "
                "tie-break hands included)",
                "race": "takes target (the total that wins) and max_hands (at most this many hands, "
                "tie-break hands included)",
            }[m.kind]
            raise err(f"{where}.{key}", f"does not apply to a {m.kind} match: remove it; a {m.kind} match {what}")
    if m.kind == "single":
        return MatchFormat()
    if m.max_hands < 1:
        raise err(f"{where}.max_hands", "must be at least 1 (hands in all, tie-break hands included)")
    if m.kind == "fixed":
        if m.hands is None or m.hands < 1:
            raise err(f"{where}.hands", "a fixed match needs hands = N (at least 1)")
        return MatchFormat(kind="fixed", hands=m.hands, max_hands=m.max_hands)
    if m.target is None or m.target < 1:
        raise err(f"{where}.target", "a race match needs target = N (the total that wins, at least 1)")
    return MatchFormat(kind="race", target=m.target, max_hands=m.max_hands)
