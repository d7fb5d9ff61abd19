"""The rules beyond one-shot state on the tool harness (issue #48): the budget and exclusive
steps run on the LangGraph harness as on the text protocol (the harness's brief ends with the
rule's clause, its gate is the arm's own); the perfect agent scores 1.0 strict and
decline-aware in every harness arm, and always-book behind enforce keeps its score. The expiry
stays on the text protocol (``ladder validate`` refuses it on the harness: a tool result is an
exchange of its own, so an agent's clock counts more than the user's messages)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console

from protocol.arms.table import harness_arms
from protocol.records import EpisodeRecord
from runner.execution.grid_run import run_async
from runner.grid.expand import parse_grid
from runner.rundir.records import load_records
from scoring.replay.episode_score import score_episode

RULES: tuple[dict[str, int], ...] = ({"budget": 2}, {"exclusive": 2})
KINDS = {"budget": "budget_repeat", "exclusive": "exclusive_ask"}


def _run(tmp: Path, model: str, arms: list[str]) -> list[EpisodeRecord]:
    variants = [{"arm": a, "harness": "langgraph", **kv} for a in arms for kv in ({}, *RULES)]
    grid = {
        "run": {
            "seeds": "100-101",
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
    return [r for r in records if r.cell.knobs.harness == "langgraph"]


@pytest.mark.parametrize("model", ["scripted/perfect", "scripted/always-book"])
def test_budget_and_exclusive_steps_keep_the_oracles_on_the_harness(
    model: str, tmp_path: Path
) -> None:
    arms = list(harness_arms()) if model.endswith("perfect") else ["enforce"]
    records = _run(tmp_path, model, arms)
    assert len(records) == 2 * len(arms) * (1 + len(RULES))
    placed = 0
    for r in records:
        s = score_episode(r)
        assert s.primary.success and s.decline_aware.success and not s.mismatches, r.cell.slug()
        for knob, kind in KINDS.items():
            if getattr(r.cell.knobs, knob):
                placed += sum(t.kind == kind for t in s.primary.turns)
    assert placed == 2 * len(arms) * 2 * 2  # two requests per rule episode
