"""A night that grows: bots added to (or removed from) the config of a night already played.

``referee run CONFIG`` on an output directory holding games compares the
config with the one stored in the ledger (:func:`reconcile`):

* **Added bots** (names the stored config does not have) are accepted: they
  join the night's *roster* (``League.roster``: every bot that ever joined, in
  joining order; the stored config keeps its bots in that order) after the
  bots already there. The round-robin schedule numbers its tables
  colexicographically over the roster (:mod:`referee.league.schedule`), so the
  tables of the earlier bots keep their numbers, ids, seeds and seating, and
  the new tables (every combination with a new bot, and every table of a table
  size the new bots make possible) come after them. The run plays only those:
  the union equals, game by game, the night planned with all the bots from the
  start (in joining order, same seed). A balanced or gauntlet variant gets a
  *top-up* instead: every growth that adds bots is a planning epoch
  (:class:`referee.league.config.Epoch`, the ledger's meta ``epochs``: the bots
  playing and those added), the existing tables keep their lineups and ids,
  and the added bots get a gauntlet block of their own after them (their
  ``seats_per_bot`` tables each against the field; see
  :mod:`referee.league.schedule`). A secret night's new epoch gets a secret
  of its own, from which its games' deals are drawn
  (:mod:`referee.league.secret`). In a gauntlet night the added bots may be
  named in ``challengers`` too (they are left out of the comparison).
* **Removed bots** are *withdrawn*: they keep their place in the roster (and
  their config in the stored one), their games stay in the ledger, their
  unplayed tables are dropped from the plan, and the standings leave out every
  game a withdrawn bot sat in, for everyone at the table (the rest of the
  duplicate tables stay whole: the standings are those of the night without
  that bot). ``--keep-withdrawn`` counts their games (the bot marked
  withdrawn). A withdrawn bot that comes back with its old config is back in.
  The ledger's meta ``withdrawn`` lists them (JSON), for ``referee standings``.
  In a secret night a bot that comes back to unplayed games is refused
  (:func:`check_return`): its old tables are dealt from the secret of the epoch
  it joined in, deals the other bots have played already (their hands are in
  the night's logs, and in the report once that epoch is complete), and a fresh
  secret cannot be given to them without changing the plan of games already
  recorded; the refusal says to add it under a new name, so that it joins as a
  newcomer with the current epoch's fresh secret.
* **Settings that change no result** (:data:`BOT_SETTINGS`: a bot's ``build``
  and ``limits``; the ``[limits]`` table) are accepted and stored (the ledger's
  config follows them); a changed ``build`` runs before the next game (builds
  are cached by the bot's folder and command: :mod:`referee.league.buildcache`).
* **Any other change** (a bot's command, the seed, a variant...) is refused with
  the list of differences and what is accepted. The bots' order in the config does not
  matter (the roster keeps the joining order).

Not accepted either: changing the bots of a night split with ``--shard K/N``
(the split is over global table numbers, which a new bot changes), or of a
night whose tables repeat bots (``fill = "repeat"`` with fewer bots than seats:
those tables are not combinations, and a new bot changes all of them).

Errors: every refusal is a :class:`referee.errors.UserError` saying what to do.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from referee.errors import UserError
from referee.league.config import Epoch, League, describe_diff, diff_canonical

#: the ledger meta key listing the withdrawn bots (JSON list of names)
WITHDRAWN_META = "withdrawn"
#: the ledger meta key listing the night's planning epochs (JSON list of :class:`Epoch`)
EPOCHS_META = "epochs"


@dataclass(frozen=True)
class Growth:
    """What :func:`reconcile` found: the league to play (with its roster), the
    bots added, newly withdrawn and back, how many games the new bots bring,
    and the meta entries to store (``config``, ``withdrawn``)."""

    league: League
    added: tuple[str, ...] = ()
    withdrawn: tuple[str, ...] = ()  # withdrawn by this config (not before)
    back: tuple[str, ...] = ()
    new_games: int = 0
    meta: dict[str, str | None] = dataclasses.field(default_factory=dict)
    #: the changed settings that change no result (:data:`BOT_SETTINGS`, :data:`TOP_SETTINGS`), as diff lines
    settings: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.added or self.withdrawn or self.back)

    def lines(self) -> list[str]:
        """One line per kind of change, for the user (``"2 bots added: 1,344 new games"``)."""
        out = []
        if self.added:
            names = ", ".join(self.added)
            out.append(
                f"{_bots(len(self.added))} added: {self.new_games:,} new game{'s' * (self.new_games != 1)} ({names})"
            )
        if self.back:
            out.append(
                f"{_bots(len(self.back))} back: {', '.join(self.back)} (in the standings again; the games "
                "it missed are played)"
            )
        if self.settings:
            shown = "; ".join(self.settings[:5]) + (
                f"; and {len(self.settings) - 5} more" if len(self.settings) > 5 else ""
            )
            out.append(f"changed, which changes no result: {shown}")
        if self.withdrawn:
            out.append(
                f"{_bots(len(self.withdrawn))} withdrawn: {', '.join(self.withdrawn)} (their games stay in "
                "the ledger, left out of the standings; --keep-withdrawn counts them)"
            )
        return out


#: the keys of a bot that change no result and may change on a played night (a bot's build is
#: cached by its folder and command: a changed ``build`` runs again before the next game)
BOT_SETTINGS = ("build", "limits")
#: the same at the top of the config (``[limits]``: every bot's default limits)
TOP_SETTINGS = ("limits",)
SETTINGS_TEXT = "a bot's `build` and `limits` (and the [limits] table)"


def _results_part(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a config being compared, bots by name) without :data:`BOT_SETTINGS` and :data:`TOP_SETTINGS`."""
    bots = {
        n: {k: v for k, v in b.items() if k not in BOT_SETTINGS} if isinstance(b, dict) else b
        for n, b in data.get("bots", {}).items()
    }
    return {**{k: v for k, v in data.items() if k not in TOP_SETTINGS}, "bots": bots}


