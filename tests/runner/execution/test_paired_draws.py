"""Paired by construction (issue #46): the synthetic agent's dice are drawn from (seed, turn,
call, trial, purpose) (protocol.draws), so a stress that causes no error on its own turns
changes no other turn's outcome.

A control and stressed cells of the same seeds run on the embedded endpoint with the
synthetic agent; on every seed whose stressed turns executed nothing and erred nowhere (the
agent's state there is the control's), every other turn's outcome (its label, the steps it
executed, its errors) equals the control's turn for turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from protocol.draws import draw_key, parse_draw, uniform
from protocol.records import EpisodeRecord
from protocol.user import STYLE_KINDS
from runner.execution.connect import open_endpoints
from runner.execution.scheduler import RunState, pending_tasks, run_grid
from runner.gates.helper_models import Helpers
from runner.grid.expand import parse_grid
from runner.rundir.logs import read_logs
from scoring.replay.episode_score import TurnScore, score_episode

STRESSES = (
    {"user_style": "contradict", "user_dose": 1.0},
    {"spoof": "receipt", "spoof_dose": 0.25},
)


def _grid() -> dict[str, Any]:
    variants = [{"arm": arm, **s} for arm in ("raw", "directive") for s in STRESSES]
    return {
        "run": {
            "seeds": "100-111",
            "graphs": [{"steps": 10, "density": 0.3}],
            "arms": ["raw", "directive"],
            "variants": variants,
            "concurrency": 64,
        },
        "endpoints": [{"name": "embedded", "base_url": "embedded", "max_in_flight": 64}],
        "models": [{"name": "scripted/synthetic", "endpoint": "embedded"}],
    }


def _stressed(record: EpisodeRecord, i: int) -> bool:
    t = record.turns[i]
    return t.kind in STYLE_KINDS or bool(t.injected)


def _outcome(t: TurnScore) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    return (t.label, t.executed, tuple(f"{e.channel}:{e.step}" for e in t.errors))


def test_draw_keys_are_bounded_and_purposeful() -> None:
    key = draw_key(100, "p12", 0, 3)
    assert parse_draw(key) == key
    assert parse_draw(key + "x") is None and parse_draw("seed=1;" * 40) is None
    assert uniform(key, "obey") == uniform(key, "obey")
    assert uniform(key, "obey") != uniform(key, "trap")
    assert uniform(key, "obey") != uniform(draw_key(100, "p13", 0, 3), "obey")


@pytest.mark.integration
async def test_a_stress_without_error_moves_no_other_turn(tmp_path: Path) -> None:
    grid = parse_grid(_grid())
    async with open_endpoints(grid) as endpoints:
        helpers = Helpers(grid, tmp_path, endpoints)
        state = RunState(grid=grid, out=tmp_path, endpoints=endpoints, helpers=helpers)
        tasks, _ = pending_tasks(grid, tmp_path)
        await run_grid(state, tasks)
    records = list(read_logs(tmp_path).values())
    control = {
        (r.cell.arm, r.seed): r
        for r in records
        if r.cell.knobs.spoof == "none" and r.cell.knobs.user_style == "cooperative"
    }
    compared = 0
    for r in records:
        c = control[(r.cell.arm, r.seed)]
        if r is c:
            continue
        s, cs = score_episode(r).primary.turns, score_episode(c).primary.turns
        assert len(s) == len(cs) == len(r.turns)  # generator 5: the control's turns
        hit = [i for i in range(len(s)) if _stressed(r, i)]
        assert hit, r.cell.slug()
        if any(s[i].errors or s[i].executed for i in hit):
            continue  # the stress moved the agent's state: what follows may differ
        compared += 1
        for i in range(len(s)):
            if i not in hit:
                assert _outcome(s[i]) == _outcome(cs[i]), (r.cell.slug(), r.seed, i)
    assert compared >= 12  # both stresses, both arms: most seeds qualify
