"""Plots for the report as inline SVG: pure functions from plain Python data to one ``<svg>`` string.

No dependencies, no scripts, no external fonts. Every plot is an accessible image (``role="img"``,
a ``<title>`` and a ``<desc>``), every mark has its own ``<title>`` (a tooltip with the exact
figures), and labels are laid out so that 2 to 30 bots never overlap (long names are shortened
with an ellipsis; the full name is in the tooltip).

Inputs (all easy to build from :func:`referee.league.standings.compute`'s dict ``st``):

* :func:`rating_plot` and :func:`win_share_plot` take ``scopes``: a mapping from a scope name
  (``"overall"`` or a variant) to that scope's rows, each a mapping with ``"bot"`` and

  - for ratings: ``"mu"`` and ``"sigma"`` (the standings' Plackett-Luce fit; the bar is mu +- 3 sigma, so its left end
    is the conservative ``ordinal`` the standings sort by);
  - for win shares: ``"win_share"``, ``"win_lo"``, ``"win_hi"`` (the 95% Wilson interval) and
    optionally ``"games"``.

  The standings rows have exactly these keys: ``standings_rows(st)`` gives
  ``{scope: st["scopes"][scope]["bots"]}``.
* :func:`head_to_head_heatmap` takes the bots in display order and the standings' head-to-head
  mapping ``{a: {b: {"above": int, "met": int}}}`` (``st["scopes"][scope]["head_to_head"]``).
* :func:`think_time_plot` takes ``{bot: [per-game mean think time in ms, ...]}``;
  :func:`think_samples` builds it from ledger rows (:class:`referee.league.ledger.GameRow`).

Errors: empty inputs give a small plot saying "no data"; a row missing a required key raises
:class:`KeyError`; non-finite numbers are skipped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', 'DejaVu Sans', sans-serif"
#: Okabe-Ito colours (distinguishable with the common colour-vision deficiencies)
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#8C6D1F", "#000000")
INK = "#1d232b"
MUTED = "#68717d"
GRID = "#e3e7ec"
MAX_LABEL = 24  # characters of a bot name shown before the ellipsis

__all__ = [
    "head_to_head_heatmap",
    "rating_plot",
    "standings_rows",
    "think_samples",
    "think_time_plot",
    "win_share_plot",
]


# --------------------------------------------------------------------------- helpers


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _f(x: float) -> str:
    """A coordinate: short and exact enough."""
    return f"{x:.1f}".rstrip("0").rstrip(".") if abs(x - round(x)) > 1e-9 else str(round(x))


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _short(name: str, limit: int = MAX_LABEL) -> str:
    name = " ".join(str(name).split())
    return name if len(name) <= limit else name[: limit - 1] + "…"


_NARROW = set("iljtfrI!|.,:;'`()[]{} ")
_WIDE = set("MWmw@%…")


def _text_width(text: str, size: float, bold: bool = False) -> float:
    """A generous estimate of a text's width in the wider sans-serif fonts (DejaVu Sans, Verdana):
    there are no font metrics here, so labels get room for the widest likely rendering."""
    em = 0.0
    for c in text:
        if c in _WIDE:
            em += 1.02
        elif c in _NARROW:
            em += 0.4
        elif c.isupper():
            em += 0.78
        else:
            em += 0.64
    return size * em * (1.12 if bold else 1.0)


def _fit(text: str, size: float, max_width: float, bold: bool = False) -> str:
    """``text`` shortened with an ellipsis until :func:`_text_width` says it fits ``max_width``."""
    text = " ".join(str(text).split())
    if _text_width(text, size, bold) <= max_width:
        return text
    while text and _text_width(text + "…", size, bold) > max_width:
        text = text[:-1]
    return text + "…"


def _nice_step(span: float, target: int) -> float:
    if span <= 0:
        return 1.0
    raw = span / max(1, target)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def _ticks(lo: float, hi: float, target: int = 5) -> tuple[float, float, list[float]]:
    """A nice axis range covering [lo, hi] and its ticks."""
    if hi <= lo:
        lo, hi = lo - 1, hi + 1
    step = _nice_step(hi - lo, target)
    a = math.floor(lo / step + 1e-9) * step
    b = math.ceil(hi / step - 1e-9) * step
    n = round((b - a) / step)
    return a, b, [a + i * step for i in range(n + 1)]


def _tick_label(v: float, step: float) -> str:
    if step >= 1:
        return f"{v:.0f}"
    digits = max(0, -math.floor(math.log10(step) + 1e-9))
    if abs(step * 10**digits - round(step * 10**digits)) > 1e-9:
        digits += 1
    return f"{v:.{digits}f}"


def _svg(width: float, height: float, title: str, desc: str, body: list[str]) -> str:
    width = max(width, _text_width(title, 14, bold=True) + 16)  # the title (at x=8, 14px) always fits
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" width="{_f(width)}" height="{_f(height)}" '
        f'viewBox="0 0 {_f(width)} {_f(height)}" style="max-width:100%;height:auto" font-family="{_e(FONT)}" '
        f'font-size="12" fill="{INK}" aria-label="{_e(title)}">'
        f"<title>{_e(title)}</title><desc>{_e(desc)}</desc>{''.join(body)}</svg>"
    )


def _no_data(title: str) -> str:
    body = [
        f'<text x="12" y="24" font-weight="600" font-size="14">{_e(title)}</text>',
        f'<text x="12" y="48" fill="{MUTED}">no data yet</text>',
    ]
    return _svg(320, 64, title, "no data yet", body)


def standings_rows(st: Mapping[str, Any], scopes: Iterable[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """``{scope: rows}`` from a standings dict, for :func:`rating_plot` and :func:`win_share_plot`
    (all scopes in the standings' order, or those named in ``scopes`` that exist)."""
    names = list(st["scopes"]) if scopes is None else [s for s in scopes if s in st["scopes"]]
    return {s: list(st["scopes"][s]["bots"]) for s in names}


# --------------------------------------------------------------------------- interval plots (small multiples)


def _panel_frame(
    scope: str,
    *,
    x0: float,
    y0: float,
    top: float,
    bottom: float,
    panel_w: float,
    ticks: Sequence[float],
    step: float,
    sx: Callable[[float], float],
    ref: tuple[float, str] | None,
) -> list[str]:
    """A panel's frame: its group's opening tag, scope title, box, ticks and dashed reference line."""
    out = [f'<g class="panel" data-scope="{_e(scope)}">']
    out.append(
        f'<text x="{_f(x0 + panel_w / 2)}" y="{_f(y0 + 14)}" text-anchor="middle" font-weight="600">'
        f"{_e(_fit(scope, 12, panel_w - 8, bold=True))}<title>{_e(scope)}</title></text>"
    )
    out.append(
        f'<rect x="{_f(x0)}" y="{_f(top)}" width="{_f(panel_w)}" height="{_f(bottom - top)}" '
        f'fill="#fafbfc" stroke="{GRID}"/>'
    )
    for t in ticks:
        x = sx(t)
        out.append(f'<line x1="{_f(x)}" y1="{_f(top)}" x2="{_f(x)}" y2="{_f(bottom)}" stroke="{GRID}"/>')
        out.append(
            f'<text x="{_f(x)}" y="{_f(bottom + 14)}" text-anchor="middle" font-size="10.5" '
            f'fill="{MUTED}">{_e(_tick_label(t, step))}</text>'
        )
    if ref is not None:
        x = sx(ref[0])
        out.append(
            f'<line x1="{_f(x)}" y1="{_f(top)}" x2="{_f(x)}" y2="{_f(bottom)}" stroke="{MUTED}" '
            f'stroke-dasharray="4 3"><title>{_e(ref[1])}</title></line>'
        )
    return out


def _panel_marks(
    scope: str,
    rows: Mapping[str, Mapping[str, Any]],
    bots: Sequence[str],
    *,
    x0: float,
    top: float,
    row_h: float,
    panel_w: float,
    colour: str,
    sx: Callable[[float], float],
    point: str,
    lo_of: Any,
    hi_of: Any,
    tooltip: Any,
) -> list[str]:
    """A panel's rows: the alternate rows' stripes and each bot's dot with its interval bar."""
    out: list[str] = []
    for i, bot in enumerate(bots):
        cy = top + row_h * (i + 0.5)
        if i % 2:
            out.append(
                f'<rect x="{_f(x0 + 1)}" y="{_f(top + row_h * i)}" width="{_f(panel_w - 2)}" '
                f'height="{_f(row_h)}" fill="#f1f3f6"/>'
            )
        r = rows.get(bot)
        if r is None or not _finite(r[point]):
            continue
        lo_v, hi_v = lo_of(r), hi_of(r)
        tip = _e(tooltip(scope, r))
        out.append(f'<g class="mark" data-bot="{_e(bot)}"><title>{tip}</title>')
        if _finite(lo_v) and _finite(hi_v):
            out.append(
                f'<line x1="{_f(sx(lo_v))}" y1="{_f(cy)}" x2="{_f(sx(hi_v))}" y2="{_f(cy)}" '
                f'stroke="{colour}" stroke-width="2.5" stroke-linecap="round"/>'
            )
            for v in (lo_v, hi_v):
                out.append(
                    f'<line x1="{_f(sx(v))}" y1="{_f(cy - 5)}" x2="{_f(sx(v))}" y2="{_f(cy + 5)}" '
                    f'stroke="{colour}" stroke-width="2"/>'
                )
        out.append(
            f'<circle cx="{_f(sx(r[point]))}" cy="{_f(cy)}" r="4.5" fill="{colour}" stroke="#fff" '
            f'stroke-width="1.5"/></g>'
        )
    return out


def _row_labels(bots: Sequence[str], *, top: float, row_h: float, label_w: float) -> list[str]:
    """The bots' names right-aligned left of a panel row, shortened, the full name as tooltip."""
    out: list[str] = []
    for i, bot in enumerate(bots):
        cy = top + row_h * (i + 0.5)
        out.append(
            f'<text class="label" x="{_f(label_w - 8)}" y="{_f(cy + 4)}" text-anchor="end">'
            f"{_e(_short(bot))}<title>{_e(bot)}</title></text>"
        )
    return out


def _interval_panels(
    scopes: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    title: str,
    desc: str,
    point: str,
    lo_of: Any,
    hi_of: Any,
    tooltip: Any,
    fixed_lo: float | None,
    reference: Mapping[str, tuple[float, str]],
    order: Sequence[str] | None,
    columns: int,
) -> str:
    scope_names = [s for s in scopes if scopes[s]]
    if not scope_names:
        return _no_data(title)
    bots: list[str] = list(order) if order is not None else []
    if order is None:
        for s in scope_names:
            for seen in scopes[s]:
                if seen["bot"] not in bots:
                    bots.append(seen["bot"])
    by_scope = {s: {r["bot"]: r for r in scopes[s]} for s in scope_names}

    row_h = 22.0
    label_w = max(_text_width(_short(b), 12) for b in bots) + 16
    panel_w = 230.0
    gap = 18.0
    columns = max(1, min(columns, len(scope_names)))
    grid_rows = math.ceil(len(scope_names) / columns)
    head_h = 34.0  # plot title
    panel_head = 22.0  # scope name
    axis_h = 30.0
    block_h = panel_head + row_h * len(bots) + axis_h
    width = label_w + columns * panel_w + (columns - 1) * gap + 14
    height = head_h + grid_rows * block_h + (grid_rows - 1) * 12 + 6
    out = [f'<text x="8" y="20" font-size="14" font-weight="600">{_e(title)}</text>']

    for gi, scope in enumerate(scope_names):
        col, grow = gi % columns, gi // columns
        x0 = label_w + col * (panel_w + gap)
        y0 = head_h + grow * (block_h + 12)
        rows = by_scope[scope]
        values = [v for row in rows.values() for v in (lo_of(row), hi_of(row), row[point]) if _finite(v)]
        ref = reference.get(scope)
        if ref is not None:
            values.append(ref[0])
        if not values:
            continue
        lo, hi = min(values), max(values)
        if fixed_lo is not None:
            lo = min(fixed_lo, lo)
        a, b, ticks = _ticks(lo, hi, 4)
        step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
        inner = panel_w - 16

        def sx(v: float, a: float = a, b: float = b, x0: float = x0, inner: float = inner) -> float:
            return x0 + 8 + (v - a) / (b - a) * inner

        top = y0 + panel_head
        bottom = top + row_h * len(bots)
        out += _panel_frame(
            scope, x0=x0, y0=y0, top=top, bottom=bottom, panel_w=panel_w, ticks=ticks, step=step, sx=sx, ref=ref
        )
        out += _panel_marks(
            scope,
            rows,
            bots,
            x0=x0,
            top=top,
            row_h=row_h,
            panel_w=panel_w,
            colour=PALETTE[gi % len(PALETTE)],
            sx=sx,
            point=point,
            lo_of=lo_of,
            hi_of=hi_of,
            tooltip=tooltip,
        )
        out.append("</g>")
        if col == 0:
            out += _row_labels(bots, top=top, row_h=row_h, label_w=label_w)
    return _svg(width, height, title, desc, out)


def rating_plot(
    scopes: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    title: str = "Rating: Plackett-Luce mu with mu ± 3 sigma",
    order: Sequence[str] | None = None,
    columns: int = 3,
) -> str:
    """Each bot's rating per scope: a dot at ``mu``, a bar from ``mu - 3 sigma`` (the ordinal the
    standings sort by) to ``mu + 3 sigma``; a dashed line marks the starting rating 25. One panel
    per scope (``columns`` panels a row), one row per bot (``order``, else first seen)."""

    def lo(r: Mapping[str, Any]) -> float:
        return float(r["mu"]) - 3 * float(r["sigma"])

    def hi(r: Mapping[str, Any]) -> float:
        return float(r["mu"]) + 3 * float(r["sigma"])

    def tip(scope: str, r: Mapping[str, Any]) -> str:
        return (
            f"{r['bot']}, {scope}: mu {float(r['mu']):.2f}, sigma {float(r['sigma']):.2f}, "
            f"ordinal (mu - 3 sigma) {lo(r):.2f}"
        )

    return _interval_panels(
        scopes,
        title=title,
        point="mu",
        lo_of=lo,
        hi_of=hi,
        tooltip=tip,
        fixed_lo=None,
        reference={s: (25.0, "starting rating: mu 25") for s in scopes},
        order=order,
        columns=columns,
        desc="For each scope, each bot's Plackett-Luce rating mu as a dot with a bar from mu - 3 sigma to "
        "mu + 3 sigma; "
        "the left end of the bar is the ordinal the standings are sorted by.",
    )


def win_share_plot(
    scopes: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    title: str = "Win share with its 95% interval",
    order: Sequence[str] | None = None,
    fair: Mapping[str, float] | None = None,
    columns: int = 3,
) -> str:
    """Each bot's win share per scope: a dot at ``win_share``, a bar over the 95% interval
    ``[win_lo, win_hi]``. ``fair`` optionally gives a scope's even share (e.g. 1/4 at 4-seat
    tables), drawn as a dashed line. The axis starts at 0."""

    def lo(r: Mapping[str, Any]) -> float:
        return float(r["win_lo"])

    def hi(r: Mapping[str, Any]) -> float:
        return float(r["win_hi"])

    def tip(scope: str, r: Mapping[str, Any]) -> str:
        games = f" over {r['games']} games" if "games" in r else ""
        return (
            f"{r['bot']}, {scope}: win share {float(r['win_share']):.3f} "
            f"(95% interval {lo(r):.3f} to {hi(r):.3f}){games}"
        )

    ref = {s: (float(v), f"even share {float(v):.3f}") for s, v in (fair or {}).items() if _finite(v)}
    return _interval_panels(
        scopes,
        title=title,
        point="win_share",
        lo_of=lo,
        hi_of=hi,
        tooltip=tip,
        fixed_lo=0.0,
        reference=ref,
        order=order,
        columns=columns,
        desc="For each scope, each bot's share of wins as a dot with a bar over its 95% Wilson interval.",
    )


# --------------------------------------------------------------------------- head to head


def _share_colour(p: float) -> str:
    """0 -> orange (row below column), 0.5 -> white, 1 -> blue (row above column)."""
    p = min(1.0, max(0.0, p))
    lo, mid, hi = (0xD5, 0x5E, 0x00), (0xF7, 0xF7, 0xF7), (0x00, 0x72, 0xB2)
    a, b, t = (lo, mid, p * 2) if p < 0.5 else (mid, hi, (p - 0.5) * 2)
    rgb = (round(a[i] + (b[i] - a[i]) * t) for i in range(3))
    return "#" + "".join(f"{c:02x}" for c in rgb)


def _heatmap_labels(
    bots: Sequence[str], labels: Sequence[str], *, left: float, top: float, cell: float, font: float
) -> list[str]:
    """The heat map's row labels (right-aligned, left of the grid) and column labels (at -45 degrees, above)."""
    out: list[str] = []
    for i, (bot, label) in enumerate(zip(bots, labels, strict=True)):
        cy = top + cell * (i + 0.5)
        out.append(
            f'<text class="label" x="{_f(left - 6)}" y="{_f(cy + 4)}" text-anchor="end" font-size="{_f(font)}">'
            f"{_e(label)}<title>{_e(bot)}</title></text>"
        )
        cx = left + cell * (i + 0.5)
        out.append(
            f'<text class="label" transform="translate({_f(cx + 3)},{_f(top - 6)}) rotate(-45)" '
            f'font-size="{_f(font)}">{_e(label)}<title>{_e(bot)}</title></text>'
        )
    return out


def _heatmap_cell(
    a: str, b: str, c: Mapping[str, int] | None, *, x: float, y: float, cell: float, show_text: bool
) -> list[str]:
    """One off-diagonal cell: white when ``a`` and ``b`` never met, else coloured by ``above / met``."""
    met = int(c.get("met", 0)) if c else 0
    if not met:
        return [
            f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(cell)}" height="{_f(cell)}" fill="#fff" '
            f'stroke="{GRID}"><title>{_e(a)} and {_e(b)} never met</title></rect>'
        ]
    above = int(c.get("above", 0)) if c else 0
    p = above / met
    tip = f"{a} finished above {b} in {above} of {met} meetings ({100 * p:.0f}%)"
    out = [
        f'<g class="cell" data-row="{_e(a)}" data-col="{_e(b)}"><title>{_e(tip)}</title>'
        f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(cell)}" height="{_f(cell)}" '
        f'fill="{_share_colour(p)}" stroke="#fff"/>'
    ]
    if show_text:
        ink = "#fff" if abs(p - 0.5) > 0.3 else INK
        out.append(
            f'<text x="{_f(x + cell / 2)}" y="{_f(y + cell / 2 + 4)}" text-anchor="middle" '
            f'font-size="10.5" fill="{ink}">{100 * p:.0f}</text>'
        )
    out.append("</g>")
    return out


