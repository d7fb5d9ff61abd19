"""The sessions knob on the tool harness (issue #48): the harness restarts at each boundary
as the text protocol does (runner.arms.handoff). The perfect agent, which remembers its own
earlier sessions (docs/semantics.md, "The oracle remembers"), scores 1.0 in every harness arm
with every handoff. Without that memory (``scripted/perfect?memory=0``) it scores 1.0 wherever
the state is carried (its note in every arm; the checklist and the gates with every handoff)
and errs only after a restart where nothing carries it (raw with no note: the harness's raw
arm keeps nothing, so ``"arm"`` is ``"none"``); always-book behind the enforcement gate keeps
its one-session score, seed for seed and channel for channel."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from rich.console import Console

from protocol.arms.table import harness_arms
from protocol.records import EpisodeRecord
from runner.execution.grid_run import run_async
from runner.grid.expand import parse_grid
from runner.rundir.records import load_records
from scoring.replay.episode_score import score_episode

ARMS = list(harness_arms())  # raw, checklist, directive, enforce
HANDOFFS = ("none", "note", "arm")


def _run(tmp: Path, model: str, arms: list[str]) -> list[EpisodeRecord]:
    variants = [{"arm": a, "harness": "langgraph"} for a in arms] + [
        {"arm": a, "harness": "langgraph", "sessions": 3, "handoff": h}
        for a in arms
        for h in HANDOFFS
    ]
    grid = {
        "run": {
            "seeds": "100-101",
            "generator": 6,
            "graphs": [{"steps": 10, "density": 0.3}],
            "arms": [],
            "variants": variants,
        },
        "models": [{"name": model}],
    }
    asyncio.run(run_async(parse_grid(grid), tmp, console=Console(file=io.StringIO()), live=False))
    records, _ = load_records(tmp)
    assert len(records) == 2 * len(variants)
    assert all(r.termination == "completed" for r in records)
    return records


def test_the_perfect_agent_scores_1_across_restarts_on_the_harness(tmp_path: Path) -> None:
    records = _run(tmp_path, "scripted/perfect", ARMS)
    for r in records:
        s = score_episode(r)
        assert not s.mismatches, s.mismatches
        knobs = r.cell.knobs
        if knobs.sessions:
            opened = [t for t in r.turns if isinstance(t.session, int)]
            assert [t.session for t in opened] == [1, 2]
            assert all(isinstance(t.carried, str) == (knobs.handoff == "note") for t in opened)
        assert s.primary.success and s.decline_aware.success, (r.cell.slug(), r.spec.seed)


def test_the_amnesiac_agent_errs_only_after_a_restart_on_the_harness(tmp_path: Path) -> None:
    records = _run(tmp_path, "scripted/perfect?memory=0", ARMS)
    bitten = 0
    for r in records:
        s = score_episode(r)
        assert not s.mismatches, s.mismatches
        knobs = r.cell.knobs
        if knobs.sessions and r.cell.arm == "raw" and knobs.handoff != "note":
            after = next(i for i, t in enumerate(r.turns) if isinstance(t.session, int))
            wrong = [i for i, t in enumerate(s.primary.turns) if t.errors]
            assert all(i >= after for i in wrong)
            bitten += bool(wrong)
            continue
        assert s.primary.success and s.decline_aware.success, (r.cell.slug(), r.spec.seed)
    assert bitten, "a restart with nothing carried never cost the amnesiac agent a turn"


def test_always_book_behind_enforce_keeps_its_score_on_the_harness(tmp_path: Path) -> None:
    records = _run(tmp_path, "scripted/always-book", ["enforce"])
    control = {r.spec.seed: score_episode(r) for r in records if not r.cell.knobs.sessions}
    for r in records:
        s, c = score_episode(r), control[r.spec.seed]
        assert (s.primary.success, s.primary.channels) == (c.primary.success, c.primary.channels)
