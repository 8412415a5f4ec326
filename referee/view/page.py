"""The game viewer page: one self-contained HTML file (inline CSS, JavaScript and SVG; no network).

Two forms:

* :func:`render_viewer` embeds one game's frames document in the page
  (``<script type="application/json" id="game-data">``);
* for many games, :func:`render_viewer_shell` is one page without data that loads
  ``GAME.frames.js`` from its own folder when opened as ``viewer.html?game=GAME`` (a script
  element, so it works from ``file://`` where ``fetch()`` does not); :func:`frames_js` writes
  that file's text.

Either page opens at step 0, or at the step given as ``?step=N`` (or ``#N``).
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import quote

from referee.view.frames import GAME_ID_RE, check_frames

_TOKEN = re.compile(r"@@(TITLE|CSS|JS|BACK|DATA_SCRIPT)@@")
_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SCRIPT_UNSAFE = re.compile("[<>&\u2028\u2029]")
_SCRIPT_ESCAPES_B = {k.encode(): v.encode() for k, v in _SCRIPT_ESCAPES.items()}
_SCRIPT_UNSAFE_B = re.compile("<|>|&|\u2028|\u2029".encode())


@cache
def _asset(name: str) -> str:
    return resources.files("referee.view").joinpath("assets", name).read_text(encoding="utf-8")


def data_json(data: Any) -> str:
    """``data`` as compact JSON that is safe inside a ``<script>`` element and in a JavaScript file:
    ``<``, ``>``, ``&``, U+2028 and U+2029 are written as ``\\uXXXX`` escapes (so no ``</script>``
    or ``<!--`` can appear). Raises :class:`ValueError` for NaN or infinities and :class:`TypeError`
    for values JSON cannot hold."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return _SCRIPT_UNSAFE.sub(lambda m: _SCRIPT_ESCAPES[m.group(0)], text)


def script_safe(text: bytes) -> bytes:
    """UTF-8 JSON text made safe as :func:`data_json` makes it (the same five escapes)."""
    if b"<" not in text and b">" not in text and b"&" not in text and b"\xe2" not in text:
        return text  # the usual case: a scan for each byte is cheaper than the regular expression
    return _SCRIPT_UNSAFE_B.sub(lambda m: _SCRIPT_ESCAPES_B[m.group(0)], text)


def _page(title: str, data_script: str, back_href: str | None, back_label: str) -> str:
    back = ""
    if back_href is not None:
        href, label = html.escape(back_href), html.escape(back_label)
        back = f'<a class="back" data-testid="back" href="{href}">&larr; {label}</a>'
    parts = {
        "TITLE": html.escape(title),
        "CSS": _asset("viewer.css"),
        "JS": _asset("expand.js") + "\n" + _asset("viewer.js"),
        "BACK": back,
        "DATA_SCRIPT": data_script,
    }
    return _TOKEN.sub(lambda m: parts[m.group(1)], _asset("viewer.html"))


def render_viewer(data: dict[str, Any], *, back_href: str | None = None, back_label: str = "report") -> str:
    """One self-contained HTML page showing the game in ``data`` (a frames document, see
    :mod:`referee.view.frames`). ``back_href``, when given, adds a link back (e.g. to the report).

    Raises :class:`ValueError` when ``data`` is not a frames document of a supported version or
    holds NaN/infinite numbers, :class:`TypeError` when it is not a mapping or holds values JSON
    cannot represent.
    """
    check_frames(data)
    title = f"{data['game']} · {data.get('variant', '')} — card-referee viewer"
    script = f'<script type="application/json" id="game-data">{data_json(data)}</script>'
    return _page(title, script, back_href, back_label)


def render_viewer_shell(*, back_href: str | None = None, back_label: str = "report") -> str:
    """The viewer page without data, for many games: opened as ``viewer.html?game=GAME`` it loads
    ``GAME.frames.js`` (see :func:`frames_js`) from its own folder. A missing or bad ``game``
    parameter, or a missing file, shows one error line in the page."""
    return _page("card-referee viewer", "", back_href, back_label)


def frames_js(data: dict[str, Any]) -> str:
    """The text of ``GAME.frames.js`` for the viewer shell: ``window.__referee_game_data = {...};``.
    Raises as :func:`render_viewer`."""
    check_frames(data)
    return f"window.__referee_game_data = {data_json(data)};\n"


def frames_js_name(game: str) -> str:
    """The file name the viewer shell loads for ``game`` (``GAME.frames.js``). Raises
    :class:`ValueError` for a game id the shell would refuse (it must match ``GAME_ID_RE``)."""
    if not GAME_ID_RE.match(game):
        raise ValueError(f"game id {game!r} cannot be loaded by the viewer shell (letters, digits, '.', '_', '-' only)")
    return f"{game}.frames.js"


def viewer_href(shell: str, game: str, step: int | None = None) -> str:
    """A link to the viewer shell ``shell`` (a relative URL, e.g. ``"games/viewer.html"``) showing
    ``game``, optionally at ``step``. Raises :class:`ValueError` as :func:`frames_js_name`."""
    frames_js_name(game)
    href = f"{shell}?game={quote(game, safe='')}"
    return href if step is None else f"{href}&step={int(step)}"
