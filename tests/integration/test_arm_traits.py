"""An arm is one unit: a new enforcing arm, added as one row naming its session, is read by
every analysis and knob rule that reads the trait (never an arm's name).

The toy ``strict`` arm is the gates' session with the ``enforce`` row's traits under another
name: run on the same seeds, every trait-reading table gives it the enforce arm's lines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.arms.table import ARMS, ArmSpec, arm_spec, enforcing_arms, gate_arms
from protocol.knobs import knob_spec
from scoring.analyses.askback import ASKBACK
from scoring.analyses.base import Analysis
from scoring.analyses.corruption_replay import CORRUPTION
from scoring.analyses.omission_attribution import OMISSION_ATTRIBUTION
from scoring.analyses.registry import log_analyses
from scoring.replay.episode_score import score_episode
from tests.runner.arms.test_askback_oracle import _grid, run

MODEL = "scripted/synthetic?matcher_wrong=0.1&matcher_none=0.05"
STRICT = ArmSpec(
    name="strict",
    compiles=True,
    matcher=True,
    enforcing=True,
    prompt="gate",
    session="runner.arms.gates:DirectiveGate",
)


@pytest.fixture
def strict() -> Iterator[str]:
    ARMS.add(STRICT.name, STRICT)
    try:
        yield STRICT.name
    finally:
        ARMS.remove(STRICT.name)


def test_the_knob_rules_read_the_trait(strict: str) -> None:
    assert strict in gate_arms() and strict in enforcing_arms()
    row = arm_spec(strict)
    assert row is not None
    for field in ("show", "ask", "escalate"):  # the gate knobs; escalate: the refusing gates
        applies = knob_spec(field).applies
        assert applies is not None and applies(row)
    directive = arm_spec("directive")
    escalate = knob_spec("escalate").applies
    assert directive is not None and escalate is not None and not escalate(directive)


def _as_enforce(lines: tuple[Any, ...], arm: str) -> list[Any]:
    """Lines of ``arm``'s cells, read as if the arm were named enforce."""
    out = []
    for line in msgspec.to_builtins(lines):
        if line["cell"]["arm"] == arm:
            line["cell"]["arm"] = "enforce"
            if line.get("burden"):  # seconds waited: the second arm's matcher reads are cached
                line["burden"].pop("extra_s")
            out.append(line)
    return out


async def test_every_trait_reading_analysis_sees_the_new_arm(strict: str, tmp_path: Path) -> None:
    arms = ["enforce", strict]
    variants: list[dict[str, Any]] = [{"arm": a, "corruption": 1e-2} for a in arms]
    variants += [{"arm": a, "escalate": True} for a in arms]
    variants += [{"arm": a, "ask": "second_reading"} for a in arms]
    cells = await run(tmp_path, _grid(MODEL, arms, variants, seeds="100-107"))
    records = [r for recs in cells.values() for r in recs]
    assert {r.cell.arm for r in records} == set(arms)
    analyses = log_analyses([(r, score_episode(r)) for r in records])
    tables: tuple[Analysis[Any, Any], ...] = (ASKBACK, CORRUPTION, OMISSION_ATTRIBUTION)
    for table in tables:
        lines = analyses.of(table)
        mine = _as_enforce(lines, strict)
        assert mine, table.name  # the new arm has its lines
        assert mine == _as_enforce(lines, "enforce"), table.name  # the enforce arm's own