def _heatmap_legend(lx: float, ly: float) -> list[str]:
    """The heat map's legend: a stepped colour bar from 0% (row below) to 100% (row above)."""
    out: list[str] = []
    steps = 10
    seg = 26.0
    for k in range(steps):
        out.append(
            f'<rect x="{_f(lx + k * seg)}" y="{_f(ly)}" width="{_f(seg)}" height="10" '
            f'fill="{_share_colour((k + 0.5) / steps)}"/>'
        )
    out.append(f'<text x="{_f(lx)}" y="{_f(ly + 24)}" font-size="10.5" fill="{MUTED}">0% (row below)</text>')
    out.append(
        f'<text x="{_f(lx + steps * seg)}" y="{_f(ly + 24)}" font-size="10.5" fill="{MUTED}" '
        f'text-anchor="end">100% (row above)</text>'
    )
    return out


def head_to_head_heatmap(
    bots: Sequence[str],
    h2h: Mapping[str, Mapping[str, Mapping[str, int]]],
    *,
    title: str = "Head to head: how often the row's bot finished above the column's bot",
) -> str:
    """A heat map of ``above / met`` for every ordered pair of bots that met (row above column);
    blue when the row usually finished above, orange when below, grey where they never met.
    Cells show the percentage when they are large enough; every cell's tooltip gives the counts."""
    bots = list(bots)
    if len(bots) < 2:
        return _no_data(title)
    n = len(bots)
    cell = max(20.0, min(44.0, 640.0 / n))  # >= 20: the -45 degree column labels stay apart
    font = 11.0
    labels = [_short(b) for b in bots]
    label_w = max(_text_width(s, font) for s in labels) + 12
    diag = math.sqrt(0.5)
    col_h = label_w * diag + 10  # column labels at -45 degrees
    head_h = 30.0
    left = label_w + 6
    top = head_h + col_h
    grid = cell * n
    legend_h = 46.0
    width = max(left + grid + label_w * diag + 12, left + 280)
    height = top + grid + legend_h
    out = [f'<text x="8" y="20" font-size="14" font-weight="600">{_e(title)}</text>']
    out += _heatmap_labels(bots, labels, left=left, top=top, cell=cell, font=font)
    show_text = cell >= 30
    for i, a in enumerate(bots):
        for j, b in enumerate(bots):
            x, y = left + cell * j, top + cell * i
            if i == j:
                out.append(
                    f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(cell)}" height="{_f(cell)}" fill="#d5dae1">'
                    f"<title>{_e(a)}</title></rect>"
                )
                continue
            out += _heatmap_cell(a, b, h2h.get(a, {}).get(b), x=x, y=y, cell=cell, show_text=show_text)
    out += _heatmap_legend(left, top + grid + 16)
    desc = (
        "A matrix of bots: each cell is the share of meetings in which the row's bot finished strictly above "
        "the column's bot; ties count for neither."
    )
    return _svg(width, height, title, desc, out)


