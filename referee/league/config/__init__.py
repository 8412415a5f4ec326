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

from .canonical import canonical_form, describe_diff, diff_canonical, is_strict, normalize_stored
from .context import ErrorAt, slugify
from .decode import decode_config
from .league import Bot, Epoch, League, ScheduleSpec, Variant
from .resolve import from_canonical, load_config, resolve
from .schema import (
    COMPETITION,
    MAX_SEATS_PER_BOT,
    NON_RESULT_KEYS,
    SECRET,
    SEED_LIMIT,
    BotClockConfig,
    BotConfig,
    ClockConfig,
    CompetitionConfig,
    FaultConfig,
    LeagueConfig,
    MatchConfig,
    OutputConfig,
    ScheduleConfig,
    VariantConfig,
)

__all__ = [
    "Bot",
    "BotClockConfig",
    "BotConfig",
    "COMPETITION",
    "ClockConfig",
    "CompetitionConfig",
    "Epoch",
    "ErrorAt",
    "FaultConfig",
    "League",
    "LeagueConfig",
    "MAX_SEATS_PER_BOT",
    "MatchConfig",
    "NON_RESULT_KEYS",
    "OutputConfig",
    "SECRET",
    "SEED_LIMIT",
    "ScheduleConfig",
    "ScheduleSpec",
    "Variant",
    "VariantConfig",
    "canonical_form",
    "decode_config",
    "describe_diff",
    "diff_canonical",
    "from_canonical",
    "is_strict",
    "load_config",
    "normalize_stored",
    "resolve",
    "slugify",
]
