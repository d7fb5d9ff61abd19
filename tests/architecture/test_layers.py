"""The code holds to docs/architecture.md: its package list is the tree's, and no module
imports a layer its own layer may not import (every import counted, wherever it stands)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"
LAYERS = ("protocol", "scoring", "serve", "runner", "tau2gate", "ladder", "bench")
ALLOWED: dict[str, frozenset[str]] = {
    "protocol": frozenset(),
    "scoring": frozenset({"protocol"}),
    "serve": frozenset({"protocol"}),
    "runner": frozenset({"protocol", "scoring", "serve"}),
    "tau2gate": frozenset({"protocol", "scoring"}),
    "ladder": frozenset({"protocol", "scoring", "serve", "runner", "tau2gate"}),
    "bench": frozenset({"protocol", "scoring", "serve", "runner", "tau2gate", "ladder"}),
}
INSTALLED = ("protocol", "scoring", "serve", "runner", "tau2gate", "ladder")


def imported_layers(path: Path) -> set[str]:
    """The top-level packages of ours that one file imports, at any depth of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        found.update(n.split(".")[0] for n in names if n.split(".")[0] in LAYERS)
    return found


def violations(layer: str) -> list[str]:
    out = []
    for path in sorted((REPO / layer).rglob("*.py")):
        for used in sorted(imported_layers(path) - ALLOWED[layer] - {layer}):
            out.append(f"{path.relative_to(REPO)} imports {used}")
    return out


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_the_layers_below_it(layer: str) -> None:
    assert violations(layer) == []


def test_the_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "m.py"
    bad.write_text("def f():\n    from runner.client import endpoint\n    import scoring.replay\n")
    assert imported_layers(bad) == {"runner", "scoring"}


def documented_packages() -> set[str]:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- packages:", 1)[1].split("<!-- /packages -->", 1)[0]
    return set(re.findall(r"^\| `([a-z0-9_.]+)` \|", block, flags=re.M))


def tree_packages() -> set[str]:
    found = set()
    for top in INSTALLED:
        for init in (REPO / top).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO)
            if len(rel.parts) <= 2:
                found.add(".".join(rel.parts))
    return found


def test_every_package_is_drawn_and_every_drawn_package_exists() -> None:
    assert documented_packages() == tree_packages()


def test_no_generic_name_is_installed() -> None:
    import tomllib

    conf = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    include = conf["tool"]["setuptools"]["packages"]["find"]["include"]
    assert sorted(p.rstrip("*") for p in include) == sorted(INSTALLED)
