"""A researcher's own arm and table in their own package: a toy plugin, pip-installed into
a scratch virtual environment beside the project, adds an arm and a report table through
the ``state_ladder.*`` entry points, and ``ladder run`` / ``ladder report`` use both with
no edit to this repository (docs/extending.md, "An arm in your own package")."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "toy-ladder-plugin"
version = "0.0.1"

[project.entry-points."state_ladder.arms"]
reminder = "toy_ladder_plugin:SPEC"

[project.entry-points."state_ladder.analyses"]
turns = "toy_ladder_plugin.table:TURNS"
"""

INIT = '''\
"""A toy arm's row: its session is named, and imported on first use."""
from protocol.arms.table import ArmSpec

SPEC = ArmSpec(name="reminder", session="toy_ladder_plugin.arm:ReminderArm")
'''

ARM = """\
from protocol.records import Turn
from protocol.state.machine import TaskState
from runner.arms import ArmSession


class ReminderArm(ArmSession):
    def addition(self, turn: Turn, state: TaskState) -> str:
        left = sum(1 for v in state.deps if state.status(v) not in ("done", "cancelled"))
        return f"Reminder: {left} steps remain."
"""

TABLE = """\
import msgspec

from protocol.records import CellKey
from scoring.analyses.base import Analysis, by_cell, markdown_section


class TurnsLine(msgspec.Struct, frozen=True, kw_only=True, tag="turns"):
    cell: CellKey
    turns: int


def _turns(batch, cache):
    return [TurnsLine(cell=r.cell, turns=len(r.turns)) for r, _ in batch]


def _markdown(lines):
    rows = [[x.cell.arm, str(x.turns)] for x in lines]
    return markdown_section("Turns (a plugin's table)", "Turns played.", ["arm", "turns"], rows)


TURNS = Analysis(name="turns", table="none (a toy)", compute=_turns, finish=by_cell,
                 markdown=_markdown)
"""


def _package(root: Path) -> Path:
    src = root / "toy_plugin"
    (src / "toy_ladder_plugin").mkdir(parents=True)
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "toy_ladder_plugin" / "__init__.py").write_text(INIT)
    (src / "toy_ladder_plugin" / "arm.py").write_text(ARM)
    (src / "toy_ladder_plugin" / "table.py").write_text(TABLE)
    return src


def _scratch_venv(root: Path) -> Path:
    """A new virtual environment that sees the project's (this interpreter's site-packages,
    through a .pth), and nothing of the plugin until pip installs it there."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in site.getsitepackages())
    Path(purelib, "project.pth").write_text(lines)
    return venv / "bin" / "python"


def test_a_pip_installed_plugin_adds_an_arm_and_a_table(tmp_path: Path) -> None:
    python = _scratch_venv(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"}
    env["PYTHONPATH"] = str(REPO)  # the tree under test (an editable install may name another)
    ladder = [str(python), "-m", "ladder"]
    run = tmp_path / "run"
    args = ["run", "--model", "scripted/perfect", "--arms", "raw,reminder", "--seeds", "100-101"]
    args += ["--steps", "5", "--out", str(run), "--no-live"]
    before = subprocess.run([*ladder, *args], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert before.returncode == 2 and "unknown arm 'reminder'" in before.stderr
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q"]
    install += ["--no-deps", "--no-index", "--no-build-isolation", str(_package(tmp_path))]
    subprocess.run(install, check=True, env=env, capture_output=True)
    done = subprocess.run([*ladder, *args], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    arms = {json.loads(line)["cell"]["arm"] for f in (run / "logs").glob("*.jsonl")
            for line in f.read_text().splitlines()}  # fmt: skip
    assert arms == {"raw", "reminder"}
    first = json.loads(next((run / "logs").glob("*reminder*.jsonl")).read_text().splitlines()[0])
    assert first["turns"][0]["arm_text"].startswith("Reminder: ")
    report = subprocess.run(
        [*ladder, "report", str(run), "--out", str(tmp_path / "r" / "report.md")],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr[-2000:]
    text = (tmp_path / "r" / "report.md").read_text()
    assert "## Turns (a plugin's table)" in text and "| reminder |" in text


@pytest.mark.parametrize("value", ["no_colon", "x:y"])
def test_a_broken_entry_point_is_one_warning_or_one_error(value: str) -> None:
    from protocol.arms.table import ARMS
    from protocol.registry import RegistryError

    if value == "no_colon":
        with pytest.raises(RegistryError, match="not 'module:Object'"):
            ARMS.add_lazy("broken", value)
    else:
        ARMS.add_lazy("broken", value)
        try:
            with pytest.raises(RegistryError, match="'broken': cannot import x"):
                ARMS.get("broken")
        finally:
            ARMS.remove("broken")
