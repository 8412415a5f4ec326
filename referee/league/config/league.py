"""The resolved league: the runtime shapes a config becomes (``Bot``, ``Variant``, ``League``...)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from referee.core.spec import ClockSpec, FaultPolicy
from referee.rules.match import MatchFormat

from .canonical import (
    canonical_form,
    is_strict,
)
from .schema import (
    SECRET,
    FaultConfig,
    LeagueConfig,
)


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
