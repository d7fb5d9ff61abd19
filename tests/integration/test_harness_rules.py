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


HANDOFFS = ("none", "note", "arm")


def _sessions(tmp: Path, model: str, arms: list[str]) -> list[EpisodeRecord]:
    """Every harness arm with K = 3 sessions and each handoff, beside its one-session control."""
    variants: list[dict[str, object]] = [{"arm": a, "harness": "langgraph"} for a in arms]
    variants += [
        {"arm": a, "harness": "langgraph", "sessions": 3, "handoff": h}
        for a in arms
        for h in HANDOFFS
    ]
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


def test_sessions_keep_the_oracles_on_the_harness(tmp_path: Path) -> None:
    """The sessions knob on the harness (issue #48): the perfect agent, which remembers its own
    earlier sessions (docs/semantics.md, "The oracle remembers"), scores 1.0 in every arm with
    every handoff; without its memory (``memory=0``) the raw harness with nothing carried
    costs it turns after a restart only; always-book behind enforce keeps its score."""
    arms = list(harness_arms())
    perfect = _sessions(tmp_path / "p", "scripted/perfect", arms)
    assert len(perfect) == 2 * len(arms) * (1 + len(HANDOFFS))
    for r in perfect:
        s = score_episode(r)
        assert s.primary.success and s.decline_aware.success and not s.mismatches, r.cell.slug()
    amnesiac = _sessions(tmp_path / "a", "scripted/perfect?memory=0", ["raw"])
    bitten = 0
    for r in amnesiac:
        s = score_episode(r)
        wrong = [i for i, t in enumerate(s.primary.turns) if t.errors]
        if r.cell.knobs.sessions:
            after = next(i for i, t in enumerate(r.turns) if isinstance(t.session, int))
            assert all(i >= after for i in wrong), (r.cell.slug(), wrong, after)
            bitten += bool(wrong) and r.cell.knobs.handoff != "note"
        else:
            assert not wrong
    assert bitten, "a restart with nothing carried never cost the amnesiac agent a turn"
    books = _sessions(tmp_path / "b", "scripted/always-book", ["enforce"])
    control = {r.spec.seed: score_episode(r) for r in books if not r.cell.knobs.sessions}
    for r in books:
        s, c = score_episode(r), control[r.spec.seed]
        assert (s.primary.success, s.primary.channels) == (c.primary.success, c.primary.channels)
