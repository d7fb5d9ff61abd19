"""What the rule knobs' end-to-end tests share (issue #48: budget, expiry, exclusive,
sessions): one generator-6 grid of rule variants run through the runner on the embedded
scripted endpoint, its records read back, and the helpers that compare a stressed episode
with its control."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from rich.console import Console

from protocol.records import EpisodeRecord
from runner.execution.grid_run import run_async
from runner.grid.expand import parse_grid
from runner.rundir.records import load_records
from scoring.replay.episode_score import EpisodeScore

__all__ = ["control_records", "labels", "run_rule_grid"]


def run_rule_grid(
    tmp: Path, model: str, arms: list[str], variants: list[dict[str, object]], seeds: str
) -> list[EpisodeRecord]:
    """Run ``variants`` (and ``arms``, their controls) of ``model`` over ``seeds`` (S=10,
    density 0.3, generator 6) into ``tmp``: every record, each completed, in cell order."""
    grid = {
        "run": {
            "seeds": seeds,
            "generator": 6,
            "graphs": [{"steps": 10, "density": 0.3}],
            "arms": arms,
            "variants": variants,
        },
        "models": [{"name": model}],
    }
    asyncio.run(run_async(parse_grid(grid), tmp, console=Console(file=io.StringIO()), live=False))
    records, _ = load_records(tmp)
    assert all(r.termination == "completed" for r in records)
    return sorted(records, key=lambda r: (r.cell.slug(), r.spec.seed))


def control_records(
    records: list[EpisodeRecord], knob: str
) -> dict[tuple[str, int], EpisodeRecord]:
    """(arm, seed) -> the record of that arm and seed with ``knob`` off (its control)."""
    return {(r.cell.arm, r.spec.seed): r for r in records if not getattr(r.cell.knobs, knob)}


def labels(s: EpisodeScore) -> list[str]:
    """The labels of an episode's turns, in order (the strict replay's)."""
    return [t.label for t in s.primary.turns]
