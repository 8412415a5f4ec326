"""Every third-party module the package imports is installed by ``pip install card-referee``: a
runtime dependency of pyproject.toml, or, for the Dask backend's modules, its ``cluster`` extra
(``referee submit`` once needed httpx, which only the test extra brought: a fresh install printed a
traceback). Parses the source: nothing is imported but the metadata of what is installed."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OWN = {"referee", "protocol"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names(reqs: list[str]) -> set[str]:
    return {_norm(re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0]) for r in reqs}


def _optional(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Under ``if TYPE_CHECKING:`` (annotations only), or in a ``try`` that handles ImportError
    (an optional module whose absence has its own message)."""
    while node in parents:
        child, node = node, parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
        if isinstance(node, ast.Try) and child in node.body:
            caught = " ".join(ast.unparse(h.type) for h in node.handlers if h.type is not None)
            if "ImportError" in caught or "ModuleNotFoundError" in caught:
                return True
    return False


def imported_modules() -> dict[str, set[str]]:
    """``{top-level module: {files importing it}}`` of referee/ and protocol/ (optional imports aside)."""
    found: dict[str, set[str]] = {}
    for top in sorted(OWN):
        for path in sorted((ROOT / top).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    mod = name.split(".")[0]
                    if mod in OWN or mod in sys.stdlib_module_names or _optional(node, parents):
                        continue
                    found.setdefault(mod, set()).add(path.relative_to(ROOT).as_posix())
    return found


def test_every_imported_module_comes_with_the_install() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = _requirement_names(project["dependencies"])
    cluster = _requirement_names(project["optional-dependencies"]["cluster"]) | {"distributed"}
    dists = importlib.metadata.packages_distributions()
    missing = []
    for mod, files in sorted(imported_modules().items()):
        provided = {_norm(d) for d in dists.get(mod, [])}
        assert provided, f"{mod} (imported by {sorted(files)}) is not installed here at all"
        if provided & runtime:
            continue
        if provided & cluster and all("cluster" in f or "dask" in f for f in files):
            continue
        missing.append(f"{mod} ({sorted(provided)}), imported by {sorted(files)}")
    assert not missing, "not a runtime dependency of pyproject.toml:\n" + "\n".join(missing)
