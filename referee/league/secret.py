"""Secret seeds: ``seed = "secret"`` in a league config.

A league's master seed decides every deal of the night. Written in the config,
it is known to everyone who sees the config before the night, and a bot
author who knows it can compute every hand of every game in advance. With
``seed = "secret"``:

* the first ``referee run`` draws a 63-bit seed with :mod:`secrets` and stages
  it as the ledger's meta ``secret_seed`` (committed with the config once the
  bots have passed the start check, before the first game); the canonical
  config keeps the word ``"secret"``, so the seed is in no config, plan,
  progress line or error message;
* a resumed run reads it back from the ledger (the only copy): the same
  schedule, the same deals;
* the standings and the report say ``seed: secret`` until every planned game
  of the night is recorded, then show the seed, so that anyone can re-derive
  every deal (``referee.league.schedule.deal_seed``) and check the logs;
* a night split over machines (``--shard K/N``) needs the same seed on every
  machine: the host draws one once (any whole number in a file, e.g.
  ``python3 -c 'import secrets; print(secrets.randbits(63))'``) and gives
  every shard ``--seed-file FILE``; ``referee merge`` refuses shards with
  different seeds. (``--seed-file`` works for a whole night too.) A shard's own
  standings never show the seed (other shards may still be playing); a complete
  merge does.

A secret night that grows (bots added after it began: a new planning epoch,
:mod:`referee.league.roster`, :func:`referee.league.schedule.night_epochs`)
gets a fresh secret per epoch. Every table of a night plays the same deals, so
without one the added bots would be dealt deals whose hands are already in
the night's logs and report (and, once it was complete, derivable from its
revealed seed). So:

* the run that adds the bots draws a new 63-bit secret for the new epoch
  (:func:`new_seed`) and stages it in the ledger's meta ``epoch_secrets``
  (JSON, epoch -> seed; the first epoch's stays ``secret_seed``), committed
  with the epoch (meta ``epochs``) before its first game; a resumed run
  (after Ctrl-C or kill -9) reads it back, so the epoch keeps its deals;
* every seed of an epoch's games is derived from its secret
  (:func:`referee.league.schedule.epoch_master`), with the same labels as
  the first epoch's: the deal seeds and, for a balanced or gauntlet top-up,
  its plan seed. Which tables are an epoch's
  (:func:`referee.league.schedule.epoch_of`): a balanced or gauntlet block's
  first plan and top-ups each belong to the epoch that made them (a top-up:
  the bots that epoch added, its tables numbered after the earlier ones); a
  round robin's tables belong to the epoch in which the last of their bots
  joined (the tables seating a bot added in it; colexicographic numbering
  puts them after every earlier table). Earlier epochs' games keep their
  seeds; a public night derives everything from its master seed as before;
* every secret stays hidden until every planned game of the night (every
  epoch) is recorded; then the standings and the report show the first as
  ``seed`` and the later ones as ``epoch_seeds`` (epoch 1, 2, ...), and
  ``referee verify`` checks every game's seed against its epoch's secret;
* a grown secret night cannot be split over machines (``--shard``; a night
  split into shards cannot grow anyway): it is refused with the reason.
  Ladder tables (``referee ladder``) keep deriving their deals from the first
  epoch's secret (``secret_seed``).

(A withdrawn bot that comes back plays the tables it missed, of their own
epochs: with deals that bot may have seen in the report.)

The per-game seeds in the ledger rows and the game logs are
``derive(master, label)`` (SHA-256, one way): a log does not give the master
seed away, nor the deals of other tables.

Errors: :class:`referee.errors.UserError` for a seed file that cannot be read
or holds no seed, a seed file that disagrees with the seed a night started
with, a secret shard without a seed file, a grown secret night run as a shard,
and a damaged ``secret_seed`` or ``epoch_secrets``.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
from pathlib import Path

from referee.errors import UserError
from referee.league.config import League
from referee.league.ledger import Ledger

#: the ledger's meta key holding a secret night's master seed (decimal text)
META_KEY = "secret_seed"
#: the ledger's meta key holding the secrets of a grown secret night's later epochs (JSON: epoch -> seed)
EPOCH_META = "epoch_secrets"
#: the bits of a drawn seed (a positive 64-bit integer in every language)
SEED_BITS = 63
_LIMIT = 2**64


def new_seed() -> int:
    """A fresh secret seed: 63 random bits from the operating system."""
    return secrets.randbits(SEED_BITS)


def read_seed_file(path: str | Path) -> int:
    """The seed in a seed file: one whole number (decimal, or hexadecimal with
    ``0x``), surrounding white space ignored. Raises :class:`UserError`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise UserError(f"--seed-file {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"--seed-file {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        seed = int(text, 0)
    except ValueError:
        # the file's content is not echoed: it may be a secret of another kind
        raise UserError(
            f"--seed-file {path}: does not hold a seed (one whole number from 0 to 2**64 - 1, "
            "e.g. made with: python3 -c 'import secrets; print(secrets.randbits(63))' > FILE)"
        ) from None
    if not 0 <= seed < _LIMIT:
        raise UserError(f"--seed-file {path}: the seed must be a whole number from 0 to 2**64 - 1")
    return seed


def stored_seed(ledger: Ledger) -> int | None:
    """The secret seed the ledger holds (None: none). A damaged one is a :class:`UserError`."""
    text = ledger.get_meta(META_KEY)
    if text is None:
        return None
    if not text.isdigit() or int(text) >= _LIMIT:
        raise UserError(
            f"{ledger.path}: the ledger's secret seed is damaged; restore the ledger from a copy "
            "(the seed has no other copy, unless the host gave it with --seed-file)"
        )
    return int(text)


def stored_epoch_seeds(text: str | None, where: str = "the ledger") -> tuple[int | None, ...]:
    """The meta ``epoch_secrets`` decoded: index = epoch (entry 0 None: the
    first epoch's is ``secret_seed``); empty if absent. A damaged one is a
    :class:`UserError` (the deals of the later epochs depend on it)."""
    if not text:
        return ()
    try:
        data = json.loads(text)
        pairs = {int(k): v for k, v in data.items()}
    except (ValueError, AttributeError, TypeError):
        pairs = None
    if (
        pairs is None
        or any(e < 1 or not isinstance(v, str) or not v.isdigit() or int(v) >= _LIMIT for e, v in pairs.items())
        or len(pairs) > 100_000
    ):
        raise UserError(
            f"{where}: the ledger's secrets of the epochs this night grew by (meta {EPOCH_META!r}) are damaged; "
            "restore the ledger from a copy (they have no other copy)"
        )
    out: list[int | None] = [None] * (max(pairs, default=0) + 1)
    for e, v in pairs.items():
        out[e] = int(v)
    return tuple(out) if len(out) > 1 else ()


def epoch_seeds_text(seeds: tuple[int | None, ...]) -> str:
    """The meta ``epoch_secrets`` of ``seeds`` (:func:`stored_epoch_seeds` reads it)."""
    return json.dumps({str(e): str(v) for e, v in enumerate(seeds) if e and v is not None}, sort_keys=True)


def settle_seed(league: League, ledger: Ledger, seed_file: str | None = None) -> League:
    """The league with its master seed filled in, for a run into ``ledger``
    (opened by :func:`referee.league.outdir.open_ledger`, which staged the
    config): a public seed as it is; a secret one from ``seed_file``, else
    the ledger, else drawn now (then staged in the ledger). See the module
    docstring. Raises :class:`UserError`."""
    if not league.secret:
        if seed_file is not None:
            raise UserError(
                f'--seed-file is for a secret night (seed = "secret" in the config); '
                f"{league.path} has its seed in the config"
            )
        if ledger.count() == 0 and ledger.get_meta(META_KEY) is not None:
            ledger.stage_meta({META_KEY: None})  # an earlier secret start that played nothing
        return league
    have = stored_seed(ledger)
    if have is None and ledger.count() > 0:
        raise UserError(
            f"{ledger.path}: the ledger holds games of a secret night but not its seed (a damaged "
            "ledger?); restore it from a copy, or give the seed with --seed-file FILE"
        )
    if seed_file is not None:
        from referee.runtime.sandbox import protect_paths

        protect_paths(secret=[str(Path(seed_file).resolve())])  # bots in bubblewrap never see it
        seed = read_seed_file(seed_file)
        if have is not None and have != seed and ledger.count() > 0:
            raise UserError(
                f"--seed-file {seed_file}: is not the seed this night was started with (the ledger in "
                f"{ledger.path.parent} holds another); give the seed file of this night, or leave "
                "--seed-file out to resume with the ledger's seed"
            )
    elif have is not None:
        seed = have
    elif league.shard is not None:
        raise UserError(
            f"{league.path}: a secret night split over machines (--shard {league.shard}) needs the same seed on "
            "every machine: draw one once, e.g. python3 -c 'import secrets; print(secrets.randbits(63))' > "
            "seed.txt (chmod 600 seed.txt), give every shard --seed-file seed.txt, and keep the file from the "
            "bots' authors until the night is over"
        )
    else:
        seed = new_seed()
    if have != seed:
        ledger.stage_meta({META_KEY: str(seed)})
    return dataclasses.replace(league, seed=seed, epoch_seeds=_settle_epochs(league, ledger))


def _settle_epochs(league: League, ledger: Ledger) -> tuple[int | None, ...]:
    """The secrets of a secret night's later epochs (``league.epochs``, as
    :func:`referee.league.roster.reconcile` made them): the ledger's, and a
    fresh one (:func:`new_seed`, staged with the epoch) for an epoch the ledger
    does not hold one for: the epoch this run adds. A grown night split into
    shards is refused: its shards would each draw their own."""
    epochs = len(league.epochs)
    have = stored_epoch_seeds(ledger.get_meta(EPOCH_META), str(ledger.path))
    if epochs <= 1:
        return have
    if league.shard is not None:
        raise UserError(
            f"{ledger.path.parent}: this secret night grew (bots were added after it began), and a grown secret "
            f"night cannot be split into shards (--shard {league.shard}): each later epoch has a secret of its "
            "own, drawn by the run that adds its bots. Play it whole (without --shard)"
        )
    seeds = list(have) + [None] * (epochs - len(have))
    drawn = False
    for e in range(1, epochs):
        if seeds[e] is None:
            seeds[e] = new_seed()
            drawn = True
    out = tuple(seeds)
    if drawn:
        ledger.stage_meta({EPOCH_META: epoch_seeds_text(out)})
    return out