def _bots(n: int) -> str:
    return f"{n} bot{'s' * (n != 1)}"


def stored_withdrawn(text: str | None) -> tuple[str, ...]:
    """The meta ``withdrawn`` decoded (empty if absent or damaged)."""
    if not text:
        return ()
    try:
        data = json.loads(text)
    except ValueError:
        return ()
    return tuple(n for n in data if isinstance(n, str)) if isinstance(data, list) else ()


def stored_epochs(text: str | None, out: Path) -> tuple[Epoch, ...]:
    """The meta ``epochs`` decoded (empty if absent). A damaged entry is refused
    (:class:`UserError`): the tables of a grown night depend on it."""
    if not text:
        return ()
    try:
        return msgspec.json.decode(text, type=tuple[Epoch, ...])
    except msgspec.DecodeError as exc:
        raise UserError(
            f"{out}: the ledger's record of when bots joined this night (meta 'epochs') is damaged ({exc}); "
            "its balanced and gauntlet tables cannot be made without it. Start afresh with --new-out or --out DIR."
        ) from None


def epochs_text(epochs: tuple[Epoch, ...]) -> str:
    """The meta ``epochs`` of ``epochs`` (JSON)."""
    return msgspec.json.encode(list(epochs)).decode()


def without_challengers(data: dict[str, Any], names: set[str]) -> dict[str, Any]:
    """``data`` (a canonical config) with ``names`` left out of every ``challengers`` list
    (bots added to a gauntlet night may be listed as challengers)."""

    def strip(sched: Any) -> Any:
        if isinstance(sched, dict) and isinstance(sched.get("challengers"), list):
            return {**sched, "challengers": [c for c in sched["challengers"] if c not in names]}
        return sched

    out = dict(data)
    if "schedule" in out:
        out["schedule"] = strip(out["schedule"])
    if isinstance(out.get("variants"), list):
        out["variants"] = [
            {**v, "schedule": strip(v["schedule"])} if isinstance(v, dict) and "schedule" in v else v
            for v in out["variants"]
        ]
    return out


