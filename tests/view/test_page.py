"""The viewer page's Python side: the frames checks, the patch semantics, safe embedding, no network."""

from __future__ import annotations

import json
import re

import pytest

from referee.view import (
    apply_patch,
    check_frames,
    data_json,
    frames_js,
    frames_js_name,
    materialize,
    render_viewer,
    render_viewer_shell,
    viewer_href,
)
from tests.view.gamedata import ask_game, build_ask_game, build_chickens_game, chickens_game

EMBED = re.compile(r'<script type="application/json" id="game-data">(.*?)</script>', re.DOTALL)


def test_materialize_replays_the_patches_to_the_full_states() -> None:
    for build in (build_ask_game, build_chickens_game):
        data, full = build()
        states = materialize(data)
        assert states == full
        assert states[0] == data["frames"][0]["state"]
        for k in range(1, len(states)):
            assert states[k] == apply_patch(states[k - 1], data["frames"][k]["state"])
    data = ask_game()
    states = materialize(data)
    # frame 4 changes only alice's hand: the others carry over
    assert set(data["frames"][4]["state"]["hands"]) == {"0"}
    assert states[4]["hands"] == {"0": ["8S", "8C"], "1": ["9S", "9H"], "2": ["8H", "8D", "9D"]}
    assert states[4]["stock"] == 1 and states[3]["stock"] == 2
    assert states[-1]["scores"] == [1, 0, 1]


def test_apply_patch_leaves_its_inputs_alone() -> None:
    before = {"hands": {"0": ["A1"], "1": ["B2"]}, "counts": [1, 1]}
    patch = {"hands": {"1": []}, "counts": [1, 0]}
    after = apply_patch(before, patch)
    assert after == {"hands": {"0": ["A1"], "1": []}, "counts": [1, 0]}
    assert before == {"hands": {"0": ["A1"], "1": ["B2"]}, "counts": [1, 1]}
    assert apply_patch(before, None) == before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "something-else"}, "not a frames document"),
        ({"version": 3}, "version 3 is not supported"),
        ({"version": 2}, "version 2 has no events"),
        ({"frames": []}, "no frames"),
        ({"seats": []}, "no seats"),
        ({"game": ""}, "no game id"),
    ],
)
def test_check_frames_says_what_is_wrong(change: dict, message: str) -> None:
    data = {**ask_game(), **change}
    with pytest.raises(ValueError, match=message):
        check_frames(data)
    with pytest.raises(ValueError, match=message):
        render_viewer(data)
    with pytest.raises(ValueError, match=message):
        frames_js(data)


def test_check_frames_refuses_a_non_object() -> None:
    with pytest.raises(TypeError, match="JSON object"):
        check_frames([1, 2])  # type: ignore[arg-type]


def test_nan_is_refused() -> None:
    data = ask_game()
    data["frames"][1]["think_ms"] = float("nan")
    with pytest.raises(ValueError, match="JSON"):
        render_viewer(data)


def test_embedded_data_is_script_safe_and_round_trips() -> None:
    data = ask_game()
    hostile = "</script><script>alert(1)</script><!-- & \u2028\u2029 é"
    data["seats"][0]["bot"] = hostile
    data["frames"][1]["text"] = hostile
    page = render_viewer(data)
    found = EMBED.findall(page)
    assert len(found) == 1
    body = found[0]
    for bad in ("</", "<!--", "<script", "\u2028", "\u2029"):
        assert bad not in body
    assert json.loads(body) == data
    assert page.count("<script") == 2  # the data and the viewer's code, nothing else
    text = data_json({"a": "</script>"})
    assert text == '{"a":"\\u003c/script\\u003e"}'


def test_the_page_needs_no_network() -> None:
    for page in (render_viewer(ask_game()), render_viewer(chickens_game()), render_viewer_shell()):
        assert not re.search(r"https?://", page), "the page names a network address"
        assert not re.search(r"""\b(src|href)\s*=\s*["']?//""", page)
        assert '<link rel="stylesheet"' not in page and "@import" not in page and "url(" not in page
        assert "<script src" not in page
        assert page.startswith("<!DOCTYPE html>")
    assert 'id="game-data"' not in render_viewer_shell()


def test_title_and_back_link_are_escaped() -> None:
    data = ask_game()
    data["game"] = "g-<1>"
    page = render_viewer(data, back_href="../report.html?a=1&b=2", back_label="<report>")
    assert "<title>g-&lt;1&gt; · suited-stock — card-referee viewer</title>" in page
    assert 'href="../report.html?a=1&amp;b=2">&larr; &lt;report&gt;</a>' in page
    assert 'data-testid="back"' not in render_viewer(ask_game())


def test_frames_js_defines_the_data() -> None:
    data = chickens_game()
    text = frames_js(data)
    prefix = "window.__referee_game_data = "
    assert text.startswith(prefix) and text.endswith(";\n")
    assert json.loads(text[len(prefix) : -2]) == data


def test_frames_js_name_and_viewer_href() -> None:
    assert frames_js_name("kwartet-4p-t0003-d002-r1") == "kwartet-4p-t0003-d002-r1.frames.js"
    assert viewer_href("games/viewer.html", "g-000007") == "games/viewer.html?game=g-000007"
    assert viewer_href("viewer.html", "g-000007.h2", step=12) == "viewer.html?game=g-000007.h2&step=12"
    for bad in ("../x", "a/b", ".hidden", "", "g 1", "g?x"):
        with pytest.raises(ValueError, match="cannot be loaded"):
            frames_js_name(bad)
