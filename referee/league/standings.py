"""Standings: per variant and overall, computed from ledger rows.

For every bot and scope (``"overall"`` and each variant):

* ``games``: seats played (a bot seated twice at one table counts twice);
* ``wins``: the sum of win shares (k tied winners get 1/k each; a forfeited
  seat gets 0), ``win_share = wins / games`` and its 95% Wilson interval;
* ``mean_score`` and ``mean_rank`` (competition ranks). A forfeited game
  counts as score 0 and last place for the forfeiting bot: what the referee's
  fallback scored in its seat is not the bot's. (The overall scope averages
  raw scores across variants, whose scales differ: compare scores per
  variant.)
* Plackett-Luce ``mu``, ``sigma`` and the conservative ``ordinal``
  (mu - 3 sigma), from one fit over all the scope's games at once
  (:mod:`referee.league.ratings`: the same games give the same ratings in any
  order; openskill's scale). Every seat is a team of one; forfeited seats
  count as last. ``Tally(online=True)`` also keeps openskill's game-by-game
  ratings in ``scope.ratings`` (the ladder's matchmaking);
* ``forfeits``, ``faults`` by type, mean and max think time per decision.

Stalled games (reason ``stalled``: an ask hand ended by the stalemate rule,
scored as it stood) are results like any other: they count in everything
above, and each scope also says how many of its games stalled (``stalled``).
Aborted games (reason ``aborted``, e.g. a hand stopped after
``max_decisions``) have no result: they count nowhere else, each scope says
how many it lost (``aborted``), and they are listed under the top-level
``aborted``. :func:`games_text` words a scope's counts ("120 games, 3
stalled, 2 aborted") for every output.

The head-to-head table counts, for every ordered pair of different bots that
met at a table, how often the first finished strictly above the second
(forfeited seats count as last), and how often they met.

:func:`compute` processes games in game-id order; nothing in the result
depends on the order of the games anyway (the ratings are a batch fit).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.fileio import write_atomic
from referee.league.ledger import GameRow
from referee.league.ratings import BETA, MU0, PRIOR_SD, BatchRatings

if TYPE_CHECKING:
    from rich.table import Table

Z95 = 1.959963984540054

#: the game reasons that give a result (``aborted`` does not)
COUNTED_REASONS = ("complete", "stalled")


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for ``successes`` out of ``n`` (``(0, 1)`` if n == 0)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, p * (1 - p) / n + z * z / (4 * n * n))) / denom
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)
    hi = 1.0 if successes >= n else min(1.0, centre + half)
    return (min(lo, p), max(hi, p))


def effective_ranks(scores: list[float], ranks: list[int], forfeits: Iterable[int]) -> list[int]:
    """Ranks with forfeited seats moved to the bottom (competition ranking)."""
    ff = set(forfeits)
    if not ff:
        return list(ranks)
    keys = [(1 if s in ff else 0, ranks[s]) for s in range(len(ranks))]
    return [1 + sum(1 for o in keys if o < k) for k in keys]


@dataclass
class _BotTally:
    games: int = 0
    wins: float = 0.0
    score_sum: float = 0.0
    rank_sum: float = 0.0
    forfeits: int = 0
    faults: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    think_count: int = 0
    think_total: float = 0.0
    think_max: float = 0.0


class _Scope:
    def __init__(self, ratings: bool = True, online: bool = False) -> None:
        self.with_ratings = ratings
        self.online = online and ratings
        self.batch = BatchRatings()
        if self.online:
            from openskill.models import PlackettLuce

            self.model = PlackettLuce()
        self.bots: dict[str, _BotTally] = defaultdict(_BotTally)
        self.ratings: dict[str, Any] = {}
        self.above: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.met: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.games = 0
        self.stalled = 0  # of the games: ended by the stalemate rule (counted like any other)
        self.aborted = 0  # games without a result (not in ``games``)

    def add(self, row: GameRow, eff: list[int]) -> None:
        self.games += 1
        if row.reason == "stalled":
            self.stalled += 1
        n = len(row.bots)
        ff = set(row.forfeits)
        for s, bot in enumerate(row.bots):
            t = self.bots[bot]
            t.games += 1
            t.wins += 0.0 if s in ff else float(row.win_shares[s])
            t.score_sum += 0.0 if s in ff else float(row.scores[s])
            t.rank_sum += float(eff[s])
            if s in ff:
                t.forfeits += 1
            th = row.think[s] if s < len(row.think) else None
            if th:
                c = int(th.get("count", 0))
                t.think_count += c
                t.think_total += c * float(th.get("mean_ms", 0.0))
                t.think_max = max(t.think_max, float(th.get("max_ms", 0.0)))
        for f in row.faults:
            bot = f.get("bot") or row.bots[int(f.get("seat", 0))]
            self.bots[bot].faults[str(f.get("fault", "unknown"))] += 1
        for i in range(n):
            for j in range(n):
                a, b = row.bots[i], row.bots[j]
                if i == j or a == b:
                    continue
                self.met[a][b] += 1
                if eff[i] < eff[j]:
                    self.above[a][b] += 1
        if not self.with_ratings:
            return
        self.batch.add(row.bots, eff)
        if not self.online:
            return
        # openskill, game by game (the ladder's matchmaking)
        for bot in row.bots:
            if bot not in self.ratings:
                self.ratings[bot] = self.model.rating(name=bot)
        teams = [[self.model.rating(mu=self.ratings[b].mu, sigma=self.ratings[b].sigma)] for b in row.bots]
        ranks: list[float] = list(eff)
        new = self.model.rate(teams, ranks=ranks)
        per_bot: dict[str, list[Any]] = defaultdict(list)
        for s, bot in enumerate(row.bots):
            per_bot[bot].append(new[s][0])
        for bot, rs in per_bot.items():
            mu = sum(r.mu for r in rs) / len(rs)
            sigma = sum(r.sigma for r in rs) / len(rs)
            self.ratings[bot] = self.model.rating(mu=mu, sigma=sigma, name=bot)

    def result(self) -> dict[str, Any]:
        rows: list[dict[str, Any]] = []
        fitted = self.batch.fit() if self.with_ratings else {}
        for bot, t in self.bots.items():
            mu, sigma = fitted.get(bot, (MU0, BETA * PRIOR_SD))
            lo, hi = wilson(t.wins, t.games)
            rows.append(
                {
                    "bot": bot,
                    "games": t.games,
                    "wins": round(t.wins, 6),
                    "win_share": round(t.wins / t.games, 6) if t.games else 0.0,
                    "win_lo": round(lo, 6),
                    "win_hi": round(hi, 6),
                    "mean_score": round(t.score_sum / t.games, 6) if t.games else 0.0,
                    "mean_rank": round(t.rank_sum / t.games, 6) if t.games else 0.0,
                    "mu": round(mu, 6),
                    "sigma": round(sigma, 6),
                    "ordinal": round(mu - 3 * sigma, 6),
                    "forfeits": t.forfeits,
                    "faults": dict(sorted(t.faults.items())),
                    "think_mean_ms": round(t.think_total / t.think_count, 3) if t.think_count else 0.0,
                    "think_max_ms": round(t.think_max, 3),
                }
            )
        rows.sort(key=lambda x: (-x["ordinal"], -x["win_share"], x["bot"]))
        for i, x in enumerate(rows, 1):
            x["place"] = i
        names = [x["bot"] for x in rows]
        h2h = {
            a: {b: {"above": self.above[a][b], "met": self.met[a][b]} for b in names if b != a and self.met[a][b]}
            for a in names
        }
        return {
            "games": self.games,
            "stalled": self.stalled,
            "aborted": self.aborted,
            "bots": rows,
            "head_to_head": h2h,
        }


class Tally:
    """Incremental standings: :meth:`add` ledger rows, :meth:`result` the standings dict.

    ``live=True`` keeps only what a progress display needs (no ratings, no
    per-variant scopes, no fault list): cheap per game and constant in memory.
    """

    def __init__(self, league: str = "", *, live: bool = False, online: bool = False) -> None:
        self.league = league
        self.live = live
        self.overall = _Scope(ratings=not live, online=online)
        self.variants: dict[str, _Scope] = {}
        self.fault_list: list[dict[str, Any]] = []
        self.aborted: list[dict[str, Any]] = []

    def add(self, row: GameRow) -> None:
        if row.reason not in COUNTED_REASONS:
            # an aborted game (e.g. a hand stopped after max_decisions) has no result
            self.aborted.append(
                {
                    "game": row.game_id,
                    "variant": row.variant,
                    "bots": row.bots,
                    "detail": row.detail or "",
                    "log": row.log_path,
                }
            )
            self.overall.aborted += 1
            if self.live:
                self.aborted = self.aborted[-1:]
            else:
                self._scope(row.variant).aborted += 1
            return
        eff = effective_ranks(row.scores, row.ranks, row.forfeits)
        self.overall.add(row, eff)
        if self.live:
            return
        self._scope(row.variant).add(row, eff)
        for f in row.faults:
            self.fault_list.append(
                {
                    "game": row.game_id,
                    "variant": row.variant,
                    "seat": f.get("seat"),
                    "bot": f.get("bot") or row.bots[int(f.get("seat", 0))],
                    "fault": f.get("fault"),
                    "detail": f.get("detail", ""),
                    "log": row.log_path,
                }
            )

    def _scope(self, variant: str) -> _Scope:
        if variant not in self.variants:
            self.variants[variant] = _Scope()
        return self.variants[variant]

    @property
    def aborted_count(self) -> int:
        """Aborted games so far (also in ``live`` mode, which keeps only the last one listed)."""
        return self.overall.aborted

    def top(self, n: int = 5) -> list[dict[str, Any]]:
        """The live top ``n`` overall, by win share (cheap, for progress displays)."""
        rows = [(t.wins / t.games if t.games else 0.0, bot, t) for bot, t in self.overall.bots.items()]
        rows.sort(key=lambda x: (-x[0], x[1]))
        return [{"bot": b, "games": t.games, "win_share": w, "faults": sum(t.faults.values())} for w, b, t in rows[:n]]

    def result(self) -> dict[str, Any]:
        return {
            "league": self.league,
            "games": self.overall.games,
            "stalled": self.overall.stalled,
            "scopes": {
                "overall": self.overall.result(),
                **{v: self.variants[v].result() for v in sorted(self.variants)},
            },
            "faults": self.fault_list,
            "aborted": self.aborted,
        }


def compute(rows: Iterable[GameRow], league: str = "") -> dict[str, Any]:
    """Standings from ledger rows. Rows are sorted by game id first, so the
    result never depends on completion order."""
    tally = Tally(league)
    for row in sorted(rows, key=lambda r: r.game_id):
        tally.add(row)
    return tally.result()


def from_ledger(
    ledger: Any, league: str = "", *, keep_withdrawn: bool = False, rows: Iterable[Any] | None = None
) -> dict[str, Any]:
    """Standings from an open :class:`~referee.league.ledger.Ledger` (rows come in game-id order;
    ``rows``: its rows, already read, e.g. for the report too).

    Withdrawn bots (the ledger's meta ``withdrawn``, :mod:`referee.league.roster`):
    every game one of them sat in is left out, for every bot at its table,
    unless ``keep_withdrawn``; the result then lists them under ``withdrawn``
    (``bot``, ``games``: the games it sat in, ``counted``), and with
    ``keep_withdrawn`` their rows in every scope say ``"withdrawn": true``."""
    from referee.league.night import shown_epoch_seeds, shown_seed
    from referee.league.roster import WITHDRAWN_META, stored_withdrawn

    tally = Tally(league or (ledger.get_meta("league") or ""))
    gone = stored_withdrawn(ledger.get_meta(WITHDRAWN_META))
    sat = dict.fromkeys(gone, 0)
    for row in ledger.rows() if rows is None else rows:
        present = [b for b in gone if b in row.bots]
        for b in present:
            sat[b] += 1
        if present and not keep_withdrawn:
            continue
        tally.add(row)
    st = tally.result()
    if gone:
        st["withdrawn"] = [{"bot": b, "games": sat[b], "counted": keep_withdrawn} for b in gone]
        if keep_withdrawn:
            for scope in st["scopes"].values():
                for r in scope["bots"]:
                    if r["bot"] in sat:
                        r["withdrawn"] = True
    seed = shown_seed(ledger)  # a secret seed only once the night is complete
    if seed is None:
        return st
    later = shown_epoch_seeds(ledger)  # a grown secret night's later epochs' secrets, as shown as its seed
    return {"league": st.pop("league"), "seed": seed, **({"epoch_seeds": later} if later else {}), **st}


def withdrawn_text(st: dict[str, Any]) -> str | None:
    """The withdrawn bots in words (None if there are none), for every output."""
    gone = st.get("withdrawn") or []
    if not gone:
        return None
    names = ", ".join(f"{w['bot']} ({w['games']} game{'s' * (w['games'] != 1)})" for w in gone)
    if gone[0].get("counted"):
        return f"Withdrawn: {names}; their games are counted (--keep-withdrawn), the bots marked withdrawn."
    return (
        f"Withdrawn: {names}; every game a withdrawn bot sat in is left out of these standings, for every bot "
        "at its table (--keep-withdrawn counts them)."
    )


def bot_label(row: dict[str, Any]) -> str:
    """A standings row's bot name, marked if the bot is withdrawn."""
    return f"{row['bot']} (withdrawn)" if row.get("withdrawn") else str(row["bot"])


def seed_text(st: dict[str, Any]) -> str | None:
    """The master seed in words (None when the standings do not know it):
    ``"master seed 42"``, or for a secret night not complete yet ``"master seed
    secret (shown once every planned game is played)"``."""
    seed = st.get("seed")
    if seed is None:
        return None
    if seed == "secret":
        return "master seed secret (shown once every planned game of the night is played)"
    return f"master seed {seed} (every deal derives from it: tournaments/README.md)"


# --------------------------------------------------------------------------
# output

CSV_FIELDS = [
    "scope",
    "place",
    "bot",
    "games",
    "wins",
    "win_share",
    "win_lo",
    "win_hi",
    "mean_score",
    "mean_rank",
    "mu",
    "sigma",
    "ordinal",
    "forfeits",
    "faults",
    "think_mean_ms",
    "think_max_ms",
]


def games_text(data: dict[str, Any]) -> str:
    """A scope's (or the top level's) game counts in words: ``"120 games, 3 stalled,
    2 aborted"`` (stalled games are among the games counted; aborted ones are not)."""
    aborted = data["aborted"] if isinstance(data.get("aborted"), int) else len(data.get("aborted") or [])
    games = data["games"]
    return f"{games} game{'' if games == 1 else 's'}, {data.get('stalled', 0)} stalled, {aborted} aborted"


@dataclass(frozen=True)
class Column:
    """One column of the standings tables (terminal, ``standings.md``, ``report.html``): its key in a
    standings row, its heading and what it means (the legend)."""

    key: str
    head: str
    legend: str
    per_variant_only: bool = False  # not shown for the overall scope


#: the columns of every standings table, in order, with the legend all outputs print
COLUMNS: tuple[Column, ...] = (
    Column("place", "#", "place in this table (see the sort order below)"),
    Column("bot", "bot", "the bot's name in the config"),
    Column("games", "games", "seats played in this scope (aborted games are not counted)"),
    Column(
        "win_share",
        "win share",
        "wins / games: a game's win is shared by its tied winners (1/k each); a forfeited seat gets 0",
    ),
    Column("win_ci", "95% CI", "95% Wilson interval of the win share"),
    Column(
        "mean_score",
        "mean score",
        "the variant's own score per game (forfeits count 0); shown per variant only, "
        "because variants score on different scales",
        per_variant_only=True,
    ),
    Column(
        "mean_rank",
        "mean rank",
        "mean finishing place (1 = first, ties share a place, forfeits last); depends on the table sizes played",
    ),
    Column(
        "mu",
        "mu",
        "Plackett-Luce rating (openskill's scale, 25 with no games), fitted to all the games at once: "
        "the same games give the same ratings whatever order they were played in",
    ),
    Column("sigma", "sigma", "the rating's uncertainty (it shrinks with every game)"),
    Column("ordinal", "ordinal", "mu - 3 sigma: a conservative rating, the bot is very likely at least this good"),
    Column("forfeits", "forfeits", "games in which the bot faulted and the referee's fallback played its seat on"),
    Column("faults", "faults", "faults by kind (timeout, crash, malformed, illegal, stale)"),
    Column("think", "think ms", "mean / max time per decision, in milliseconds"),
)

#: how every standings table is sorted, in words
SORT_TEXT = "Sorted by ordinal (mu - 3 sigma, the conservative rating), highest first; ties by win share, then by name."
#: why a place can differ from the win share order, in words (after SORT_TEXT in every output)
RATING_NOTE = (
    "Rating order can differ from win share: the rating weighs whom a bot beat, and fewer games mean a larger sigma."
)


def columns(scope: str) -> list[Column]:
    """The columns shown for ``scope`` (the overall scope has no mean score)."""
    return [c for c in COLUMNS if not (scope == "overall" and c.per_variant_only)]


def cell_text(row: dict[str, Any], key: str) -> str:
    """A standings row's value for column ``key`` as text (the same in every output)."""
    if key == "win_share":
        return f"{row['win_share']:.3f}"
    if key == "win_ci":
        return f"{row['win_lo']:.3f}-{row['win_hi']:.3f}"
    if key in ("mean_score", "mean_rank", "mu", "sigma", "ordinal"):
        return f"{row[key]:.2f}"
    if key == "faults":
        return _faults_text(row["faults"]) or "-"
    if key == "think":
        return f"{row['think_mean_ms']:.2f} / {row['think_max_ms']:.1f}"
    if key == "bot":
        return bot_label(row)
    return str(row[key])


def legend_lines() -> list[str]:
    """The legend: one ``head: meaning`` line per column, then the sort order."""
    return [f"{c.head}: {c.legend}" for c in COLUMNS] + [SORT_TEXT, RATING_NOTE]


def _faults_text(faults: dict[str, int]) -> str:
    return " ".join(f"{k}:{v}" for k, v in faults.items())


def to_json(st: dict[str, Any]) -> str:
    return json.dumps(st, indent=2, sort_keys=False) + "\n"


def to_csv(st: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for scope, data in st["scopes"].items():
        for row in data["bots"]:
            w.writerow(
                {**{k: row[k] for k in CSV_FIELDS if k in row}, "scope": scope, "faults": _faults_text(row["faults"])}
            )
    return buf.getvalue()


def md_text(text: Any) -> str:
    """Text for a Markdown table cell or heading: HTML escaped (a bot name is
    not markup), ``|`` and backslashes escaped, line breaks flattened."""
    import html

    t = html.escape(str(text), quote=False).replace("\\", "\\\\").replace("|", "\\|")
    return " ".join(t.split())


def meeting(scope: dict[str, Any], a: str, b: str) -> dict[str, int] | None:
    """How often bot ``a`` finished above bot ``b`` (``above``) out of their
    meetings (``met``) in one scope of the standings; None if they never met
    (or ``a`` is ``b``)."""
    cell: dict[str, int] | None = scope["head_to_head"].get(a, {}).get(b)
    return None if a == b or not cell else cell


HEAD_TO_HEAD_FIELDS = ["scope", "bot", "opponent", "above", "met"]


def head_to_head_csv(st: dict[str, Any]) -> str:
    """head_to_head.csv: per scope, for each pair of bots that met, how often
    ``bot`` finished strictly above ``opponent`` (``above``) out of ``met`` meetings."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=HEAD_TO_HEAD_FIELDS, lineterminator="\n")
    w.writeheader()
    for scope, data in st["scopes"].items():
        names = [r["bot"] for r in data["bots"]]
        for a in names:
            for b in names:
                cell = meeting(data, a, b)
                if cell:
                    w.writerow({"scope": scope, "bot": a, "opponent": b, "above": cell["above"], "met": cell["met"]})
    return buf.getvalue()


def to_markdown(st: dict[str, Any], notes: list[str] | None = None) -> str:
    """standings.md: the notes (an incomplete night, aborted games...), the legend, a table and a
    head-to-head table per scope, and the aborted games."""
    seed = seed_text(st)
    out = [
        f"# Standings: {md_text(st['league'] or 'league')}",
        "",
        f"{games_text(st)}.",
        "",
        *([f"{md_text(seed[0].upper() + seed[1:])}.", ""] if seed else []),
    ]
    for note in notes or []:
        out += [f"> **{md_text(note)}**" if note.startswith("INCOMPLETE") else f"> {md_text(note)}", ""]
    out += [
        (
            "Stalled games (an ask hand ended by the stalemate rule) count like any other; aborted games have "
            "no result and count nowhere."
        ),
        "",
        "Columns:",
        "",
    ]
    out += [f"- **{md_text(c.head)}**: {md_text(c.legend)}" for c in COLUMNS]
    out += ["", md_text(SORT_TEXT) + " " + md_text(RATING_NOTE), ""]
    gone = withdrawn_text(st)
    if gone:
        out += [md_text(gone), ""]
    for scope, data in st["scopes"].items():
        cols = columns(scope)
        out += [f"## {md_text(scope)} ({games_text(data)})", ""]
        out.append("| " + " | ".join(md_text(c.head) for c in cols) + " |")
        out.append("|---" * len(cols) + "|")
        for r in data["bots"]:
            out.append("| " + " | ".join(md_text(cell_text(r, c.key)) for c in cols) + " |")
        out.append("")
        names = [r["bot"] for r in data["bots"]]
        if len(names) > 1:
            out += ["Head to head (row finished above column / times met):", ""]
            out.append("| | " + " | ".join(md_text(n) for n in names) + " |")
            out.append("|---" * (len(names) + 1) + "|")
            for a in names:
                cells = []
                for b in names:
                    cell = meeting(data, a, b)
                    cells.append(f"{cell['above']}/{cell['met']}" if cell else "-")
                out.append(f"| {md_text(a)} | " + " | ".join(cells) + " |")
            out.append("")
    if st.get("aborted"):
        out += [f"## Aborted games ({len(st['aborted'])}, not counted above)", ""]
        out += [f"- {a['game']} ({md_text(', '.join(a['bots']))}): {md_text(a['detail'])}" for a in st["aborted"]]
        out.append("")
    return "\n".join(out)


def write_files(out_dir: Path, st: dict[str, Any], notes: list[str] | None = None) -> list[Path]:
    """Write standings.json, standings.csv, head_to_head.csv and standings.md (with ``notes``) into
    ``out_dir`` (each via a temporary file and a rename, so a reader never sees half a file)."""
    out_dir = Path(out_dir)
    written = []
    for name, text in (
        ("standings.json", to_json(st)),
        ("standings.csv", to_csv(st)),
        ("head_to_head.csv", head_to_head_csv(st)),
        ("standings.md", to_markdown(st, notes)),
    ):
        p = out_dir / name
        write_atomic(p, text)
        written.append(p)
    return written


def rich_tables(st: dict[str, Any], scopes: Iterable[str] | None = None) -> list[Table]:
    """One rich table per scope (the columns of :data:`COLUMNS`; see :func:`legend_lines`)."""
    from rich.table import Table

    tables: list[Table] = []
    for scope, data in st["scopes"].items():
        if scopes is not None and scope not in scopes:
            continue
        cols = columns(scope)
        t = Table(title=f"{scope} ({games_text(data)})", title_justify="left")
        for c in cols:
            t.add_column(
                c.head,
                justify="left" if c.key in ("bot", "faults") else "right",
                no_wrap=c.key in ("bot", "win_ci", "think"),
            )
        for r in data["bots"]:
            t.add_row(*(cell_text(r, c.key) for c in cols))
        tables.append(t)
    return tables
