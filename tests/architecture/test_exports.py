"""Each package's ``__init__`` exports what others import (httpx's
``tests/test_exported_members.py``): every name of its ``__all__`` exists there, and is
imported from the package by some module outside it (ours, the tests, the benchmarks);
a name nobody imports is not exported."""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("protocol", "runner", "scoring", "serve", "ladder", "tau2gate")
READERS = (*PACKAGES, "bench", "tests")


def _inits() -> list[str]:
    found = []
    for top in PACKAGES:
        for init in sorted((REPO / top).rglob("__init__.py")):
            found.append(".".join(init.parent.relative_to(REPO).parts))
    return found


def _exported(package: str) -> list[str]:
    init = REPO.joinpath(*package.split("."), "__init__.py")
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            continue
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        if isinstance(target, ast.Name) and target.id == "__all__":
            value = node.value
            assert isinstance(value, ast.List | ast.Tuple)
            names: list[str] = []
            for e in value.elts:
                if isinstance(e, ast.Constant):
                    assert isinstance(e.value, str), e.value
                    names.append(e.value)
            return names
    return []


@functools.cache
def _imports() -> tuple[tuple[Path, str, str], ...]:
    """(file, module, name) of every ``from module import name`` in the tree, parsed once."""
    found = []
    for top in READERS:
        for path in (REPO / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found += [(path, node.module, a.name) for a in node.names]
    return tuple(found)


def _imported_from(package: str) -> set[str]:
    """Names some module outside ``package`` imports from it."""
    inside = REPO.joinpath(*package.split("."))
    return {n for path, m, n in _imports() if m == package and not path.is_relative_to(inside)}


@pytest.mark.parametrize("package", _inits())
def test_a_package_exports_what_others_import(package: str) -> None:
    exported = _exported(package)
    module = importlib.import_module(package)
    assert [n for n in exported if not hasattr(module, n)] == []
    assert sorted(set(exported) - _imported_from(package)) == []
