"""The night's report page: pure functions from the standings, the night's summary and ledger rows
to ``report.html`` and the game browser's data files.

``report.html`` is one self-contained page (inline CSS, SVG plots and one small script; nothing
fetched from the network): a header (league, dates, seed, referee version, every bot with its
command and ``hello``, games played of planned with a banner when the night is incomplete, stalled
and aborted counts, the config in a collapsible block), the legend of the standings columns and
the sort order, the plots (:mod:`referee.view.plots`), the standings per scope (no mean score
across variants: their scales differ), head-to-head heat maps, faults, aborted games, and the game
browser.

The game browser keeps the page fast for any number of games: each variant's games are a separate
data file, ``report-data/games-K.js`` (:func:`games_js`: ``window.__refereeGames[K] = {...}``),
loaded by a script element only when that variant is chosen (this works from ``file://``, where
``fetch()`` does not), and shown a page at a time, filtered by bot, table, result and faults.
Each game row is ``[id, table, [bot index per seat], [scores], [ranks], [forfeited seats],
reason ("c" complete, "s" stalled, "a" aborted), [[seat, fault kind], ...], has viewer (0/1),
log href]``.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from referee.league.standings import COLUMNS, RATING_NOTE, SORT_TEXT, cell_text, columns, games_text
from referee.view.page import _asset, data_json
from referee.view.plots import head_to_head_heatmap, rating_plot, think_time_plot, win_share_plot

if TYPE_CHECKING:
    from referee.league.ledger import GameRow
    from referee.league.summary import NightSummary

DATA_DIR = "report-data"
PAGE_SIZE = 50
FAULTS_SHOWN = 200  # fault rows listed in the page itself (all are in the game browser)
_REASON = {"complete": "c", "stalled": "s", "aborted": "a"}


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def games_src(k: int) -> str:
    """The data file of the ``k``-th variant's games, relative to the report."""
    return f"{DATA_DIR}/games-{k}.js"


def game_rows(rows: Iterable[GameRow], viewers: set[str]) -> dict[str, dict[str, Any]]:
    """The game browser's data per variant (in order of first appearance in ``rows``): ``{variant:
    {"variant", "bots", "games"}}`` (see the module docstring for a game row). ``viewers``: the
    game ids that have a viewer frames file."""
    out: dict[str, dict[str, Any]] = {}
    index: dict[str, dict[str, int]] = {}
    for r in rows:
        v = out.get(r.variant)
        if v is None:
            v = out[r.variant] = {"variant": r.variant, "bots": [], "games": []}
            index[r.variant] = {}
        idx = index[r.variant]
        seats = []
        for b in r.bots:
            if b not in idx:
                idx[b] = len(v["bots"])
                v["bots"].append(b)
            seats.append(idx[b])
        scores = [int(s) if float(s).is_integer() else s for s in r.scores]
        faults = [[int(f.get("seat", 0)), str(f.get("fault", "?"))] for f in r.faults]
        v["games"].append(
            [
                r.game_id,
                r.table,
                seats,
                scores,
                list(r.ranks),
                list(r.forfeits),
                _REASON.get(r.reason, "c"),
                faults,
                1 if r.game_id in viewers else 0,
                r.log_path or "",
            ]
        )
    return out


def games_js(k: int, data: Mapping[str, Any]) -> str:
    """The text of ``report-data/games-K.js``."""
    return f"window.__refereeGames = window.__refereeGames || {{}};\nwindow.__refereeGames[{k}] = {data_json(data)};\n"


def fair_shares(rows: Iterable[GameRow]) -> dict[str, float]:
    """Each variant's even win share: the mean of 1/table size over its counted games."""
    acc: dict[str, list[float]] = {}
    for r in rows:
        if r.reason != "aborted" and r.bots:
            a = acc.setdefault(r.variant, [0.0, 0.0])
            a[0] += 1 / len(r.bots)
            a[1] += 1
    return {v: s / n for v, (s, n) in acc.items() if n}


# ----------------------------------------------------------------------------- sections


