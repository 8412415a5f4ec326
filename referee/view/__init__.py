"""See the games: the game viewer page and the report's plots (inline SVG).

* :func:`render_viewer`, :func:`render_viewer_shell`, :func:`frames_js`: the viewer page
  (:mod:`referee.view.page`), for the frames documents of :mod:`referee.view.frames`;
* :func:`referee.view.frames.frames_from_log`: the frames of a game log (the replay core's view);
* :mod:`referee.view.plots`: rating, win share, head-to-head and think-time plots;
* :mod:`referee.view.serve`: ``referee serve``.
"""

from referee.view.frames import FORMAT, VERSION, apply_patch, check_frames, materialize
from referee.view.page import data_json, frames_js, frames_js_name, render_viewer, render_viewer_shell, viewer_href

__all__ = [
    "FORMAT",
    "VERSION",
    "apply_patch",
    "check_frames",
    "data_json",
    "frames_js",
    "frames_js_name",
    "materialize",
    "render_viewer",
    "render_viewer_shell",
    "viewer_href",
]