def night_of(league: League) -> League:
    """``league`` as the night in its output directory plays it (roster and
    epochs read from its ledger, without the run lock), for ``referee plan``;
    ``league`` itself when there is no ledger with games, or its config differs
    in more than the bots (``referee run`` says how)."""
    from referee.league.config import normalize_stored
    from referee.league.ledger import LEDGER_NAME, Ledger

    if not (league.out / LEDGER_NAME).is_file():
        return league
    try:
        with Ledger.in_dir(league.out, create=False) as ledger:
            stored = normalize_stored(ledger.config())
            if stored is None or ledger.count() == 0:
                return league
            withdrawn = stored_withdrawn(ledger.get_meta(WITHDRAWN_META))
            epochs = ledger.get_meta(EPOCHS_META)
        return reconcile(league, stored, withdrawn, league.out, epochs).league
    except (UserError, OSError):
        return league


def _by_name(bots: Any) -> dict[str, Any]:
    if not isinstance(bots, list):
        return {}
    return {b["name"]: b for b in bots if isinstance(b, dict) and isinstance(b.get("name"), str)}


def reconcile(
    league: League,
    stored: dict[str, Any],
    withdrawn_before: tuple[str, ...],
    out: Path,
    epochs: str | None = None,
) -> Growth:
    """Compare ``league`` (the config now) with ``stored`` (the ledger's
    canonical config, bots in joining order; ``withdrawn_before``: the meta
    ``withdrawn``; ``epochs``: the meta ``epochs``); see the module docstring.
    Raises :class:`UserError` with the differences for any change but added
    and removed bots."""
    new = league.canonical()
    old_bots, new_bots = _by_name(stored.get("bots")), _by_name(new.get("bots"))
    common = [n for n in old_bots if n in new_bots]
    added_names = {n for n in new_bots if n not in old_bots}
    before = {**{k: v for k, v in stored.items() if k != "bots"}, "bots": {n: old_bots[n] for n in common}}
    after = {
        **{k: v for k, v in without_challengers(new, added_names).items() if k != "bots"},
        "bots": {n: new_bots[n] for n in common},
    }
    if _results_part(before) != _results_part(after):
        refused = diff_canonical(_results_part(before), _results_part(after))
        fine = [line for line in diff_canonical(before, after) if line not in refused]
        also = (
            f"  (changed too, and accepted: {'; '.join(fine[:5])}{' ...' if len(fine) > 5 else ''})\n" if fine else ""
        )
        raise UserError(
            f"{out}: this output directory holds a league played with a different config:\n"
            f"  {describe_diff(_results_part(before), _results_part(after))}\n{also}"
            "Adding bots or removing them is accepted (the night grows, or the removed ones are withdrawn), and "
            f"so is changing {SETTINGS_TEXT}, which change no result; any other change (the lines above) is "
            "not. Restore the old config to resume it, or start afresh with --new-out (a new "
            "directory next to it) or --out DIR."
        )
    settings = tuple(diff_canonical(before, after))
    roster_before = tuple(old_bots)
    added = tuple(n for n in new_bots if n not in old_bots)
    roster = roster_before + added
    withdrawn_now = tuple(n for n in roster if n not in new_bots)
    was = set(withdrawn_before) & set(roster_before)
    newly = tuple(n for n in withdrawn_now if n not in was)
    back = tuple(n for n in roster_before if n in was and n in new_bots)
    known = stored_epochs(epochs, out)
    grown = dataclasses.replace(league, roster=roster, epochs=known)
    config = {**new, "bots": [new_bots.get(n, old_bots.get(n)) for n in roster]}
    if not (added or newly or back):
        # only settings that change no result (or nothing): the stored config follows the config
        return Growth(grown, settings=settings, meta={"config": json.dumps(config, sort_keys=True)} if settings else {})
    _check_can_change(league, len(roster_before) - len(was), out)
    old_active = [n for n in roster_before if n not in was]
    kept = sum(1 for n in old_active if n in new_bots)
    new_games = 0
    from referee.league.schedule import kind_of

    for v in league.variants:
        if not kind_of(v).drawn:  # a round robin grows by its combinations with the new bots (no top-up)
            for size in v.sizes:
                keep = math.comb(kept, size) if size <= len(old_active) else 0
                new_games += (math.comb(len(league.bots), size) - keep) * v.deals * size
    meta: dict[str, str | None] = {
        "config": json.dumps(config, sort_keys=True),
        WITHDRAWN_META: json.dumps(list(withdrawn_now)) if withdrawn_now else None,
    }
    if added:  # a new planning epoch: balanced and gauntlet blocks get a top-up for the added bots
        from referee.league.schedule import parts

        start = known or (Epoch(bots=roster_before),)
        active = tuple(n for n in roster if n in new_bots)
        grown = dataclasses.replace(grown, epochs=(*start, Epoch(bots=active, added=added)))
        meta[EPOCHS_META] = epochs_text(grown.epochs)
        last = len(grown.epochs) - 1
        for v in grown.variants:
            for size in v.sizes:
                for p in parts(grown, v, size):  # also checks that every top-up can be seated
                    if p.epoch == last:
                        new_games += p.count * v.deals * size
    return Growth(grown, added=added, withdrawn=newly, back=back, new_games=new_games, settings=settings, meta=meta)