def _header(st: Mapping[str, Any], s: NightSummary, written: float) -> str:
    when = _when(s)
    facts = [
        ("date", when or "no games yet"),
        (
            "seed",
            "secret (shown once every planned game is played)"
            if s.seed == "secret"
            else str(s.seed) + "".join(f"; epoch {e}: {v}" for e, v in enumerate(s.epoch_seeds, 1))
            if s.seed is not None
            else "not recorded",
        ),
        ("referee", f"card-referee {s.referee}"),
        (
            "games",
            f"{s.played} played of {s.planned if s.planned is not None else 'unknown'} planned"
            + (f", {s.ladder} ladder games" if s.ladder else ""),
        ),
        ("stalled", str(s.stalled)),
        ("aborted", str(s.aborted)),
    ]
    if s.shard:
        facts.append(("shard", s.shard))
    items = "".join(f'<li data-testid="fact-{k}">{_e(k)}: <b>{_e(v)}</b></li>' for k, v in facts)
    stamp = datetime.fromtimestamp(written, UTC).strftime("%Y-%m-%d %H:%M UTC")
    toc = "".join(
        f'<a href="#{a}">{_e(t)}</a>'
        for a, t in (
            ("winners", "winners"),
            ("bots", "bots"),
            ("legend", "how to read"),
            ("plots", "plots"),
            ("standings", "standings"),
            ("faults", "faults"),
            ("games", "game browser"),
        )
    )
    return (
        f'<header class="top"><h1 data-testid="league">{_e(s.league)}</h1>'
        f'<ul class="facts">{items}<li>report written <b>{_e(stamp)}</b></li></ul>'
        f'<nav class="toc">{toc}</nav></header>'
    )


def _when(s: NightSummary) -> str:
    from referee.league.summary import when_text

    return when_text(s)


def _banners(s: NightSummary, notes: Sequence[str]) -> str:
    out = []
    for note in notes:
        if note.startswith("INCOMPLETE"):
            out.append(f'<div class="banner incomplete" role="alert" data-testid="incomplete">{_e(note)}</div>')
        else:
            out.append(f'<div class="banner note" data-testid="note">{_e(note)}</div>')
    if s.complete:
        out.insert(
            0,
            f'<div class="banner complete" data-testid="complete">Complete: all {s.planned} planned games '
            "were played.</div>",
        )
    return "".join(out)


def _hello_text(hello: Mapping[str, Any] | None) -> str:
    if not hello:
        return "no hello recorded"
    name = str(hello.get("name", "?"))
    version = hello.get("version")
    return f"{name} {version}" if version else name


_PLACE_WORDS = {1: "1st", 2: "2nd", 3: "3rd"}


def _podium(st: Mapping[str, Any], s: NightSummary) -> str:
    """Who won: the first three of every scope (overall first) by the standings' sort key, with the
    sentence on why the rating order can differ from the win share order."""
    key = SORT_KEY
    rows = []
    scopes = st["scopes"]
    order = ["overall", *[k for k in scopes if k != "overall"]] if "overall" in scopes else list(scopes)
    for scope in order:
        bots = [r for r in scopes[scope]["bots"] if r.get("games")]
        if not bots:
            continue
        top = bots[0]
        steps = "".join(
            f'<li class="p{r["place"]}" data-testid="podium-{_e(scope)}-{i + 1}">'
            f'<span class="pl">{_e(_PLACE_WORDS.get(int(r["place"]), str(r["place"])))}</span> '
            f'<b class="name">{_e(cell_text(r, "bot"))}</b> <span class="muted">{_e(key)} '
            f"{_e(cell_text(r, key))}, win share {_e(cell_text(r, 'win_share'))}</span></li>"
            for i, r in enumerate(bots[:3])
        )
        rows.append(
            f'<div class="podium" data-testid="podium-{_e(scope)}"><h3>{_e(scope)}: '
            f'<span data-testid="winner-{_e(scope)}">{_e(cell_text(top, "bot"))}</span></h3><ol>{steps}</ol></div>'
        )
    if not rows:
        return ""
    head = "Leading so far (the night is not complete)" if s.incomplete else "Winners"
    return (
        f'<section id="winners" data-testid="winners"><h2>{_e(head)}</h2>'
        f'<div class="podiums">{"".join(rows)}</div>'
        f'<p class="muted" data-testid="winners-note">Placed by {_e(key)}, the standings\' sort key. '
        f"{_e(RATING_NOTE)}</p></section>"
    )


