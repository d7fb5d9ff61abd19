"""The streamed result lines at 80 columns and in ladder order (#40, item 6): a legend of
the configurations first, each cell and contrast line naming its configuration by number,
a configuration's cells printed together in rung order once each has its line."""

from __future__ import annotations

import asyncio
from pathlib import Path

from runner.grid.expand import parse_grid
from tests.reliability_kit import grid_data, run_inprocess


def test_streamed_lines_are_short_and_in_ladder_order(tmp_path: Path) -> None:
    data = grid_data(seeds="100-102", arms=("enforce", "directive", "checklist", "raw"))
    data["run"]["steps"] = [5, 7]
    grid = parse_grid(data)
    _, text = asyncio.run(run_inprocess(grid, tmp_path / "run", check=False))
    lines = text.splitlines()
    start = lines.index("Configurations:")
    assert lines[start + 1].startswith("  #1 ") and any(x.startswith("  #2 ") for x in lines)
    cells = [x for x in lines if x.startswith("#")]
    contrasts = [x for x in lines if x.startswith("  #") and " -> " in x]
    assert all(len(x) <= 80 for x in cells + contrasts), [x for x in cells if len(x) > 80]
    assert len(cells) >= 8 and len(contrasts) >= 6
    for k in ("#1", "#2"):
        arms = [x.split()[1].rstrip(":") for x in cells if x.split()[0] == k]
        assert arms[:4] == ["raw", "checklist", "directive", "enforce"], arms