def check_return(league: League, growth: Growth, done: set[str]) -> None:
    """Refuse a withdrawn bot that comes back (``growth.back``) to a secret night with games
    still to play (``done``: the recorded game ids); see the module docstring. Raises
    :class:`UserError` naming the bot, why, and what to do instead."""
    if not growth.back or not league.secret:
        return
    from referee.league import schedule as sched

    index = {b.name: i for i, b in enumerate(league.bots)}
    back = {index[n]: n for n in growth.back if n in index}
    todo: dict[str, tuple[int, int]] = {}  # name -> (unplayed games, the epoch of its tables)
    for table in sched.tables(league, league.shard):
        who = [back[i] for i in table.lineup if i in back]
        if not who:
            continue
        left = sum(
            1
            for d in range(table.variant.deals)
            for r in range(table.size)
            if sched.game_id(table.key, d, r) not in done
        )
        for n in who:
            games, epoch = todo.get(n, (0, table.epoch))
            todo[n] = (games + left, min(epoch, table.epoch))
    todo = {n: v for n, v in todo.items() if v[0]}
    if not todo:
        return
    name, (games, epoch) = next(iter(todo.items()))
    others = f" (and {', '.join(list(todo)[1:])})" if len(todo) > 1 else ""
    raise UserError(
        f"{league.out}: '{name}'{others} was withdrawn from this secret night and would come back to {games} "
        f"unplayed games on the deals of epoch {epoch}, the one it joined in: the other bots have played those "
        "deals already (their hands are in the night's logs, and in the report once the epoch is complete), and "
        "its old tables cannot get a fresh secret without changing the games already recorded. Add it under a "
        f"new name (e.g. '{name}-2'): it joins as a newcomer and plays the current epoch's deals, drawn from a "
        "fresh secret. Or leave it out."
    )


def _check_can_change(league: League, active_before: int, out: Path) -> None:
    """Refuse a change of bots where the schedule cannot grow (see the module docstring)."""
    if league.shard is not None:
        raise UserError(
            f"{out}: this night is split into shards (--shard {league.shard}); the bots of a split night cannot "
            "change (a new bot renumbers the tables the shards share out). Keep the bots, or start a new night "
            "with --new-out or --out DIR."
        )
    if league.fill == "repeat":
        few = min(active_before, len(league.bots))
        from referee.league.schedule import kind_of

        sizes = sorted({s for v in league.variants if not kind_of(v).drawn for s in v.sizes if s > few})
        if sizes:
            raise UserError(
                f'{out}: this night seats several instances of the same bots (fill = "repeat", table size '
                f"{', '.join(map(str, sizes))} with {few} bots); such tables are not combinations of the bots, "
                "so adding or removing a bot changes all of them. Keep the bots, or start a new night with "
                "--new-out or --out DIR."
            )
