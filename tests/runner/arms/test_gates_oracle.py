"""The oracle suite of Appendix A.1 for the gate arms, end to end: grids driven through the
runner's scheduler against the embedded scripted endpoint, scored by scoring.replay.episode_score.

* The perfect agent scores strict success (both scorings) in every episode of every gate arm
  and variant, seeds 100..163 at S = 10 (rho 0.15) and S = 15 dense (rho 0.3).
* The memoryless always-book policy behind the state-bound enforcement gate scores at least
  0.99 with a correctly compiled graph, and fails in the raw arm.
* The perfect agent behind a deliberately corrupted gate fails most episodes.
* Injected compile defects are caught by the validator, and the hybrid then refuses no
  correct booking.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from rich.console import Console

from protocol.records import EpisodeRecord
from runner.execution.connect import open_endpoints
from runner.execution.grid_run import run_async
from runner.execution.scheduler import RunState, pending_tasks, run_grid
from runner.gates.helper_models import Helpers
from runner.grid.expand import parse_grid
from runner.rundir.logs import read_logs
from scoring.replay.episode_score import EpisodeScore, score_episode
from scoring.results.gate_report import compile_table, matcher_report

SEEDS = "100-163"
GATE_ARMS = ["directive", "enforce", "hybrid", "ledger"]
VARIANTS: list[dict[str, Any]] = [
    {"arm": "directive", "directive_role": "system"},
    {"arm": "enforce", "directive_role": "system"},
    {"arm": "directive", "checklist_mode": "replace"},
    {"arm": "directive", "checklist_mode": "replace", "matched_step_line": True},
    {"arm": "enforce", "checklist_mode": "replace", "matched_step_line": True},
    {"arm": "enforce", "notice": "same_turn"},
    {"arm": "enforce", "binding": "request"},
    {"arm": "hybrid", "binding": "request"},
    {"arm": "ledger", "checklist_mode": "replace"},
]


def _grid(
    model: str,
    arms: Sequence[str],
    graphs: Sequence[tuple[int, float]],
    seeds: str = SEEDS,
    variants: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    return {
        "run": {
            "seeds": seeds,
            "graphs": [{"steps": s, "density": d} for s, d in graphs],
            "arms": list(arms),
            "variants": list(variants),
            "concurrency": 256,
        },
        "endpoints": [{"name": "embedded", "base_url": "embedded", "max_in_flight": 128}],
        "models": [{"name": model, "endpoint": "embedded"}],
    }


async def run(tmp: Path, data: dict[str, Any]) -> tuple[list[EpisodeRecord], Helpers]:
    """Run a grid through the scheduler; (every logged record, the run's helpers)."""
    grid = parse_grid(data)
    async with open_endpoints(grid) as endpoints:
        helpers = Helpers(grid, tmp, endpoints)
        state = RunState(grid=grid, out=tmp, endpoints=endpoints, helpers=helpers)
        tasks, _ = pending_tasks(grid, tmp)
        await run_grid(state, tasks)
    records = list(read_logs(tmp).values())
    assert len(records) == len(tasks)
    assert all(r.termination == "completed" for r in records), {r.error for r in records}
    return records, helpers


def _by_cell(records: list[EpisodeRecord]) -> dict[str, list[EpisodeRecord]]:
    cells: dict[str, list[EpisodeRecord]] = {}
    for r in records:
        cells.setdefault(r.cell.slug(), []).append(r)
    return cells


def _correct_refused(record: EpisodeRecord, score: EpisodeScore) -> int:
    """Refused bookings of the requested step on a turn whose label allowed it."""
    labels = {t.index: t.label for t in score.primary.turns}
    return sum(
        1
        for t in record.turns
        for b in t.refused
        if b.step == t.step and labels.get(t.index) in ("eligible", "redo")
    )


@pytest.mark.parametrize("graph", [(10, 0.15), (15, 0.3)], ids=["S10", "S15dense"])
async def test_perfect_agent_is_strict_in_every_gate_arm_and_variant(
    tmp_path: Path, graph: tuple[int, float]
) -> None:
    records, helpers = await run(
        tmp_path, _grid("scripted/perfect", GATE_ARMS, [graph], variants=VARIANTS)
    )
    cells = _by_cell(records)
    assert len(cells) == len(GATE_ARMS) + len(VARIANTS)
    for slug, recs in cells.items():
        assert len(recs) == 64, slug
        for r in recs:
            s = score_episode(r)
            assert s.primary.success, (slug, r.seed, s.primary.channels)
            if r.cell.arm != "ledger":  # see test_ledger_under_decline_aware_scoring
                assert s.decline_aware.success, (slug, r.seed, s.decline_aware.channels)
            assert not s.mismatches and s.admitted_diffs == 0, (slug, r.seed, s.mismatches)
            assert all(not t.refused for t in r.turns), (slug, r.seed)
        if recs[0].cell.arm == "ledger":
            continue
        table = compile_table(recs)
        assert table.n == 64 and table.exact == 1.0 and table.validator_flagged == 0
        rep = matcher_report(recs)
        assert rep.agreement == 1.0 and rep.redo_precision == 1.0, slug
        assert rep.redo_recall == 1.0, slug
        if recs[0].cell.arm == "hybrid":
            assert all(r.compile and r.compile.enforcing is True for r in recs)
    # one matcher request per distinct prompt; every gate cell after the first shares it
    stats = helpers.stats
    assert stats.matcher_calls == len(helpers.matcher.store.answers) and stats.matcher_retries == 0
    gate_cells = sum(1 for recs in cells.values() if recs[0].cell.arm != "ledger")
    assert stats.matcher_saved == stats.matcher_requests - stats.matcher_calls
    assert stats.matcher_saved >= (gate_cells - 1) * stats.matcher_calls * 0.95
    assert stats.compile_calls == 2 * 64 and stats.compile_saved == (gate_cells - 1) * 64


async def test_ledger_under_decline_aware_scoring(tmp_path: Path) -> None:
    records, _ = await run(
        tmp_path, _grid("scripted/perfect", ["ledger"], [(10, 0.15)], seeds="100-115")
    )
    assert all(score_episode(r).decline_aware.success for r in records)


async def test_always_book_is_clean_behind_state_bound_enforcement(tmp_path: Path) -> None:
    graphs = [(10, 0.15), (15, 0.3)]
    records, _ = await run(
        tmp_path,
        _grid(
            "scripted/always-book",
            ["raw", "enforce"],
            graphs,
            variants=[{"arm": "enforce", "notice": "same_turn"}],
        ),
    )
    for slug, recs in _by_cell(records).items():
        scores = [score_episode(r) for r in recs]
        strict = sum(s.primary.success for s in scores) / len(scores)
        if recs[0].cell.arm == "raw":
            assert strict == 0.0, slug  # every episode carries redo probes
        else:
            assert strict >= 0.99, slug
            assert sum(s.decline_aware.success for s in scores) / len(scores) >= 0.99
            assert all(r.compile and r.compile.accuracy.exact for r in recs)
            assert sum(_correct_refused(r, s) for r, s in zip(recs, scores, strict=True)) == 0
            assert sum(len(t.refused) for r in recs for t in r.turns) >= 4 * len(recs)


async def test_perfect_agent_behind_a_corrupted_gate_fails(tmp_path: Path) -> None:
    variants = [{"arm": a, "corruption": 0.05} for a in ("enforce", "directive")]
    records, _ = await run(  # the plain enforce cell is the uncorrupted control
        tmp_path,
        _grid("scripted/perfect", ["enforce"], [(15, 0.3)], seeds="100-131", variants=variants),
    )
    for slug, recs in _by_cell(records).items():
        if recs[0].cell.knobs.corruption == 0:
            assert all(score_episode(r).primary.success and not r.corruptions for r in recs)
            continue
        failed = sum(not score_episode(r).primary.success for r in recs)
        assert failed >= 0.75 * len(recs), (slug, failed)
        assert all(len(r.corruptions) > 0 for r in recs)
        assert all(c.turn >= 0 and c.step for r in recs for c in r.corruptions)


@pytest.mark.parametrize(
    ("param", "flag"),
    [
        ("compile_empty_code", "empty_code"),
        ("compile_cancel_left", "cancelled_in_deps"),
        ("compile_cycle", "cycle"),
    ],
)
async def test_compile_defects_are_caught_and_the_hybrid_refuses_no_correct_booking(
    tmp_path: Path, param: str, flag: str
) -> None:
    model = f"scripted/perfect?{param}=0.5"
    records, _ = await run(
        tmp_path, _grid(model, ["enforce", "hybrid"], [(15, 0.3)], seeds="100-131")
    )
    flagged = hurt = 0
    for r in records:
        info = r.compile
        assert info is not None
        validator, accuracy = info.validator, info.accuracy
        assert validator.passed is accuracy.exact, (r.seed, validator, accuracy)
        if not validator.passed:
            flagged += 1
            assert flag in validator.flags
        s = score_episode(r)
        if r.cell.arm == "hybrid":
            assert info.enforcing is validator.passed
            assert _correct_refused(r, s) == 0, r.seed
            if not validator.passed:
                assert all(not t.refused for t in r.turns)
        elif not validator.passed:
            hurt += not s.primary.success
    assert 0 < flagged < len(records)
    if param == "compile_empty_code":
        # Behind plain enforcement the defect costs correct work: the step whose code is empty
        # is admitted (state-bound admits a code the compile lacks) but never marked done, so
        # its dependents are over-blocked (a BLOCKED directive the agent obeys, Table 10).
        assert hurt > 0


async def test_gates_through_run_async(tmp_path: Path) -> None:
    """The command's path: run_async builds Helpers (runner.execution.grid_run), streams
    results; the compile and matcher caches land in OUT/cache and serve a second run."""
    data = _grid("scripted/perfect", GATE_ARMS, [(10, 0.15)], seeds="100-107")
    console = Console(file=io.StringIO())
    await run_async(parse_grid(data), tmp_path / "a", console=console, live=False)
    lines = [orjson.loads(x) for x in (tmp_path / "a" / "results.jsonl").read_bytes().splitlines()]
    cells = [x for x in lines if x["type"] == "cell" and x["status"] == "final"]
    assert len(cells) == 4 and all(c["strict"] == 1.0 for c in cells)
    assert len(list((tmp_path / "a" / "cache" / "compile").glob("*.json"))) == 8
    assert list((tmp_path / "a" / "cache" / "matcher").glob("*.jsonl"))
    shutil.copytree(tmp_path / "a" / "cache", tmp_path / "b" / "cache")
    records, helpers = await run(tmp_path / "b", data)
    assert helpers.stats.compile_calls == 0 and helpers.stats.matcher_calls == 0
    assert helpers.stats.disk_hits > 0 and all(score_episode(r).primary.success for r in records)
