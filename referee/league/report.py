"""The HTML report: one self-contained file (inline CSS, no scripts, no external assets).

Sections: overall and per-variant standings, head-to-head tables, and the list of
faults with links to the game logs (relative links into ``OUT/games/``).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from referee.league.outdir import write_atomic
from referee.league.standings import bot_label, games_text, meeting, withdrawn_text

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f0f0f0} td.l,th.l{text-align:left}
h2{margin-top:1.5em} .muted{color:#777}
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _standings_table(data: dict[str, Any]) -> str:
    head = ["#", "bot", "games", "win share", "95% CI", "mean score", "mean rank", "mu", "sigma", "ordinal",
            "forfeits", "faults", "think mean ms", "think max ms"]
    rows = []
    for r in data["bots"]:
        faults = " ".join(f"{k}:{v}" for k, v in r["faults"].items()) or "-"
        cells = [
            r["place"], bot_label(r), r["games"], f"{r['win_share']:.3f}", f"{r['win_lo']:.3f}&ndash;{r['win_hi']:.3f}",
            f"{r['mean_score']:.2f}", f"{r['mean_rank']:.2f}", f"{r['mu']:.2f}", f"{r['sigma']:.2f}",
            f"{r['ordinal']:.2f}", r["forfeits"], faults, f"{r['think_mean_ms']:.2f}", f"{r['think_max_ms']:.1f}",
        ]
        tds = "".join(
            f'<td class="l">{_e(c)}</td>' if i in (1, 11) else f"<td>{c if i == 4 else _e(c)}</td>"
            for i, c in enumerate(cells)
        )
        rows.append(f"<tr>{tds}</tr>")
    ths = "".join(f'<th class="l">{h}</th>' if h in ("bot", "faults") else f"<th>{h}</th>" for h in head)
    return f"<table><tr>{ths}</tr>{''.join(rows)}</table>"


def _h2h_table(data: dict[str, Any]) -> str:
    names = [r["bot"] for r in data["bots"]]
    if len(names) < 2:
        return ""
    ths = '<th class="l">above &darr; / &rarr;</th>' + "".join(f"<th>{_e(n)}</th>" for n in names)
    rows = []
    for a in names:
        cells = []
        for b in names:
            c = meeting(data, a, b)
            if not c:
                cells.append('<td class="muted">-</td>')
            else:
                pct = 100.0 * c["above"] / c["met"]
                cells.append(f'<td title="{c["above"]} of {c["met"]}">{pct:.0f}% '
                             f'<span class="muted">({c["met"]})</span></td>')
        rows.append(f'<tr><th class="l">{_e(a)}</th>{"".join(cells)}</tr>')
    return (
        "<p class=\"muted\">How often the row's bot finished above the column's bot at the same table "
        "(times met in brackets).</p>"
        f"<table><tr>{ths}</tr>{''.join(rows)}</table>"
    )


def _game_link(entry: dict[str, Any]) -> str:
    """A fault's or aborted game's id, linked to its log if it has one."""
    log = entry.get("log")
    return f'<a href="{_e(log)}">{_e(entry["game"])}</a>' if log else _e(entry["game"])


def render(st: dict[str, Any], out_dir: Path | None = None) -> str:
    """The report as one HTML string."""
    parts = [
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\">",
        f"<title>{_e(st['league'] or 'league')} - standings</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(st['league'] or 'league')}</h1><p>{_e(games_text(st))}. <span class=\"muted\">Stalled games "
        "(an ask hand ended by the stalemate rule) count like any other; aborted games have no result.</span></p>",
    ]
    gone = withdrawn_text(st)
    if gone:
        parts.append(f'<p class="withdrawn">{_e(gone)}</p>')
    for scope, data in st["scopes"].items():
        parts.append(f"<h2>{_e(scope)} <span class=\"muted\">({_e(games_text(data))})</span></h2>")
        parts.append(_standings_table(data))
        parts.append(_h2h_table(data))
    faults = st.get("faults", [])
    parts.append(f"<h2>Faults <span class=\"muted\">({len(faults)})</span></h2>")
    if faults:
        parts.append('<table><tr><th class="l">game</th><th class="l">bot</th><th>seat</th><th class="l">fault</th>'
                     '<th class="l">detail</th></tr>')
        for f in faults:
            parts.append(
                f'<tr><td class="l">{_game_link(f)}</td><td class="l">{_e(f["bot"])}</td><td>{_e(f["seat"])}</td>'
                f'<td class="l">{_e(f["fault"])}</td><td class="l">{_e(f["detail"])}</td></tr>'
            )
        parts.append("</table>")
    else:
        parts.append("<p>No faults.</p>")
    aborted = st.get("aborted", [])
    if aborted:
        parts.append(f"<h2>Aborted games <span class=\"muted\">({len(aborted)}, not counted in the standings)"
                     "</span></h2>")
        parts.append('<table><tr><th class="l">game</th><th class="l">bots</th><th class="l">detail</th></tr>')
        for a in aborted:
            parts.append(f'<tr><td class="l">{_game_link(a)}</td><td class="l">{_e(", ".join(a["bots"]))}</td>'
                         f'<td class="l">{_e(a["detail"])}</td></tr>')
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "".join(parts)


def write_report(out_dir: Path, st: dict[str, Any]) -> Path:
    p = Path(out_dir) / "report.html"
    write_atomic(p, render(st, out_dir))
    return p
