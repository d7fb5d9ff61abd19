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


def imported_modules(path: Path) -> list[str]:
    """Every module one file imports (absolute imports), at any depth of the file."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def imported_layers(path: Path) -> set[str]:
    """The top-level packages of ours that one file imports, at any depth of the file."""
    return {n.split(".")[0] for n in imported_modules(path) if n.split(".")[0] in LAYERS}


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


def subpackage_of(module: str) -> str | None:
    """``runner.client.endpoint`` -> ``runner.client``; None outside a subpackage."""
    parts = module.split(".")
    if parts[0] not in INSTALLED or len(parts) < 3:
        return None
    return ".".join(parts[:2])


def subpackage_edges() -> dict[str, set[str]]:
    """Subpackage -> the other subpackages its modules import (at any depth of a file)."""
    edges: dict[str, set[str]] = {}
    for top in INSTALLED:
        for path in sorted((REPO / top).rglob("*.py")):
            rel = path.relative_to(REPO).with_suffix("")
            here = subpackage_of(".".join(rel.parts))
            if here is None:
                continue
            for name in imported_modules(path):
                there = subpackage_of(name)
                if there and there != here:
                    edges.setdefault(here, set()).add(there)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Each cycle found by a depth-first walk (as the path that closes it)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def walk(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                walk(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            walk(start, [start])
    return found


def test_no_two_subpackages_import_each_other() -> None:
    """Concepts inside a layer form no cycle either (runner.client knows no grid; the gate
    report's helper lines are results, which the analyses read)."""
    assert cycles(subpackage_edges()) == []


def test_the_cycle_finder_sees_a_cycle() -> None:
    edges = {"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}, "a.w": {"a.x"}}
    assert cycles(edges) == [["a.x", "a.y", "a.z", "a.x"]]
    assert subpackage_of("runner.client.endpoint") == "runner.client"
    assert subpackage_of("runner.plugins") is None
