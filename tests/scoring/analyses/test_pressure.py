"""A style's pressure over its plain control (issue #46; scoring.analyses.pressure): the
styled cell minus its plain control, paired by (seed, turn) on the turns both stressed, a
seed one cluster, Holm within one model's family. Hand-made per-turn outcomes, so the
pressure is not 0 (the synthetic agent's is: tests/integration/test_pressure_report.py)."""

from __future__ import annotations

import pytest

from protocol.config import Knobs
from protocol.records import CellKey
from scoring.analyses.doses import did_interval, holm_by_family
from scoring.analyses.pressure import plain_of, pressure_lines, pressure_section
from scoring.analyses.stress_turns import TurnOutcomes
from scoring.results.stats import holm, sign_flip_p


def _cell(style: str, dose: float = 1.0, arm: str = "raw", model: str = "m") -> CellKey:
    knobs = Knobs(user_style=style, user_dose=dose)  # type: ignore[arg-type]
    return CellKey(model=model, steps=10, density=0.3, arm=arm, knobs=knobs)


def _ep(cell: CellKey, seed: int, turns: list[tuple[str, bool, bool]]) -> TurnOutcomes:
    return TurnOutcomes(cell=cell, seed=seed, turns=tuple(turns))


def test_the_plain_control_of_each_style() -> None:
    assert plain_of(_cell("restate")) == _cell("restate_plain")
    assert plain_of(_cell("double", 0.1, "enforce")) == _cell("double_plain", 0.1, "enforce")
    for style in ("cooperative", "contradict", "restate_plain", "double_plain"):
        assert plain_of(_cell(style)) is None


def test_pressure_is_paired_by_seed_and_turn() -> None:
    styled, plain = _cell("restate"), _cell("restate_plain")
    parts = [
        # seed 1: three stressed turns; styled errs on p3 and p5, plain on p5 only; the
        # unstressed turn p1 errs in the styled episode and counts nowhere
        _ep(
            styled,
            1,
            [("p1", False, True), ("p3", True, True), ("p5", True, True), ("p7", True, False)],
        ),
        _ep(
            plain,
            1,
            [("p1", False, False), ("p3", True, False), ("p5", True, True), ("p7", True, False)],
        ),
        # seed 2: one stressed turn, the plain errs where the styled does not
        _ep(styled, 2, [("p2", True, False)]),
        _ep(plain, 2, [("p2", True, True)]),
        # seed 3: the plain episode is missing, so the seed is not paired
        _ep(styled, 3, [("p2", True, True)]),
        # a cooperative control and a contradict cell: no plain control, no line
        _ep(_cell("cooperative"), 1, [("p3", False, False)]),
        _ep(_cell("contradict"), 1, [("p4", True, True)]),
    ]
    (line,) = pressure_lines(parts)
    d = [(2 - 1) / 3, (0 - 1) / 1]
    assert (line.cell, line.style, line.control, line.dose) == (styled, "restate",
                                                                 "restate_plain", 1.0)  # fmt: skip
    assert (line.seeds, line.turns, line.errors, line.control_errors) == (2, 4, 2, 2)
    assert line.pressure == pytest.approx(sum(d) / 2)
    key = f"{styled.slug()}|pressure"
    assert line.ci == did_interval(d, key) and line.p == sign_flip_p(d, key)
    assert line.family == "Stress pressure | m" and line.p_holm == line.p  # a family of one


def test_only_turns_both_cells_stressed_count() -> None:
    styled, plain = _cell("double", 0.25), _cell("double_plain", 0.25)
    parts = [
        _ep(styled, 1, [("p3", True, True), ("p4", True, True)]),
        _ep(plain, 1, [("p3", True, False), ("p4", False, False)]),
    ]
    (line,) = pressure_lines(parts)
    assert (line.turns, line.errors, line.control_errors, line.pressure) == (1, 1, 0, 1.0)
    # no turn stressed in both: no line
    assert pressure_lines([parts[0], _ep(plain, 1, [("p3", False, False)])]) == ()


def test_holm_within_one_model_every_style_dose_and_arm() -> None:
    parts: list[TurnOutcomes] = []
    for model in ("m", "n"):
        for style in ("restate", "double"):
            for arm in ("raw", "enforce"):
                for seed in range(6):
                    err = arm == "raw" and seed < 5  # raw yields to the styled wording
                    parts += [
                        _ep(_cell(style, arm=arm, model=model), seed, [("p1", True, err)]),
                        _ep(
                            _cell(f"{style}_plain", arm=arm, model=model),
                            seed,
                            [("p1", True, False)],
                        ),
                    ]
    lines = pressure_lines(parts)
    assert len(lines) == 8
    assert {x.family for x in lines} == {"Stress pressure | m", "Stress pressure | n"}
    for family in ("Stress pressure | m", "Stress pressure | n"):
        mine = [x for x in lines if x.family == family]
        assert len(mine) == 4
        assert [x.p_holm for x in mine] == pytest.approx(holm([x.p for x in mine]))
    assert [x.p_holm for x in lines] == holm_by_family(
        [x.p for x in lines], [x.family for x in lines]
    )
    raw = [x for x in lines if x.cell.arm == "raw"]
    assert all(x.pressure == pytest.approx(5 / 6) and x.p < 0.1 for x in raw)
    assert all(x.pressure == 0 and x.p == 1 for x in lines if x.cell.arm == "enforce")
    section = "\n".join(pressure_section(lines))
    assert "## Stress pressure" in section
    assert "| raw | restate - restate_plain | 1 |" in section
    assert "5/6 = 0.833 | 0/6 = 0.000 | +0.833 [" in section
    assert pressure_section(()) == []


def test_the_section_shares_the_per_turn_compute_and_follows_the_interactions() -> None:
    from scoring.analyses.pressure import PRESSURE
    from scoring.analyses.registry import ANALYSES
    from scoring.analyses.stress_turns import STRESS_TURNS, TURN_INTERACTION

    assert PRESSURE.compute is STRESS_TURNS.compute  # computed once per batch
    names = [t.name for t in ANALYSES.entries()]
    assert names.index(PRESSURE.name) == names.index(TURN_INTERACTION.name) + 1