# --------------------------------------------------------------------------- think times


def _quantile(sorted_xs: Sequence[float], q: float) -> float:
    if len(sorted_xs) == 1:
        return sorted_xs[0]
    pos = q * (len(sorted_xs) - 1)
    i = math.floor(pos)
    j = min(i + 1, len(sorted_xs) - 1)
    return sorted_xs[i] + (sorted_xs[j] - sorted_xs[i]) * (pos - i)


def think_samples(rows: Iterable[Any], variant: str | None = None) -> dict[str, list[float]]:
    """``{bot: [per-game mean think time in ms]}`` from ledger rows (objects with ``bots``,
    ``think``, ``variant`` and ``reason``, like :class:`referee.league.ledger.GameRow`): one sample
    per seat that made at least one timed decision; aborted games are left out; only ``variant``'s
    games when given. Bots appear in order of first appearance."""
    out: dict[str, list[float]] = {}
    for row in rows:
        if row.reason == "aborted" or (variant is not None and row.variant != variant):
            continue
        for s, bot in enumerate(row.bots):
            th = row.think[s] if s < len(row.think) else None
            if th and int(th.get("count", 0)) > 0 and _finite(th.get("mean_ms")):
                out.setdefault(bot, []).append(float(th["mean_ms"]))
    return out


