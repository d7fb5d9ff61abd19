"""A report's figures drawn after another report's in the same process are the bytes a
fresh process draws (#50: the figures keep no state between reports; a per-process text
cache once broke the second report drawn in a process)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from runner.rundir.plots import _png
from scoring.report.markdown import figure_channels, figure_success
from scoring.report.paper_figures import paper_figures
from tests.scoring.report.test_figures import _multi_config_lines

ROOT = Path(__file__).resolve().parents[3]


def _digests(first_only: bool) -> dict[str, str]:
    """Every figure of the multi-configuration report (or of its first half, a different
    report), by name: the digest of its PNG."""
    cells, corruption = _multi_config_lines()
    if first_only:
        cells, corruption = cells[: len(cells) // 2], corruption[:1]
    figs = {name: fig for name, (_, fig, _) in paper_figures(cells, corruption).items()}
    figs["success"] = figure_success(cells)
    figs["channels"] = figure_channels(cells)
    return {name: hashlib.sha256(_png(fig)).hexdigest() for name, fig in figs.items()}


def test_a_second_report_in_a_process_draws_a_fresh_processs_bytes() -> None:
    first = _digests(first_only=True)
    second = _digests(first_only=False)
    assert set(first) and first != second  # two different reports
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); "
        "from tests.runner.rundir.test_figures_twice import _digests; "
        "print(json.dumps(_digests(first_only=False)))"
    )
    fresh = subprocess.run(
        [sys.executable, "-c", code, str(ROOT)],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    assert json.loads(fresh.stdout) == second
