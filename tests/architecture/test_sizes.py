"""Sizes hold to the developers' guide (issue 45, "Sizes grew back"): every module of the
installed packages is at most 400 lines, but the declared data tables; every function body is at
most 60 lines, where the signature does not count (a typer option list, a long parameter list:
declarations) and neither does the docstring -- a body is measured from its first statement
after the docstring to its last line, nested functions included.

The exceptions are explicit: :data:`DATA_TABLES` names a module's declared table (the module
less that table's lines must still fit), and :data:`PENDING` lists the violators owned by other
areas that issue 45 has yet to split. Each list is checked both ways: a new violation fails, and
so does an entry that no longer violates (delete it)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from tests.architecture.test_layers import INSTALLED, REPO

MAX_MODULE = 400
MAX_BODY = 60

DATA_TABLES: dict[str, tuple[str, str]] = {
    # module: (the table's top-level name, why it is one declaration)
    "protocol/knobs.py": (
        "_SPECS",
        "every knob's KnobSpec, one row each: the one declaration the grid checks, the "
        "report's families and docs/extending.md read; splitting it would scatter it",
    ),
    "tau2gate/airline/facts.py": (
        "_TABLE",
        "the airline fact vocabulary: one FactSpec row per fact, each beside its compute "
        "function, read by the validator; splitting it would scatter one declaration",
    ),
}
"""Modules over :data:`MAX_MODULE` lines only because they declare one data table."""

PENDING: dict[str, str] = {
    # Empty since issue 45's splits landed. An entry here is a module or function allowed
    # over its limit while a split is pending; this test fails on a stale entry and on any
    # new violator.
}
"""Issue 45's pending splits, each ``path`` (a module) or ``path:function`` (a body)."""


def _modules() -> list[Path]:
    return sorted(p for pkg in INSTALLED for p in (REPO / pkg).rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _table_lines(tree: ast.Module, name: str) -> int:
    """The lines of the top-level assignment to ``name`` (0 when there is none)."""
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            assert node.end_lineno is not None
            return node.end_lineno - node.lineno + 1
    return 0


def module_lines(path: Path) -> int:
    """The lines of ``path`` that count: all of them, less a declared data table's."""
    text = path.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    table = DATA_TABLES.get(_rel(path))
    if table is not None:
        lines -= _table_lines(ast.parse(text), table[0])
    return lines


def body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's body from its first statement after the docstring (its decorators
    included) to its last line; the signature and the docstring do not count."""
    body = fn.body
    first = body[0]
    if (
        len(body) > 1
        and isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        first = body[1]
    decorators: list[ast.expr] = getattr(first, "decorator_list", [])
    start = min([first.lineno, *(d.lineno for d in decorators)])
    assert fn.end_lineno is not None
    return fn.end_lineno - start + 1


def function_sizes(path: Path) -> dict[str, int]:
    """``path:name`` -> body lines for every function of ``path`` (nested ones too; the
    longest when a name repeats)."""
    out: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            key = f"{_rel(path)}:{node.name}"
            out[key] = max(out.get(key, 0), body_lines(node))
    return out


@functools.cache
def oversized() -> frozenset[str]:
    """Every violation in the tree: ``path`` for a module, ``path:name`` for a function
    (measured once per session)."""
    found: set[str] = set()
    for path in _modules():
        if module_lines(path) > MAX_MODULE:
            found.add(_rel(path))
        found |= {k for k, n in function_sizes(path).items() if n > MAX_BODY}
    return frozenset(found)


def test_no_new_oversized_module_or_function() -> None:
    assert sorted(oversized() - set(PENDING)) == []


def test_no_stale_pending_entry() -> None:
    """An entry whose split landed is deleted, so the list shrinks to nothing."""
    assert sorted(set(PENDING) - oversized()) == []


@pytest.mark.parametrize("module", sorted(DATA_TABLES))
def test_a_data_table_is_declared_and_needed(module: str) -> None:
    path = REPO / module
    text = path.read_text(encoding="utf-8")
    name = DATA_TABLES[module][0]
    assert _table_lines(ast.parse(text), name) > 0, f"{module} declares no {name}"
    assert len(text.splitlines()) > MAX_MODULE, f"{module} fits without its allowance"
    assert module_lines(path) <= MAX_MODULE


def test_the_measure_skips_signature_and_docstring(tmp_path: Path) -> None:
    """A long option list and docstring do not count; 61 body lines do."""
    params = "".join(f"    p{i}: int = {i},\n" for i in range(80))
    body = "".join(f"    x{i} = {i}\n" for i in range(60))
    source = f'def f(\n{params}) -> None:\n    """Doc.\n\n    More.\n    """\n{body}'
    (tmp_path / "m.py").write_text(source + "    return None\n", encoding="utf-8")
    fn = ast.parse((tmp_path / "m.py").read_text(encoding="utf-8")).body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert body_lines(fn) == 61
    short = ast.parse(f"def g():\n{body}").body[0]
    assert isinstance(short, ast.FunctionDef)
    assert body_lines(short) == 60
