"""The declared extension API (``ladder.api``, after httpx's ``tests/test_exported_members.py``):
its members are pinned here, each is the object of its home module, docs/extending.md imports
only from it, and the command line does not import it."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import ladder.api as api

REPO = Path(__file__).resolve().parents[2]
OURS = ("protocol", "scoring", "runner", "serve", "ladder", "tau2gate")

MEMBERS = {
    "ANALYSES", "ARMS", "FIGURES", "KNOBS", "POLICIES", "Registry", "RegistryError",
    "Admission", "ArmSession", "ArmSpec", "Contrast", "EpisodeContext", "Gate", "Shaped",
    "arm_names", "arm_spec", "arm_table", "enforced", "enforcing_arms", "gate_arms", "ladder",
    "render_checklist",
    "KnobSpec", "Knobs", "knob_spec", "variants",
    "Analysis", "EpisodeCache", "EpisodeScore", "Fold", "Pair", "PaperFigure", "by_cell",
    "config_label", "markdown_section",
    "Booking", "CellKey", "Episode", "EpisodeRecord", "PromptPolicy", "TaskState", "Turn",
    "ResultLine", "RunObserver",
}  # fmt: skip


def test_the_members_are_pinned() -> None:
    assert set(api.__all__) == MEMBERS
    assert len(api.__all__) == len(MEMBERS)  # no name twice


def test_every_public_name_is_declared() -> None:
    """Nothing public leaks in beside ``__all__`` (an import a plugin would come to rely on)."""
    public = {n for n in vars(api) if not n.startswith("_") and n != "annotations"}
    assert public == MEMBERS


def test_each_member_is_its_home_modules_object() -> None:
    from protocol.arms.table import ARMS, ArmSpec
    from runner.arms.base import ArmSession
    from runner.execution.observer import RunObserver
    from scoring.analyses.base import Analysis

    assert api.ARMS is ARMS and api.ArmSpec is ArmSpec and api.ArmSession is ArmSession
    assert api.Analysis is Analysis and api.RunObserver is RunObserver
    for name in MEMBERS:  # each class and function is ours, not a library's re-export
        obj = getattr(api, name)
        if isinstance(obj, type) or inspect.isfunction(obj):
            assert obj.__module__.split(".")[0] in OURS, name


def _doc_imports(path: Path) -> list[str]:
    """Every module the Python blocks of a Markdown page import."""
    found: list[str] = []
    for block in re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.Import):
                found += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.append(node.module)
    return found


def test_extending_md_imports_only_the_api() -> None:
    used = _doc_imports(REPO / "docs" / "extending.md")
    ours = [m for m in used if m.split(".")[0] in OURS]
    assert ours and set(ours) == {"ladder.api"}


def test_the_command_line_does_not_import_the_api() -> None:
    code = "import sys, ladder.app; assert 'ladder.api' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
