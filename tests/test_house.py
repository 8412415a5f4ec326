"""House rules the code keeps (docs/ARCHITECTURE.md, "The house"): no function or method in
referee/ or protocol/ is longer than MAX_LINES lines, from its ``def`` to its last line (decorators
aside, its docstring included). Parses the source: nothing is imported or run."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 90

#: functions allowed over the limit, each with its reason (none today; an entry that is no longer
#: needed fails the test too)
WAIVED: frozenset[str] = frozenset()


def long_functions(root: Path = ROOT, limit: int = MAX_LINES) -> dict[str, int]:
    """``{"path:qualified.name": lines}`` of every function over ``limit`` lines."""
    found: dict[str, int] = {}
    for top in ("referee", "protocol"):
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            _walk(ast.parse(path.read_text(encoding="utf-8"), rel), rel, "", limit, found)
    return found


def _walk(node: ast.AST, rel: str, prefix: str, limit: int, found: dict[str, int]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + child.name
            if not isinstance(child, ast.ClassDef):
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                if lines > limit:
                    found[f"{rel}:{name}"] = lines
            _walk(child, rel, name + ".", limit, found)
        else:
            _walk(child, rel, prefix, limit, found)


def test_no_function_over_the_limit() -> None:
    found = long_functions()
    over = {k: v for k, v in found.items() if k not in WAIVED}
    assert not over, f"functions over {MAX_LINES} lines (split them along their seams): " + ", ".join(
        f"{k} ({v} lines)" for k, v in sorted(over.items(), key=lambda kv: -kv[1])
    )
    stale = sorted(WAIVED - found.keys())
    assert not stale, f"waived but no longer over {MAX_LINES} lines (remove from WAIVED): {', '.join(stale)}"


def test_the_walker_finds_nested_and_async_functions(tmp_path: Path) -> None:
    pkg = tmp_path / "referee"
    pkg.mkdir()
    (tmp_path / "protocol").mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(5))
    (pkg / "m.py").write_text(
        f"class C:\n    async def long(self):\n{body.replace('    ', '        ')}\n\n"
        f"def short():\n    return 1\n\ndef outer():\n    def inner():\n{body.replace('    ', '        ')}\n"
    )
    assert long_functions(tmp_path, limit=4) == {
        "referee/m.py:C.long": 6,
        "referee/m.py:outer": 7,
        "referee/m.py:outer.inner": 6,
    }
