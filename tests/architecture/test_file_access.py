"""Every file the project reads or writes goes through ``runner/files.py`` (#47): its bounded
regular-file reader (a FIFO, a device or a planted link refused, bytes capped) and its
writers (the ``O_NOFOLLOW`` appender, ``write_atomic``, ``write_new``). This walks the code
of the installed packages for ``open(``, ``.open(``, ``read_bytes``, ``read_text``,
``write_bytes`` and ``write_text`` outside that module (and ``tau2gate/files.py``, the same
reader and writer for the layer that may not import runner) and fails on one not listed
below with its reason (docs/security.md lists each reader and writer)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("ladder", "protocol", "runner", "scoring", "serve", "tau2gate")
CALLS = frozenset({"open", "read_bytes", "read_text", "write_bytes", "write_text"})
# runner/files.py, and tau2gate's own (tau2gate may not import runner, and protocol and
# scoring, the layers below both, do no I/O): the same rules in the standard library alone
THE_READERS = frozenset({"runner/files.py", "tau2gate/files.py"})

# (file, the call as written) -> why it may stay
ALLOWED: dict[tuple[str, str], str] = {
    ("runner/client/endpoint.py", "self.open"): "the endpoint's own method (a transport)",
    ("runner/harness/tool_episode.py", "Workspace.open"): "the workspace's own method",
    ("runner/harness/workspace.py", "(folder / name).write_text"): (
        "stamp files in a fresh private mkdtemp folder the workspace made and removes"
    ),
    ("runner/harness/workspace.py", "part.write_text"): "the same private temporary folder",
    ("runner/harness/workspace.py", "p.read_text"): "the same private temporary folder",
    ("runner/rundir/lock.py", "Path('/proc/locks').read_text"): (
        "the kernel's lock table (procfs), not a file of the run"
    ),
    ("runner/rundir/lock.py", "os.open"): "a descriptor on the run directory to flock it",
    (
        "protocol/domains/known.py",
        "files('protocol.domains').joinpath('builtin', f'{name}.toml').read_text",
    ): "a built-in pack shipped inside the installed package",
    (
        "tau2gate/reference.py",
        "resources.files(f'tau2gate.{name}').joinpath(REFERENCE_FILE).read_text",
    ): "a reference file shipped inside the installed package",
}


def file_calls(path: Path) -> list[str]:
    """The calls of ``path`` that open, read or write a file, as written (``path.read_bytes``)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name in CALLS:
            found.append(ast.unparse(func))
    return found


def unlisted() -> list[str]:
    out = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel in THE_READERS:
                continue
            out += [f"{rel}: {c}" for c in file_calls(path) if (rel, c) not in ALLOWED]
    return out


def test_files_are_opened_only_through_runner_files() -> None:
    assert unlisted() == []


def test_every_allowed_call_still_exists() -> None:
    present = {
        (p.relative_to(REPO).as_posix(), c)
        for package in PACKAGES
        for p in (REPO / package).rglob("*.py")
        for c in file_calls(p)
    }
    assert sorted(set(ALLOWED) - present) == []


def test_the_walker_sees_each_kind_of_call(tmp_path: Path) -> None:
    bad = tmp_path / "m.py"
    bad.write_text(
        "import os\nfrom pathlib import Path\n"
        "def f(p: Path) -> None:\n"
        "    open(p)\n    p.read_bytes()\n    p.read_text()\n    p.write_bytes(b'')\n"
        "    p.write_text('')\n    p.open('ab')\n    os.open(p, 0)\n"
    )
    assert file_calls(bad) == [
        "open", "p.read_bytes", "p.read_text", "p.write_bytes", "p.write_text", "p.open", "os.open"
    ]  # fmt: skip
