"""A small real run for the viewer's tests: the runner against the scripted endpoint on
loopback (the synthetic agent, which fails some turns), four arms and a corrupted-state
variant on a few seeds."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

from rich.console import Console

from runner.execution.grid_run import run_async
from runner.grid.expand import parse_grid

__all__ = ["DEFECTIVE_COMPILER", "MODEL", "grid_data", "make_run"]

# Every compile empties one completion code: the compiled graph differs from the generator's.
DEFECTIVE_COMPILER = "scripted/perfect?compile_empty_code=1"

MODEL = "scripted/synthetic?obey=0.9&fresh=0.35&seed=7"


def grid_data(
    seeds: str,
    model: str = MODEL,
    arms: list[str] | None = None,
    configs: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """*configs*: more configurations (``domains``, ``briefs`` lists of the grid's run
    table)."""
    return {
        "run": {
            **(configs or {}),
            "seeds": seeds,
            "graphs": [{"steps": 6, "density": 0.2}],
            "arms": arms or ["raw", "checklist", "directive", "enforce"],
            "variants": [] if arms else [{"arm": "enforce", "corruption": 0.02}],
            "concurrency": 32,
            # the viewer's tests read a fixed run: generator 4's episodes, on which their
            # expectations (counts, the failing episode they open) were taken
            "generator": 4,
        },
        "endpoints": [{"name": "embedded", "base_url": "embedded", "max_in_flight": 32}],
        "models": [{"name": model, "endpoint": "embedded"}],
    }


def make_run(
    out: Path,
    seeds: str = "100-103",
    model: str = MODEL,
    arms: list[str] | None = None,
    configs: dict[str, list[str]] | None = None,
) -> Path:
    """Run (or resume with more seeds) the grid into *out*; returns *out*. *model* and
    *arms* replace the synthetic agent and the four arms plus the corrupted variant;
    *configs* adds configurations (:func:`grid_data`)."""
    grid = parse_grid(grid_data(seeds, model, arms, configs))
    console = Console(file=io.StringIO())
    asyncio.run(run_async(grid, out, console=console, live=False, allow_change=True))
    return out
