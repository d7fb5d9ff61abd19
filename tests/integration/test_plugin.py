"""A researcher's own arm and table in their own package: a toy plugin, pip-installed into
a scratch virtual environment beside the project, adds two arms (one enforcing) and a report
table through the ``state_ladder.*`` entry points, and ``ladder run`` / ``ladder report`` use
them with no edit to this repository. The package is docs/extending.md's ("An arm in your
own package"), read from the page: it imports only ``ladder.api``."""

from __future__ import annotations

import json
import os
import re
import site
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "extending.md"
SECTION = "## An arm (or table, figure, prompt policy) in your own package"


def doc_files() -> dict[str, str]:
    """The plugin package of docs/extending.md: each code block of its section whose first
    line is ``# <path>`` is that file (the page is the package's only source)."""
    text = DOC.read_text(encoding="utf-8").split(SECTION, 1)[1].split("\n## ", 1)[0]
    files: dict[str, str] = {}
    for block in re.findall(r"```(?:python|toml)\n(.*?)```", text, re.S):
        first = block.splitlines()[0]
        path = first.removeprefix("# ").split(":")[0].split(" (")[0].strip()
        files[path] = block
    return files


def _package(root: Path) -> Path:
    src = root / "my_arms_src"
    for path, text in doc_files().items():
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        (src / path).write_text(text)
    return src


def test_the_doc_holds_a_whole_package() -> None:
    assert set(doc_files()) == {
        "pyproject.toml",
        "my_arms/__init__.py",
        "my_arms/reminder.py",
        "my_arms/tables.py",
    }


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


GRID = """
[run]
seeds = "100-103"
graphs = [{steps = 10, density = 0.15}]
arms = ["raw", "reminder", "enforce", "strict"]
variants = [
  {arm = "enforce", corruption = 0.01}, {arm = "strict", corruption = 0.01},
  {arm = "enforce", escalate = true}, {arm = "strict", escalate = true},
]

[[models]]
name = "scripted/synthetic?matcher_wrong=0.1&matcher_none=0.05"
"""


def test_a_pip_installed_plugin_adds_arms_a_knob_reader_and_a_table(tmp_path: Path) -> None:
    """The package of docs/extending.md, installed: its own arm runs, its enforcing arm is in
    every table that reads the enforcing trait (with the enforce arm's own lines, as it is
    the same gate), and its table reads the traits and the knobs' declarations."""
    python = _scratch_venv(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"}
    env["PYTHONPATH"] = str(REPO)  # the tree under test (an editable install may name another)
    ladder = [str(python), "-m", "ladder"]
    run = tmp_path / "run"
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    args = ["run", str(grid), "--out", str(run), "--no-live"]
    before = subprocess.run([*ladder, *args], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert before.returncode == 2 and "unknown arm 'reminder'" in before.stderr
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q"]
    install += ["--no-deps", "--no-index", "--no-build-isolation", str(_package(tmp_path))]
    subprocess.run(install, check=True, env=env, capture_output=True)
    done = subprocess.run([*ladder, *args], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    arms = {json.loads(line)["cell"]["arm"] for f in (run / "logs").glob("*.jsonl")
            for line in f.read_text().splitlines()}  # fmt: skip
    assert arms == {"raw", "reminder", "enforce", "strict"}
    first = json.loads(next((run / "logs").glob("*reminder*.jsonl")).read_text().splitlines()[0])
    assert first["turns"][0]["arm_text"].startswith("Reminder: ")
    out = tmp_path / "r" / "report.md"
    report = subprocess.run(
        [*ladder, "report", str(run), "--out", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr[-2000:]
    assert "## Gate knobs (a plugin's table)" in out.read_text()
    analyses = json.loads((out.parent / "report-analyses.json").read_text())
    for table in ("askback", "corruption", "omission_attribution"):
        assert _as_enforce(analyses[table], "strict") == _as_enforce(analyses[table], "enforce")
        assert _as_enforce(analyses[table], "strict"), table
    gate = {(x["cell"]["arm"], x["cell"]["knobs"]["escalate"]): x for x in analyses["gate_knobs"]}
    assert gate["strict", False]["knobs"] == ["show", "ask", "escalate"]
    assert gate["strict", False]["enforced"] == gate["strict", False]["episodes"] == 4
    assert gate["reminder", False]["knobs"] == [] and gate["reminder", False]["enforced"] == 0


def _as_enforce(lines: list[dict[str, Any]], arm: str) -> list[dict[str, Any]]:
    """``arm``'s lines read as if it were named enforce (seconds waited left out: the second
    gate's matcher reads are cached)."""
    out = []
    for line in lines:
        if line["cell"]["arm"] == arm:
            line = json.loads(json.dumps(line))
            line["cell"]["arm"] = "enforce"
            if line.get("burden"):
                line["burden"].pop("extra_s")
            out.append(line)
    return out


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
