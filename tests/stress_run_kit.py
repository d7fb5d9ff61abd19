"""A run directory of two configurations for the report's worker tests (#50): one with
user-style cells (stressed) beside its plain cells, one with no stressed cell, each
configuration run on its own and their logs copied into one ``logs`` folder."""

from __future__ import annotations

import asyncio
import io
import shutil
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from runner.execution.grid_run import run_async
from runner.grid.expand import parse_grid

__all__ = ["styled_and_plain_run"]


def _grid(steps: int, variants: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "run": {
            "seeds": "100-102",
            "graphs": [{"steps": steps, "density": 0.3}],
            "arms": ["raw", "enforce"],
            "variants": variants,
        },
        "models": [{"name": "scripted/synthetic?obey=0.8&fresh=0.35&seed=5"}],
    }


def styled_and_plain_run(
    tmp_path_factory: pytest.TempPathFactory, styled: list[dict[str, Any]]
) -> Path:
    """The run directory: a 10-step configuration with the ``styled`` variants, a 6-step one
    with none, seeds 100-102, arms raw and enforce."""
    out = tmp_path_factory.mktemp("run")
    for name, grid in (("styled", _grid(10, styled)), ("plain", _grid(6, []))):
        part = tmp_path_factory.mktemp(name)
        asyncio.run(
            run_async(parse_grid(grid), part, console=Console(file=io.StringIO()), live=False)
        )
        (out / "logs").mkdir(exist_ok=True)
        for log in (part / "logs").glob("*.jsonl"):
            shutil.copy(log, out / "logs" / log.name)
    return out
