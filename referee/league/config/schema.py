"""The config file's format: the TOML tables as msgspec Structs (decoded strictly) and its limits."""

from __future__ import annotations

from typing import Any, Literal

import msgspec


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
