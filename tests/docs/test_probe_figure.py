"""docs/probe.md's synthetic-agent table reproduces (#46): the doc's three commands rerun (a
grid of the raw arm on the text protocol and on the tool harness, the probe, its report), and
every sampled row of the report must stand in the doc, under the command the doc prints.

Marked slow (about two minutes on two shared cores): ``pytest -m slow -p no:xdist
tests/docs/test_probe_figure.py``; ``-s`` prints the rows the rerun gives.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "probe.md"
GRID = "tests/data/figures/probe-synthetic.toml"
COMMANDS = (
    f"ladder run {GRID} --out runs/probe-synthetic",
    "ladder probe runs/probe-synthetic --out runs/probe-synthetic/probe",
    "ladder probe --report runs/probe-synthetic/probe",
)


def _ladder(*args: str) -> str:
    cmd = [sys.executable, "-m", "ladder", *args]
    done = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True, timeout=1200)
    return done.stdout


@pytest.mark.slow
@pytest.mark.process
def test_the_synthetic_agents_probe_table_reproduces(tmp_path: Path) -> None:
    doc = DOC.read_text(encoding="utf-8")
    for command in COMMANDS:
        assert command in doc, f"docs/probe.md lost the figure's command: {command}"
    run, probe = tmp_path / "run", tmp_path / "probe"
    _ladder("run", GRID, "--out", str(run), "--no-live")
    _ladder("probe", str(run), "--out", str(probe))
    report = _ladder("probe", "--report", str(probe))
    rows = [
        line
        for line in report.splitlines()
        if " sampled " in line or line.startswith(("## ", "greedy re-ask"))
    ]
    print("\n".join(rows))
    assert len([r for r in rows if " sampled " in r]) == 18  # ten variants, eight on the harness
    missing = [r for r in rows if r not in doc.splitlines()]
    assert not missing, f"docs/probe.md no longer reproduces; the rerun says: {missing}"