def _log_axis(
    *, x0: float, plot_w: float, top: float, bottom: float, lo_e: int, hi_e: int, sx: Callable[[float], float]
) -> list[str]:
    """The think-time plot's axes: its box, a grid line per decade (at most 8 labelled) and the axis title."""
    out = [
        (
            f'<rect x="{_f(x0)}" y="{_f(top)}" width="{_f(plot_w)}" height="{_f(bottom - top)}" fill="#fafbfc" '
            f'stroke="{GRID}"/>'
        ),
    ]
    decades = list(range(lo_e, hi_e + 1))
    label_every = max(1, math.ceil(len(decades) / 8))
    for k, e in enumerate(decades):
        x = sx(10.0**e)
        out.append(f'<line x1="{_f(x)}" y1="{_f(top)}" x2="{_f(x)}" y2="{_f(bottom)}" stroke="{GRID}"/>')
        if k % label_every == 0:
            v = 10.0**e
            text = f"{v:g}" if v >= 1e-3 else f"1e{e}"
            out.append(
                f'<text x="{_f(x)}" y="{_f(bottom + 14)}" text-anchor="middle" font-size="10.5" '
                f'fill="{MUTED}">{_e(text)}</text>'
            )
    out.append(
        f'<text x="{_f(x0 + plot_w / 2)}" y="{_f(bottom + 29)}" text-anchor="middle" font-size="11" '
        f'fill="{MUTED}">ms per decision (mean of a game)</text>'
    )
    return out


