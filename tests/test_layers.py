"""The package's layers (docs/ARCHITECTURE.md, Layers): every import of every module under referee/,
function-level ones included, goes to its own layer or a lower one, and no modules import each other
in a circle (type-only imports under ``if TYPE_CHECKING:`` aside). Parses the source: no imports run."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "referee"

#: the layers, lowest first: a module may import from its own layer and the ones below
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "rules"),  # referee/__init__.py: the version only
    ("errors", "fileio", "core"),
    ("runtime",),
    # the viewer's data: frames made from the machine (live or from a log), the live files, the pages
    ("view.frames", "view.events", "view.live", "view.page", "view.viewers"),
    ("league",),
    ("view",),
    ("checkbot", "site"),
    ("commands", "bench"),
    ("cli", "__main__"),
)
LAYER = {part: i for i, parts in enumerate(LAYERS) for part in parts}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _imports(name: str, path: Path, modules: frozenset[str] = frozenset()) -> Iterator[tuple[str, int, bool]]:
    """``(imported module, line, type-only)`` for every import in the file, at any depth
    (``from P import a, b``: P, and P.a, P.b; P left out when it is the file's own package
    and every name is one of its ``modules``: ``from . import cgroups`` imports a sibling)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            typing_only.update(id(n) for child in node.body for n in ast.walk(child))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, id(node) in typing_only
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            siblings = all(f"{target}.{a.name}" in modules for a in node.names)
            if not (name.startswith(target + ".") and siblings):
                yield target, node.lineno, id(node) in typing_only
            for alias in node.names:  # from referee.league import schedule: a module too
                yield f"{target}.{alias.name}", node.lineno, id(node) in typing_only


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "referee":
        return None
    if len(parts) > 2 and f"{parts[1]}.{parts[2]}" in LAYER:
        return LAYER[f"{parts[1]}.{parts[2]}"]
    return LAYER.get(parts[1] if len(parts) > 1 else "__init__")


@functools.cache
def _graph() -> tuple[dict[str, Path], dict[str, set[str]], list[str]]:
    modules = _modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    upward = []
    for name, path in modules.items():
        mine = _layer(name)
        assert mine is not None, f"{name}: no layer in LAYERS (add its package to a layer)"
        for target, line, type_only in _imports(name, path, frozenset(modules)):
            theirs = _layer(target)
            if theirs is None or target not in modules:
                continue
            if theirs > mine:
                upward.append(f"{path.relative_to(ROOT)}:{line}: imports {target} (layer {theirs} > {mine})")
            if not type_only and target != name:
                edges[name].add(target)
    return modules, edges, upward


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_module_imports_from_a_higher_layer() -> None:
    _, _, upward = _graph()
    assert not upward, "imports from a higher layer (docs/ARCHITECTURE.md, Layers):\n" + "\n".join(upward)


def test_no_import_cycle() -> None:
    _, edges, _ = _graph()
    cycles = _cycles(edges)
    assert not cycles, "modules that import each other in a circle:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_check_sees_function_level_imports(tmp_path: Path) -> None:
    # the old league -> view import sat inside a function: the parser must see such imports
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from referee.view.night import write_report\n")
    assert ("referee.view.night", 2, False) in set(_imports("referee.league.m", path))
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
