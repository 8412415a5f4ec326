"""What a bot sees when started by ``referee play``, ``duel`` and ``check-bot``: its own
folder, not the caller's directory, and the ``--data`` folders (real bots, bubblewrap)."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest
import trio

from referee.checkbot import check_bot
from referee.cli import build_parser, main
from referee.commands.duel import build_spec
from tests.sandboxes import needs_bwrap

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
RANDOM = ROOT / "sample_bots" / "random_bot.py"
pytestmark = needs_bwrap

#: reads its table from REFEREE_BOT_DIR/../data/table.json (a traceback naming the path
#: when it cannot), then plays as the sample random bot (its path: the first argument)
READER = r"""
import json, os, runpy, sys
with open(os.path.join(os.environ["REFEREE_BOT_DIR"], "../data/table.json")) as f:
    json.load(f)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""

#: tells on stderr what it sees of the folder above its own (here: the one check-bot runs in), and exits
TELLER = r"""
import json, os, sys
look = os.path.dirname(os.environ["REFEREE_BOT_DIR"])
print(json.dumps({"bot_dir": os.environ.get("REFEREE_BOT_DIR"), "seen": sorted(os.listdir(look))}), file=sys.stderr)
"""


def _folders(top: Path) -> tuple[Path, Path]:
    """``top/bots/reader.py`` and ``top/data/table.json``; returns (bot, data folder)."""
    (top / "bots").mkdir()
    (top / "bots" / "reader.py").write_text(READER)
    (top / "data").mkdir()
    (top / "data" / "table.json").write_text('{"opening": "aces"}')
    return top / "bots" / "reader.py", top / "data"


def test_play_with_data_reads_it_and_without_names_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reader, data = _folders(tmp_path)
    bots = ["--bot", f"r={PY} {reader} {RANDOM}", "--bot", f"s={PY} {RANDOM}"]
    args = ["play", "happy-families", *bots, "--seed", "3", "--log", str(tmp_path / "logs")]
    assert main([*args, "--data", str(data)]) == 0
    out = capsys.readouterr().out
    assert "fault:" not in out and "(complete)" in out, out
    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: a bot could not start: bot 'r'"), lines
    assert f'data = ["{data}"]' in lines[0] and f"--data {data}" in lines[0], lines[0]
    assert main([*args, "--data", str(tmp_path / "nowhere")]) == 2
    assert "--data" in capsys.readouterr().err


def test_duel_gives_its_bots_the_data_folders(tmp_path: Path) -> None:
    _reader, data = _folders(tmp_path)
    args = build_parser().parse_args(
        ["duel", "kwartet", "--bot", f"a={PY} {RANDOM}", "--bot", f"b={PY} {RANDOM}", "--data", str(data)]
    )
    spec = build_spec(args)
    assert spec.a.data == spec.b.data == (str(data),)


def test_check_bot_from_a_parent_folder_shows_the_bot_only_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from a work folder that holds another night's ledger and config: the bot sees
    neither, and REFEREE_BOT_DIR is its own folder. A bot whose data is missing gets the fix."""
    night = tmp_path / "night-1"
    night.mkdir()
    (night / "ledger.sqlite").write_text("seed 99")
    (night / "league.toml").write_text("seed = 99\n")
    reader, data = _folders(tmp_path)
    (tmp_path / "bots" / "teller.py").write_text(TELLER)
    monkeypatch.chdir(tmp_path)

    async def check(command: list[str], **kw: object) -> tuple[str, str]:
        report = await check_bot(command, variants=["kwartet"], **kw)  # type: ignore[arg-type]
        first = report.checks[0]
        assert first.name == "handshake" and not first.ok
        return first.detail, first.fix

    detail, _fix = trio.run(check, [PY, "bots/teller.py"])
    told = json.loads(ast.literal_eval(detail.split("its stderr ends: ", 1)[1]))
    assert told == {"bot_dir": str(tmp_path / "bots"), "seen": ["bots"]}, told
    _detail, fix = trio.run(check, [PY, str(reader), str(RANDOM)])
    assert f'data = ["{data}"]' in fix and f"--data {data}" in fix, fix
