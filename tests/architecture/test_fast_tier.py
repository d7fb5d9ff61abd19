"""``just test-fast`` is the pure packages: every test file under tests/protocol and
tests/scoring imports, of ours, only ``protocol`` and ``scoring``, directly or through the
test helpers it imports (``tests.*`` modules, followed) and the conftest files above it. A test
that needs the runner, the endpoint or the command line lives in tests/runner/..., tests/serve/,
tests/ladder/ or tests/integration/."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.architecture.test_layers import LAYERS, REPO, imported_modules

FAST = ("tests/protocol", "tests/scoring")
PURE = frozenset({"protocol", "scoring"})


def _file_of(module: str) -> Path | None:
    """The file of a ``tests.*`` module (a module, or a package's ``__init__``)."""
    base = REPO.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def impure_imports(path: Path) -> list[str]:
    """The layers of ours other than protocol and scoring that ``path`` reaches, each as
    ``file imports module``, following the tests' own modules and the conftest files."""
    todo = [path, *(p / "conftest.py" for p in path.parents if p.is_relative_to(REPO / "tests"))]
    seen: set[Path] = set()
    out: list[str] = []
    while todo:
        here = todo.pop()
        if here in seen or not here.is_file():
            continue
        seen.add(here)
        for module in imported_modules(here):
            top = module.split(".")[0]
            if top == "tests":
                found = _file_of(module)
                if found is not None:
                    todo.append(found)
            elif top in LAYERS and top not in PURE:
                out.append(f"{here.relative_to(REPO)} imports {module}")
    return sorted(set(out))


FILES = sorted(p for d in FAST for p in (REPO / d).rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_a_fast_test_imports_only_the_pure_packages(path: Path) -> None:
    assert impure_imports(path) == []


def test_the_checker_follows_helpers(tmp_path: Path) -> None:
    """A fast test importing a helper that imports the runner is caught at the helper."""
    reached = impure_imports(REPO / "tests" / "runner" / "grid" / "test_askback_families.py")
    assert any("imports runner." in line for line in reached)
    assert FILES and all(p.name != "test_askback_families.py" for p in FILES)
