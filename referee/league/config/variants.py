"""Resolving ``[[variants]]``: rules, table sizes, schedules, match formats and fault policies."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from referee.core.spec import FaultPolicy, max_decisions_for
from referee.rules.match import MatchFormat

from .context import (
    ErrorAt,
    _Resolving,
    slugify,
)
from .league import (
    ScheduleSpec,
    Variant,
)
from .schema import (
    MAX_SEATS_PER_BOT,
    LeagueConfig,
    MatchConfig,
    ScheduleConfig,
    VariantConfig,
)


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
