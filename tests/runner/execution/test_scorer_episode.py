"""The runner hands the streaming scorer the episode it generated for a task (#50): the
scorer generates none of its own for the run's specs, and its result lines are those of a
scorer that generates every episode itself (each record scored on its spec's episode)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runner.execution.connect import open_endpoints
from runner.execution.plan import Plan
from runner.execution.scheduler import RunState, run_grid, streaming_scorer
from runner.gates.helper_models import Helpers
from runner.grid.expand import parse_grid
from runner.rundir.logs import read_logs


def _grid() -> Any:
    return parse_grid(
        {
            "run": {
                "seeds": "0-3",
                "graphs": [{"steps": 5, "density": 0.15}],
                "arms": ["raw", "checklist", "enforce"],
                "concurrency": 4,
            },
            "endpoints": [{"name": "embedded", "base_url": "embedded"}],
            "models": [{"name": "scripted/perfect", "endpoint": "embedded"}],
        }
    )


async def test_the_scorer_scores_on_the_runners_episodes(tmp_path: Path) -> None:
    grid = _grid()
    scorer = streaming_scorer(grid)
    async with open_endpoints(grid) as endpoints:
        helpers = Helpers(grid, tmp_path, endpoints)
        state = RunState(grid=grid, out=tmp_path, endpoints=endpoints, helpers=helpers)
        await run_grid(state, Plan(grid), scorer)
    assert len(scorer.cache) == 0  # every episode came from the runner
    alone = streaming_scorer(grid)  # generates each spec's episode itself
    for record in read_logs(tmp_path).values():
        alone.add(record)
    assert len(alone.cache) == 4
    assert scorer.scores == alone.scores
    lines = (tmp_path / "results.jsonl").read_bytes().splitlines()
    assert len(lines) >= 3  # a line per cell (raw, checklist, enforce), then the contrasts