def _bots(s: NightSummary) -> str:
    rows = []
    for i, b in enumerate(s.bots):
        cmd = b.command if isinstance(b.command, str) else " ".join(b.command)
        rows.append(
            f'<tr data-testid="bot-row"><td class="l">{_e(b.name)}</td>'
            f'<td class="l" data-testid="hello-{i}">{_e(_hello_text(b.hello))}</td>'
            f'<td class="cmd">{_e(cmd) or "<span class=muted>not recorded</span>"}</td></tr>'
        )
    config = ""
    if s.config is not None:
        config = (
            f'<details data-testid="config"><summary>config (as stored in the ledger)</summary>'
            f'<pre class="config">{_e(json.dumps(s.config, indent=2, sort_keys=True))}</pre></details>'
        )
    return (
        f'<section id="bots"><h2>Bots</h2><table><tr><th class="l">bot</th>'
        f'<th class="l">hello (name and version it announced)</th><th class="l">command</th></tr>'
        f"{''.join(rows)}</table>{config}</section>"
    )


def _legend() -> str:
    items = "".join(f"<dt>{_e(c.head)}</dt><dd>{_e(c.legend)}</dd>" for c in COLUMNS)
    return (
        f'<section id="legend"><h2>How to read the standings</h2>'
        f'<p data-testid="sorted-by"><b>{_e(SORT_TEXT)}</b> {_e(RATING_NOTE)} Each variant is its own table; '
        "the overall table pools every variant's games (ratings and win shares only: scores of different "
        "variants are not comparable, so it has no mean score).</p>"
        f'<dl class="legend" data-testid="legend">{items}</dl>'
        '<p class="muted">Stalled games (an ask hand ended by the stalemate rule) count like any other; '
        "aborted games have no result and count nowhere. The win share's even value (every bot equally "
        "good) is 1 / table size, drawn as a dashed line in the win share plot.</p></section>"
    )


def _scroll(label: str) -> str:
    """The opening of a box that scrolls sideways on a narrow screen: focusable, so the keyboard can
    scroll it too, and named for screen readers."""
    return f'<div class="scroll" tabindex="0" role="region" aria-label="{_e(label)} (scrolls sideways)">'


#: the standings' sort key (the column every table is ordered by; see SORT_TEXT)
SORT_KEY = "ordinal"
_KEY_FIRST = ("place", "bot", SORT_KEY)  # shown first, so a phone shows them without scrolling


def _cell_class(key: str) -> str:
    return {"place": "place", "bot": "l botname", "faults": "l", SORT_KEY: "key"}.get(key, "")


def _standings_table(scope: str, data: Mapping[str, Any]) -> str:
    cols = columns(scope)
    cols = [c for k in _KEY_FIRST for c in cols if c.key == k] + [c for c in cols if c.key not in _KEY_FIRST]
    head = "".join(
        f'<th class="{_cell_class(c.key)}" data-col="{_e(c.key)}"><abbr title="{_e(c.legend)}">{_e(c.head)}</abbr></th>'
        for c in cols
    )
    body = []
    for r in data["bots"]:
        tds = "".join(
            f'<td class="{_cell_class(c.key)}" data-col="{_e(c.key)}">{_e(cell_text(r, c.key))}</td>' for c in cols
        )
        body.append(f"<tr>{tds}</tr>")
    table = f'<table data-testid="standings-{_e(scope)}"><tr>{head}</tr>{"".join(body)}</table>'
    return f"{_scroll(f'standings: {scope}')}{table}</div>"


