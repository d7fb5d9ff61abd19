"""The tool harness's oracle suite (the paper's verify_rw, Appendix A.1 / G), end to end:
harness grids through the runner's scheduler against the embedded scripted endpoint, scored
by scoring.replay.episode_score.

* The perfect agent makes zero errors on every arm of the harness (Table 19's five).
* A corrupted gate degrades it.
* The memoryless always-book policy behind state-bound enforcement is bounded as in the text
  protocol (>= 0.99), and fails in the raw arm.
* The policy that executes the prerequisites itself is admitted by state-bound enforcement
  (premature and unrequested errors, no refusal) and refused by request-bound enforcement
  (both channels at zero).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from protocol.records import EpisodeRecord
from scoring.replay.episode_score import score_episode
from tests.runner.arms.test_gates_oracle import _by_cell, _grid, run

SEEDS = "300-307"
FIVE: list[dict[str, Any]] = [
    {"arm": "raw"},
    {"arm": "checklist"},
    {"arm": "directive"},
    {"arm": "enforce"},
    {"arm": "enforce", "binding": "request"},
]


def _harness(variants: list[dict[str, Any]], **knobs: Any) -> list[dict[str, Any]]:
    return [{**v, "harness": "langgraph", **knobs} for v in variants]


def _key(r: EpisodeRecord) -> str:
    return r.cell.arm + ("/request" if r.cell.knobs.binding == "request" else "")


def _summary(records: list[EpisodeRecord]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in records:
        s = score_episode(r)
        assert not s.mismatches and s.admitted_diffs == 0, (r.cell.slug(), r.seed, s.mismatches)
        row = out.setdefault(_key(r), {"n": 0, "success": 0, "refused": 0})
        row["n"] += 1
        row["success"] += s.primary.success
        row["refused"] += s.refused
        for ch, n in s.primary.channels.items():
            row[ch] = row.get(ch, 0) + n
    return out


async def test_perfect_agent_makes_no_error_on_any_harness_arm(tmp_path: Path) -> None:
    records, _ = await run(
        tmp_path, _grid("scripted/perfect", [], [(10, 0.15)], SEEDS, _harness(FIVE))
    )
    cells = _by_cell(records)
    assert len(cells) == 5
    for slug, recs in cells.items():
        assert len(recs) == 8, slug
        for r in recs:
            s = score_episode(r)
            assert s.primary.success and s.decline_aware.success, (slug, r.seed, s.primary.channels)
            assert all(not t.refused for t in r.turns), (slug, r.seed)
            # every booking is a stamped tool call, one per execution
            calls = [c for t in r.turns for c in t.tool_calls]
            assert calls and all(c.outcome == "executed" and c.receipt for c in calls)
            assert all(not t.reply.count("ref RC-") for t in r.turns)  # no ref protocol


async def test_corrupted_gate_degrades_the_perfect_agent(tmp_path: Path) -> None:
    variants = _harness([{"arm": "directive"}, {"arm": "enforce"}], corruption=0.05)
    records, _ = await run(
        tmp_path, _grid("scripted/perfect", [], [(10, 0.15)], "300-307", variants)
    )
    for key, row in _summary(records).items():
        assert row["success"] <= row["n"] // 2, (key, row)


async def test_always_book_behind_state_bound_enforcement_is_bounded(tmp_path: Path) -> None:
    records, _ = await run(
        tmp_path, _grid("scripted/always-book", [], [(10, 0.15)], SEEDS, _harness(FIVE))
    )
    rows = _summary(records)
    assert rows["enforce"]["success"] >= 0.99 * rows["enforce"]["n"], rows["enforce"]
    assert rows["enforce"]["refused"] > 0
    assert rows["enforce/request"]["success"] >= 0.99 * rows["enforce/request"]["n"]
    assert rows["raw"]["success"] == 0 and rows["raw"]["re_execution"] > 0, rows["raw"]


async def test_prerequisites_policy_admitted_by_state_bound_refused_by_request_bound(
    tmp_path: Path,
) -> None:
    variants = _harness([{"arm": "enforce"}, {"arm": "enforce", "binding": "request"}])
    records, _ = await run(
        tmp_path, _grid("scripted/prerequisites", [], [(10, 0.15)], SEEDS, variants)
    )
    rows = _summary(records)
    state, request = rows["enforce"], rows["enforce/request"]
    # state-bound: each call admitted because the state is correct
    assert state["premature"] > 0 and state["unrequested"] > 0 and state["refused"] == 0
    assert state["success"] < state["n"]
    # request-bound: the prerequisites and the step refused; both channels at zero
    assert request["premature"] == 0 and request["unrequested"] == 0, request
    assert request["refused"] >= state["premature"] + state["unrequested"]
    assert request["success"] == request["n"], request


async def test_hundreds_of_harness_episodes_on_one_event_loop(tmp_path: Path) -> None:
    """200 harness episodes under the scheduler at once; no thread per episode."""
    peak = 0
    stop = False

    async def watch() -> None:
        nonlocal peak
        import asyncio

        while not stop:
            peak = max(peak, threading.active_count())
            await asyncio.sleep(0.01)

    import asyncio

    before = threading.active_count()
    watcher = asyncio.create_task(watch())
    data = _grid("scripted/perfect", [], [(5, 0.3)], "300-499", _harness([{"arm": "raw"}]))
    records, _ = await run(tmp_path, data)
    stop = True
    await watcher
    assert len(records) == 200
    assert all(score_episode(r).primary.success for r in records)
    assert peak - before < 8, (before, peak)  # a thread per episode would add ~200
