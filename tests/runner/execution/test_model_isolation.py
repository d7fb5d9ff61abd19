"""One model's failure stays its own (#47): in a two-model grid, a model whose server drops
the brief stops alone (exit 3, one error line naming it), while the other model's cells run
to the end; the stopped model's episodes are not logged (a resume runs them)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from tests.reliability_kit import grid_data, grid_toml, records

LOST = "scripted/perfect?drop_system=1"
HEALTHY = "scripted/perfect"


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)  # `ladder run` installs uvloop's


def test_a_model_that_lost_the_brief_stops_alone(tmp_path: Path) -> None:
    data = grid_data(
        seeds="100-103",
        arms=("raw", "enforce"),
        models=[{"name": LOST, "endpoint": "embedded"}, {"name": HEALTHY, "endpoint": "embedded"}],
    )
    data["decoding"]["timeout_s"] = 30
    grid = tmp_path / "grid.toml"
    grid.write_text(grid_toml(data))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", str(grid), "--out", str(out), "--no-live"])
    assert result.exit_code == 3, result.output
    lines = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert lines and all(len(x) <= 80 for x in lines), lines  # one error, wrapped (#49)
    error = " ".join(x.removeprefix("error:").strip() for x in lines)
    assert error.startswith(f"model '{LOST}' stopped"), error
    assert "the brief did not reach the model" in error and "Traceback" not in result.output
    recs = records(out).values()
    healthy = [r for r in recs if r.cell.model == HEALTHY]
    assert len(healthy) == 8 and all(r.termination == "completed" for r in healthy)
    assert not [r for r in recs if r.cell.model == LOST and r.termination == "completed"]
