"""The oracles in every cell of the shipped stress grids (issue #46): generator 6's doses,
the forged redo authorization in spoof.toml and restate's and double's plain controls in
user-style.toml; the perfect agent scores 1.0, strict and decline-aware, in every cell, and
always-book behind the state-bound enforcement gate keeps its unstressed score, seed for
seed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol.records import EpisodeRecord
from runner.rundir.records import load_records
from scoring.replay.episode_score import score_episode

GRIDS = Path(__file__).resolve().parents[2] / "runner" / "grids"
STRESS = ("spoof.toml", "user-style.toml")
_PLAIN = {"spoof": "none", "spoof_dose": 0.25, "user_style": "cooperative", "user_dose": 0.25}


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def _run(tmp: Path, grid: str, served: str, arms: str) -> list[EpisodeRecord]:
    out = tmp / "run"
    args = ["run", str(GRIDS / grid), "--seeds", "100-101", "--arms", arms, "--served", served]
    args += ["--base-url", "embedded", "--out", str(out), "--no-live"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    records, _ = load_records(out)
    assert records and all(r.termination == "completed" for r in records)
    return records


@pytest.mark.parametrize("grid", STRESS)
def test_the_perfect_agent_scores_1_in_every_cell(tmp_path: Path, grid: str) -> None:
    arms = "raw,checklist,directive,enforce,ledger"
    records = _run(tmp_path, grid, "scripted/perfect", arms)
    cells = {r.cell.slug() for r in records}
    assert len(cells) == {"spoof.toml": 55, "user-style.toml": 50}[grid]
    for r in records:
        s = score_episode(r)
        assert s.primary.success and s.decline_aware.success and not s.mismatches, r.cell.slug()


@pytest.mark.parametrize("grid", STRESS)
def test_always_book_behind_enforce_keeps_its_score(tmp_path: Path, grid: str) -> None:
    records = _run(tmp_path, grid, "scripted/always-book", "enforce")
    by = {(r.spec.seed, r.cell.knobs): score_episode(r) for r in records}
    stressed = 0
    for (seed, knobs), s in by.items():
        base = by[(seed, msgspec.structs.replace(knobs, **_PLAIN))]
        stressed += base is not s
        assert (s.primary.success, s.primary.channels) == (
            base.primary.success,
            base.primary.channels,
        ), knobs
    assert stressed == len(by) - 2  # every cell but the two seeds' controls