def _think_box(
    bot: str,
    xs: Sequence[float],
    *,
    cy: float,
    row_h: float,
    colour: str,
    sx: Callable[[float], float],
    max_points: int,
) -> list[str]:
    """One bot's mark from its sorted samples ``xs``: strip of games, whiskers, quartile box, median."""
    q1, med, q3 = (_quantile(xs, q) for q in (0.25, 0.5, 0.75))
    p5, p95 = _quantile(xs, 0.05), _quantile(xs, 0.95)
    tip = (
        f"{bot}: {len(xs)} games; median {med:.3g} ms, quartiles {q1:.3g} to {q3:.3g} ms, "
        f"5th to 95th percentile {p5:.3g} to {p95:.3g} ms, max {xs[-1]:.3g} ms"
    )
    out = [f'<g class="mark" data-bot="{_e(bot)}"><title>{_e(tip)}</title>']
    # strip: evenly picked sorted values, deterministic jitter
    k = len(xs)
    picks = xs if k <= max_points else [xs[round(j * (k - 1) / (max_points - 1))] for j in range(max_points)]
    for j, v in enumerate(picks):
        jitter = ((j * 0.6180339887) % 1.0 - 0.5) * (row_h - 10)
        out.append(f'<circle cx="{_f(sx(v))}" cy="{_f(cy + jitter)}" r="1.8" fill="{colour}" fill-opacity="0.35"/>')
    out.append(
        f'<line x1="{_f(sx(p5))}" y1="{_f(cy)}" x2="{_f(sx(p95))}" y2="{_f(cy)}" stroke="{INK}" stroke-width="1.2"/>'
    )
    out.append(
        f'<rect x="{_f(sx(q1))}" y="{_f(cy - 6)}" width="{_f(max(1.5, sx(q3) - sx(q1)))}" height="12" '
        f'fill="{colour}" fill-opacity="0.25" stroke="{colour}" stroke-width="1.5"/>'
    )
    out.append(
        f'<line x1="{_f(sx(med))}" y1="{_f(cy - 7)}" x2="{_f(sx(med))}" y2="{_f(cy + 7)}" '
        f'stroke="{INK}" stroke-width="2.5"/></g>'
    )
    return out


