"""The rules beyond one-shot state in the stress tables (issue #48): a budgeted or expiring
cell is a stress with its cap or turns as the dose, against the same cell with the rule off,
so the dose-response and interaction tables read it as they read the stress knobs."""

from __future__ import annotations

from protocol.config import Knobs
from protocol.records import CellKey
from scoring.analyses.doses import Outcome, control_of, interaction_lines, stress_of


def _cell(arm: str, **knobs: object) -> CellKey:
    return CellKey(model="m", steps=15, density=0.3, arm=arm, knobs=Knobs(**knobs))  # type: ignore[arg-type]


def test_a_rule_is_a_stress_with_its_dose() -> None:
    assert stress_of(_cell("raw", budget=3)) == ("budget", 3.0)
    assert stress_of(_cell("raw", expiry=6)) == ("expiry", 6.0)
    assert control_of(_cell("raw", budget=3)) == _cell("raw")
    assert control_of(_cell("enforce", expiry=6)) == _cell("enforce")
    assert stress_of(_cell("raw", budget=2, spoof="receipt")) is None  # two at once: none


def test_the_interaction_pairs_arms_under_a_rule() -> None:
    parts = []
    for seed in range(4):
        parts += [
            Outcome(cell=_cell("raw"), seed=seed, success=True),
            Outcome(cell=_cell("raw", expiry=6), seed=seed, success=seed % 2 == 0),
            Outcome(cell=_cell("enforce"), seed=seed, success=True),
            Outcome(cell=_cell("enforce", expiry=6), seed=seed, success=True),
        ]
    (line,) = interaction_lines(parts)
    assert (line.stress, line.dose, line.seeds) == ("expiry", 6.0, 4)
    assert {line.a.arm, line.b_arm} == {"raw", "enforce"}
    assert abs(line.did) == 0.5