def _plots(st: Mapping[str, Any], think: Mapping[str, Sequence[float]], fair: Mapping[str, float]) -> str:
    scopes = {k: list(v["bots"]) for k, v in st["scopes"].items()}
    variants = {k: v for k, v in scopes.items() if k != "overall"}
    order = [r["bot"] for r in st["scopes"]["overall"]["bots"]]
    overall = st["scopes"]["overall"]
    figs = [
        rating_plot({"overall": scopes["overall"], **variants}, order=order),
        win_share_plot(variants or scopes, order=order, fair=fair),
        head_to_head_heatmap(
            order,
            overall["head_to_head"],
            title="Head to head, all variants: how often the row's bot finished above the column's",
        ),
        think_time_plot(think, order=[b for b in order if b in think] + [b for b in think if b not in order]),
    ]
    names = ("rating", "win-share", "head-to-head", "think-time")
    body = "".join(
        f'<figure data-testid="plot-{n}" tabindex="0">{svg}</figure>' for n, svg in zip(names, figs, strict=True)
    )
    return (
        f'<section id="plots"><h2>Plots</h2><p class="muted">Hover or tap a mark for its exact figures '
        "(on a narrow screen a plot scrolls sideways).</p>"
        f'<div class="plots">{body}</div>'
        '<div id="plot-tip" class="plot-tip" data-testid="plot-tip" role="status" hidden></div></section>'
    )


def _standings(st: Mapping[str, Any]) -> str:
    parts = ['<section id="standings"><h2>Standings</h2>']
    for scope, data in st["scopes"].items():
        parts.append(f'<h3 id="scope-{_e(scope)}">{_e(scope)} <span class="muted">({_e(games_text(data))})</span></h3>')
        parts.append(_standings_table(scope, data))
        names = [r["bot"] for r in data["bots"]]
        if scope != "overall" and len(names) > 1:
            parts.append(
                f"<details><summary>head to head in {_e(scope)}</summary>"
                f"{head_to_head_heatmap(names, data['head_to_head'], title=f'Head to head in {scope}')}"
                "</details>"
            )
    parts.append("</section>")
    return "".join(parts)


def _game_link(game: str, log: str | None, viewers: set[str]) -> str:
    from referee.view.viewers import SHELL_HREF

    links = []
    if game in viewers:
        from referee.view.page import viewer_href

        href = viewer_href(SHELL_HREF, game)
        links.append(f'<a href="{_e(href)}">{_e(game)}</a>')
        # the log as text a browser shows: the viewer page's text form (the .jsonl.zst would be downloaded)
        links.append(f'<a class="muted" href="{_e(href)}&amp;text=1" title="the game as text">log</a>')
    else:
        links.append(_e(game))
        if log:
            links.append(
                f'<a class="muted" href="{_e(log)}" title="zstd -dc or referee replay reads it">log (.zst)</a>'
            )
    return " ".join(links)


def _faults(st: Mapping[str, Any], viewers: set[str]) -> str:
    faults = st.get("faults") or []
    parts = [f'<section id="faults"><h2>Faults <span class="muted">({len(faults)})</span></h2>']
    if faults:
        parts.append(
            f'{_scroll("faults")}<table data-testid="faults"><tr><th class="l">game</th><th class="l">bot</th>'
            '<th>seat</th><th class="l">fault</th><th class="l">detail</th></tr>'
        )
        for f in faults[:FAULTS_SHOWN]:
            parts.append(
                f'<tr><td class="l">{_game_link(f["game"], f.get("log"), viewers)}</td>'
                f'<td class="l">{_e(f["bot"])}</td><td>{_e(f["seat"])}</td><td class="l">{_e(f["fault"])}</td>'
                f'<td class="l">{_e(f["detail"])}</td></tr>'
            )
        parts.append("</table></div>")
        if len(faults) > FAULTS_SHOWN:
            parts.append(
                f'<p class="muted">The first {FAULTS_SHOWN} are listed; the game browser below shows every '
                'game with a fault (tick "faults only").</p>'
            )
    else:
        parts.append("<p>No faults.</p>")
    aborted = st.get("aborted") or []
    if aborted:
        parts.append(
            f'<h3>Aborted games <span class="muted">({len(aborted)}, not counted in the standings)</span></h3>'
            '<table data-testid="aborted"><tr><th class="l">game</th><th class="l">bots</th>'
            '<th class="l">why</th></tr>'
        )
        for a in aborted[:FAULTS_SHOWN]:
            parts.append(
                f'<tr><td class="l">{_game_link(a["game"], a.get("log"), viewers)}</td>'
                f'<td class="l">{_e(", ".join(a["bots"]))}</td><td class="l">{_e(a["detail"])}</td></tr>'
            )
        parts.append("</table>")
    parts.append("</section>")
    return "".join(parts)