def think_time_plot(
    samples: Mapping[str, Sequence[float]],
    *,
    title: str = "Think time per game (mean per decision, ms, log scale)",
    order: Sequence[str] | None = None,
    max_points: int = 200,
) -> str:
    """Each bot's distribution of per-game mean think times on a log axis: a box from the first to
    the third quartile with the median, whiskers from the 5th to the 95th percentile, and the
    games as a strip of dots (at most ``max_points`` per bot, picked evenly from the sorted values,
    so the strip keeps the distribution's shape). Values below 0.001 ms are drawn at 0.001 ms."""
    bots = list(order) if order is not None else list(samples)
    data = {b: sorted(max(1e-3, float(v)) for v in samples.get(b, ()) if _finite(v)) for b in bots}
    present = [v for b in bots for v in data[b]]
    if not present:
        return _no_data(title)
    lo_e = math.floor(math.log10(min(present)))
    hi_e = math.ceil(math.log10(max(present)))
    if hi_e == lo_e:
        hi_e += 1
    row_h = 26.0
    label_w = max(_text_width(_short(b), 12) for b in bots) + 16
    plot_w = 520.0
    head_h = 34.0
    axis_h = 34.0
    width = label_w + plot_w + 20
    height = head_h + row_h * len(bots) + axis_h
    top, bottom = head_h, head_h + row_h * len(bots)
    x0 = label_w

    def sx(v: float) -> float:
        return x0 + 8 + (math.log10(v) - lo_e) / (hi_e - lo_e) * (plot_w - 16)

    out = [f'<text x="8" y="20" font-size="14" font-weight="600">{_e(title)}</text>']
    out += _log_axis(x0=x0, plot_w=plot_w, top=top, bottom=bottom, lo_e=lo_e, hi_e=hi_e, sx=sx)
    for i, bot in enumerate(bots):
        xs = data[bot]
        cy = top + row_h * (i + 0.5)
        if i % 2:
            out.append(
                f'<rect x="{_f(x0 + 1)}" y="{_f(top + row_h * i)}" width="{_f(plot_w - 2)}" '
                f'height="{_f(row_h)}" fill="#f1f3f6"/>'
            )
        out.append(
            f'<text class="label" x="{_f(label_w - 8)}" y="{_f(cy + 4)}" text-anchor="end">'
            f"{_e(_short(bot))}<title>{_e(bot)}</title></text>"
        )
        if not xs:
            continue
        out += _think_box(bot, xs, cy=cy, row_h=row_h, colour=PALETTE[i % len(PALETTE)], sx=sx, max_points=max_points)
    desc = (
        "For each bot, the distribution of its per-game mean think time per decision in milliseconds on a "
        "logarithmic axis: box = quartiles, thick line = median, whiskers = 5th to 95th percentile, dots = games."
    )
    return _svg(width, height, title, desc, out)
