"""The ask-back knobs are off by default (issue #38): every existing cell is unchanged.

A digest of every turn the default gate cells play on the embedded endpoint (what was sent,
the reply, what the gate added, admitted and refused, the matcher's step, the directive and
the notices), taken before the knobs existed (main at 659d78d), with a misrouting matcher, a
corrupted state, the same-turn notice, ambiguous probes and a miscompiled graph. A change
elsewhere that moves these cells on purpose regenerates it: run this test and take the
digest it prints.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
import pytest

from protocol.config import Knobs
from protocol.records import CellKey
from runner.execution.connect import open_endpoints
from runner.execution.scheduler import RunState, pending_tasks, run_grid
from runner.gates.helper_models import Helpers
from runner.grid.expand import GridError, parse_grid
from runner.rundir.logs import read_logs

# retaken for #46 (the synthetic agent's dice drawn from the runner's draw key, not from the
# prompt's hash: every synthetic reply moves, on purpose; CHANGELOG). The always-book half of
# the digest draws nothing and is as before.
BEFORE = "9d7289c9436732dbdfa2b62b1dbd291a3cff83ebc47c8c98083cedff788bb11e"
MODELS = ("scripted/synthetic?matcher_wrong=0.1", "scripted/always-book?compile_cancel_left=1")


def _grid(model: str) -> dict[str, Any]:
    return {
        "run": {
            "seeds": "100-103",
            "graphs": [{"steps": 10, "density": 0.15}],
            "arms": ["directive", "enforce", "hybrid"],
            "ambiguous_rate": 0.15,
            # the digest was taken on generator 4's episodes, before the knobs existed
            "generator": 4,
            "variants": [
                {"arm": "enforce", "corruption": 1e-2},
                {"arm": "enforce", "notice": "same_turn"},
            ],
            "concurrency": 64,
        },
        "endpoints": [{"name": "embedded", "base_url": "embedded", "max_in_flight": 64}],
        "models": [{"name": model, "endpoint": "embedded"}],
    }


async def test_default_gate_cells_play_as_before_the_knobs(tmp_path: Path) -> None:
    h = hashlib.sha256()
    for n, model in enumerate(MODELS):
        out = tmp_path / str(n)
        grid = parse_grid(_grid(model))
        async with open_endpoints(grid) as endpoints:
            helpers = Helpers(grid, out, endpoints)
            state = RunState(grid=grid, out=out, endpoints=endpoints, helpers=helpers)
            tasks, _ = pending_tasks(grid, out)
            await run_grid(state, tasks)
        records = sorted(read_logs(out).values(), key=lambda r: (r.cell.slug(), r.seed))
        for r in records:
            for t in r.turns:
                assert t.question is None and t.answer is None and not t.escalations
                assert "[GATE " not in t.sent_text
                fields = [
                    r.cell.slug(),
                    r.seed,
                    t.sent_text,
                    t.reply,
                    t.arm_text,
                    [b.code for b in t.admitted],
                    [b.code for b in t.refused],
                    t.matched_step,
                    t.directive,
                    list(t.notices),
                ]
                h.update(orjson.dumps(fields))
    assert h.hexdigest() == BEFORE, h.hexdigest()


def test_the_knobs_default_off_and_leave_slugs_alone() -> None:
    plain = Knobs()
    assert (plain.show, plain.ask, plain.escalate) == (False, "off", False)
    assert plain.changed() == {}
    cell = CellKey(model="m", steps=10, density=0.15, arm="enforce")
    assert cell.slug() == "m__no-think__S10__rho0.15__procurement__amended__enforce"
    on = CellKey(
        model="m",
        steps=10,
        density=0.15,
        arm="enforce",
        knobs=Knobs(show=True, ask="second_reading", escalate=True),
    )
    assert on.slug().endswith("enforce__show=True-ask=second_reading-escalate=True")


@pytest.mark.parametrize(
    ("variant", "problem"),
    [
        ({"arm": "raw", "show": True}, "show applies to the gate arms only"),
        ({"arm": "checklist", "ask": "unresolved"}, "ask applies to the gate arms only"),
        ({"arm": "directive", "escalate": True}, "escalate applies to the gates that refuse"),
        (
            {"arm": "directive", "show": True, "matched_step_line": True},
            "show and matched_step_line both name the step",
        ),
        ({"arm": "enforce", "ask": "sometimes"}, "ask"),
    ],
)
def test_a_grid_with_a_misplaced_knob_says_so(variant: dict[str, Any], problem: str) -> None:
    data = {"run": {"variants": [variant]}, "models": [{"name": "scripted/perfect"}]}
    with pytest.raises(GridError) as e:
        parse_grid(data)
    assert problem in str(e.value)