def _browser(variants: Sequence[tuple[str, int]], bots: Sequence[str], viewer_note: str) -> str:
    from referee.view.viewers import SHELL_HREF

    cfg = {
        "page_size": PAGE_SIZE,
        "shell": SHELL_HREF,
        "bots": list(bots),
        "variants": [{"name": v, "games": n, "src": games_src(k)} for k, (v, n) in enumerate(variants)],
        "no_viewer_hint": "referee report OUT writes the viewer pages of every game; referee serve OUT shows "
        "any game from its log",
    }
    return (
        '<section id="games" data-ready="false" data-testid="game-browser"><h2>Game browser</h2>'
        f'<p class="muted">Every game of the night, one variant at a time. {_e(viewer_note)}</p>'
        '<div class="gb-controls">'
        '<label>variant <select id="gb-variant" data-testid="gb-variant"></select></label>'
        '<label>bot <select id="gb-bot" data-testid="gb-bot"></select></label>'
        '<label>table <input id="gb-table" data-testid="gb-table" type="text" inputmode="numeric" '
        'placeholder="any"></label>'
        '<label>result <select id="gb-result" data-testid="gb-result"><option value="">any</option>'
        '<option value="complete">complete</option><option value="stalled">stalled</option>'
        '<option value="aborted">aborted</option></select></label>'
        '<label><input id="gb-faults" data-testid="gb-faults" type="checkbox"> faults only</label>'
        '<span id="gb-status" class="muted" data-testid="gb-status"></span></div>'
        '<div class="gb-pager"><button id="gb-prev" data-testid="gb-prev" type="button">&larr; previous</button>'
        '<span id="gb-page"></span><button id="gb-next" data-testid="gb-next" type="button">next &rarr;</button>'
        '<span id="gb-count" class="muted" data-testid="gb-count"></span></div>'
        f'{_scroll("games")}<table><thead><tr><th class="l">game</th><th>table</th>'
        '<th class="l">seats: bot and score (winner in green, forfeits struck out)</th><th class="l">result</th>'
        '<th class="l">faults</th><th class="l">links</th></tr></thead><tbody id="gb-rows"></tbody></table></div>'
        '<p id="gb-empty" class="muted" hidden>No game matches these filters.</p>'
        f'<script type="application/json" id="games-config">{data_json(cfg)}</script></section>'
    )


def render_report(
    st: Mapping[str, Any],
    summary: NightSummary,
    *,
    notes: Sequence[str],
    think: Mapping[str, Sequence[float]],
    fair: Mapping[str, float],
    variants: Sequence[tuple[str, int]],
    viewers: set[str],
    viewer_note: str,
    written: float,
) -> str:
    """``report.html`` (see the module docstring). ``variants``: the game browser's variants with
    their game counts, in the order of their data files; ``viewers``: game ids with a viewer page;
    ``viewer_note``: one sentence on the viewer pages; ``written``: the time stamp shown."""
    title = f"{summary.league} - league report"
    bots = [r["bot"] for r in st["scopes"]["overall"]["bots"]]
    bots += [b.name for b in summary.bots if b.name not in bots]
    if not all(math.isfinite(v) for v in fair.values()):
        fair = {}
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_asset('report.css')}</style></head><body>"
        f"{_header(st, summary, written)}<main>{_banners(summary, notes)}{_podium(st, summary)}"
        f"{_bots(summary)}{_legend()}"
        f"{_plots(st, think, fair)}{_standings(st)}{_faults(st, viewers)}{_browser(variants, bots, viewer_note)}"
        f"</main><script>{_asset('report.js')}</script></body></html>\n"
    )
