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

The per-game seeds in the ledger rows and the game logs are
``derive(master, label)`` (SHA-256, one way): a log does not give the master
seed away, nor the deals of other tables.

Errors: :class:`referee.errors.UserError` for a seed file that cannot be read
or holds no seed, a seed file that disagrees with the seed a night started
with, a secret shard without a seed file, and a damaged ``secret_seed``.
"""

from __future__ import annotations

import dataclasses
import secrets
from pathlib import Path

from referee.errors import UserError
from referee.league.config import SECRET, League, normalize_stored
from referee.league.ledger import Ledger, MergedMeta

#: the ledger's meta key holding a secret night's master seed (decimal text)
META_KEY = "secret_seed"
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
    _refuse_growth(league, ledger)
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
    return dataclasses.replace(league, seed=seed)


def _refuse_growth(league: League, ledger: Ledger) -> None:
    """Refuse bots added to a secret night that has games (:mod:`referee.league.roster`).

    Every table of a night plays the same deals, so the games of an added bot
    would be dealt from deals already played: their hands are in the logs and
    viewer pages of the night's report, and once the night is complete the seed
    itself is shown. An author who has seen them could write the added bot to
    know every hand. (A fresh secret seed per growth epoch would need deals of
    their own for the added bots' tables; a growth is refused instead.) Raises
    :class:`UserError` naming the bots and what to do."""
    if ledger.count() == 0:
        return
    stored = ledger.config() or {}
    before = {b.get("name") for b in stored.get("bots") or [] if isinstance(b, dict)}
    added = [n for n in league.slots if n not in before]
    if not added:
        return
    shown = "its seed has been revealed, and " if shown_seed(ledger) not in (SECRET, None) else ""
    raise UserError(
        f"{ledger.path.parent}: bots added to a secret night ({', '.join(added)}) are refused: every table plays "
        f"the same deals, and {shown}the hands of those deals are in the games already played (their logs and "
        "the report), so an added bot could be written to know them. Play the added bots in a new night "
        "(--new-out or --out DIR, with its own secret seed), or remove them to resume this one"
    )


def with_stored_seed(league: League, ledger: Ledger) -> League:
    """A league rebuilt from a ledger's stored config, with a secret seed read
    from the ledger (for ``referee verify``). Raises :class:`UserError` if a
    secret night's ledger holds no seed."""
    if not league.secret:
        return league
    seed = stored_seed(ledger)
    if seed is None:
        raise UserError(
            f"{ledger.path}: the ledger of a secret night holds no seed (damaged, or no game was "
            "ever started); restore it from a copy"
        )
    return dataclasses.replace(league, seed=seed)


def shown_seed(ledger: Ledger) -> int | str | None:
    """The master seed as the standings and the report may show it: the
    config's seed; for a secret night the seed once every planned game is
    recorded (a whole night, or a complete merge; never a shard's own ledger:
    the other shards may still be playing), else ``"secret"``. None when the
    ledger stores no readable config."""
    config = normalize_stored(ledger.config())
    if not isinstance(config, dict) or "seed" not in config:
        return None
    if config["seed"] != SECRET:
        seed = config["seed"]
        return seed if isinstance(seed, int) else None
    if not _complete(ledger, config):
        return SECRET
    stored = stored_seed(ledger)
    return stored if stored is not None else SECRET


def _complete(ledger: Ledger, config: dict[str, object]) -> bool:
    """Whether every planned game of the whole night is in ``ledger``."""
    if ledger.get_meta("shard") is not None:
        return False
    merged = ledger.get_meta("merged")
    if merged is not None:
        meta = MergedMeta.parse(merged)
        return meta is not None and meta.complete
    from referee.league.night import NightPlan

    try:
        night = NightPlan.of_ledger(ledger)  # the night as its ledger holds it: epochs, top-ups, withdrawn bots
    except UserError:
        return False
    total = night.total()  # planned games only: ladder games never reveal the seed
    return ledger.count() >= total and night.played(ledger.rows()) >= total
