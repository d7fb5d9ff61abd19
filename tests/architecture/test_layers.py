"""The code holds to docs/architecture.md: its package list is the tree's, and no module
imports a layer its own layer may not import (every import counted, wherever it stands)."""

from __future__ import annotations

import ast
import functools
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


def _module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("") if path.is_relative_to(REPO) else Path(path.stem)
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _literal_import(node: ast.Call) -> str | None:
    """The module of ``importlib.import_module("x")``, ``import_module("x")`` or
    ``__import__("x")`` with a literal name; None for any other call."""
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if name not in ("import_module", "__import__") or not node.args:
        return None
    first = node.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def imported_modules(path: Path, source: str | None = None) -> list[str]:
    """Every module one file imports, at any depth of the file, in every form: ``import a.b``;
    ``from a.b import c`` (``a.b``, and ``a.b.c``, which is a module when ``c`` is one:
    ``from runner import memory`` imports ``runner.memory``); a relative import, resolved;
    ``importlib.import_module``, ``import_module`` and ``__import__`` of a literal name."""
    found: list[str] = []
    here = _module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    text = path.read_text(encoding="utf-8") if source is None else source
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            if module:
                found.append(module)
                found += [f"{module}.{a.name}" for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Call) and (name := _literal_import(node)) is not None:
            found.append(name)
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


@pytest.mark.parametrize(
    ("source", "module"),
    [
        ("import runner.memory", "runner.memory"),
        ("def f():\n    from runner.client import endpoint", "runner.client.endpoint"),
        ("from runner import memory", "runner.memory"),
        ("from runner.memory import missing", "runner.memory"),
        ("import importlib\nimportlib.import_module('runner.client')", "runner.client"),
        ("from importlib import import_module\nimport_module('runner.client')", "runner.client"),
        ("__import__('runner.client')", "runner.client"),
        ("if True:\n    import scoring.replay as r", "scoring.replay"),
    ],
)
def test_the_checker_counts_every_import_form(tmp_path: Path, source: str, module: str) -> None:
    bad = tmp_path / "m.py"
    bad.write_text(source + "\n")
    assert module in imported_modules(bad)
    assert imported_layers(bad) == {module.split(".")[0]}


def test_a_relative_import_is_resolved() -> None:
    path = REPO / "runner" / "grid" / "m.py"  # not on disk: its text is given
    found = imported_modules(path, "from ..memory import services\nfrom . import seeds\n")
    assert "runner.memory.services" in found and "runner.grid.seeds" in found


# The "must not" column for the pure layers: no event loop, network or process, no file I/O.
PURE = ("protocol", "scoring")
MUST_NOT_IMPORT = ("asyncio", "anyio", "socket", "aiohttp", "httpx", "subprocess")
FILE_IO = ("read_text", "read_bytes", "write_text", "write_bytes")
# The one file read in protocol/: the built-in packs, the package's own data read at import
# through importlib.resources, like its code (protocol/domains/known.py says so).
ALLOWED_IO = {("protocol/domains/known.py", "read_text")}


def io_calls(path: Path, source: str | None = None) -> list[str]:
    """Each file I/O call of one file: ``open(...)``, ``os.open(...)``, ``io.open(...)`` and
    the pathlib reads and writes (``.read_text(...)`` ...)."""
    text = path.read_text(encoding="utf-8") if source is None else source
    found: list[str] = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open":
            found.append("open")
        elif isinstance(f, ast.Attribute) and f.attr in FILE_IO:
            found.append(f.attr)
        elif (
            isinstance(f, ast.Attribute)
            and f.attr == "open"
            and isinstance(f.value, ast.Name)
            and f.value.id in ("os", "io")
        ):
            found.append(f"{f.value.id}.open")
    return found


def must_not(layer: str, root: Path = REPO) -> list[str]:
    out = []
    for path in sorted((root / layer).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for used in sorted({m.split(".")[0] for m in imported_modules(path)}):
            if used in MUST_NOT_IMPORT:
                out.append(f"{rel} imports {used}")
        for call in io_calls(path):
            if (rel, call) not in ALLOWED_IO:
                out.append(f"{rel} calls {call}(")
    return out


@pytest.mark.parametrize("layer", PURE)
def test_a_pure_layer_does_no_io(layer: str) -> None:
    assert must_not(layer) == []


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("import asyncio", "imports asyncio"),
        ("import json, socket", "imports socket"),
        ("def f():\n    from aiohttp import web", "imports aiohttp"),
        ("import importlib\nimportlib.import_module('subprocess')", "imports subprocess"),
        ("__import__('socket')", "imports socket"),
        ("def f(p):\n    return open(p).read()", "calls open("),
        ("import os\nos.open('x', 0)", "calls os.open("),
        ("def f(p):\n    p.write_text('x')", "calls write_text("),
        ("def f(p):\n    return p.read_bytes()", "calls read_bytes("),
    ],
)
def test_the_must_not_checker_sees_each_form(tmp_path: Path, source: str, says: str) -> None:
    scratch = tmp_path / "protocol"
    scratch.mkdir()
    (scratch / "m.py").write_text(source + "\n")
    problems = must_not("protocol", root=tmp_path)
    assert len(problems) == 1 and says in problems[0], problems


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


@functools.cache
def _subpackages() -> frozenset[str]:
    return frozenset(p for p in tree_packages() if "." in p)


def subpackage_of(module: str) -> str | None:
    """``runner.client.endpoint`` and ``runner.client`` -> ``runner.client``; None outside a
    subpackage (``runner.plugins`` is a module of ``runner``)."""
    parts = module.split(".")
    if parts[0] not in INSTALLED or len(parts) < 2:
        return None
    two = ".".join(parts[:2])
    return two if two in _subpackages() else None


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
