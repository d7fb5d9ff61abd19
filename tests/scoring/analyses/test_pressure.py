"""A style's pressure over its plain control (issue #46; scoring.analyses.pressure): the
styled cell minus its plain control, paired by (seed, turn) on the turns both stressed, a
seed one cluster, Holm within one model's family; and on the episode scale
(scoring.analyses.pressure_episodes): the paired difference in success, McNemar on the
discordant seeds, Holm within one scoring of one model. Hand-made outcomes, so the pressure
is not 0 (the synthetic agent's is: tests/integration/test_pressure_report.py)."""

from __future__ import annotations

import pytest

from protocol.config import Knobs
from protocol.records import CellKey
from scoring.analyses.doses import did_interval, holm_by_family
from scoring.analyses.pressure import plain_of, pressure_lines, pressure_section
from scoring.analyses.pressure_episodes import (
    PressureEpisodeLine,
    pressure_episode_lines,
    pressure_episode_section,
)
from scoring.analyses.stress_turns import TurnOutcomes
from scoring.results.stats import holm, mcnemar_exact, paired_difference, sign_flip_p


def _cell(style: str, dose: float = 1.0, arm: str = "raw", model: str = "m") -> CellKey:
    knobs = Knobs(user_style=style, user_dose=dose)  # type: ignore[arg-type]
    return CellKey(model=model, steps=10, density=0.3, arm=arm, knobs=knobs)


def _ep(
    cell: CellKey,
    seed: int,
    turns: list[tuple[str, bool, bool]],
    success: bool = False,
    decline_aware: bool | None = None,
) -> TurnOutcomes:
    aware = success if decline_aware is None else decline_aware
    return TurnOutcomes(
        cell=cell, seed=seed, turns=tuple(turns), success=success, decline_aware=aware
    )


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


# -- the episode scale (scoring.analyses.pressure_episodes) ----------------------------------


def _episodes(
    styled: list[bool], plain: list[bool], dose: float = 1.0, arm: str = "raw", model: str = "m"
) -> list[TurnOutcomes]:
    """One styled and one plain episode per seed, each with one stressed turn (so the cell
    has a per-turn line), the strict success given (decline-aware the same)."""
    out = []
    for seed, (s, c) in enumerate(zip(styled, plain, strict=True)):
        out.append(_ep(_cell("restate", dose, arm, model), seed, [("p1", True, not s)], s))
        out.append(_ep(_cell("restate_plain", dose, arm, model), seed, [("p1", True, False)], c))
    return out


def _strict(lines: tuple[PressureEpisodeLine, ...]) -> list[PressureEpisodeLine]:
    return [x for x in lines if x.scoring == "strict"]


def test_the_episode_scale_finds_a_real_pressure() -> None:
    # 12 seeds: the plain control succeeds on all; the styled cell fails 10 of them
    parts = _episodes([s >= 10 for s in range(12)], [True] * 12)
    (line,) = _strict(pressure_episode_lines(parts))
    assert (line.cell, line.style, line.control, line.dose) == (
        _cell("restate"),
        "restate",
        "restate_plain",
        1.0,
    )
    assert (line.seeds, line.successes, line.control_successes) == (12, 2, 12)
    assert (line.styled_only, line.plain_only) == (0, 10)
    assert line.diff == pytest.approx(-10 / 12)
    assert line.ci == paired_difference(2, 0, 10, 0) and line.ci[1] < 0  # the interval misses 0
    assert line.p == mcnemar_exact(0, 10) == pytest.approx(2 / 2**10)
    assert line.p_holm < 0.05
    assert line.family == "Stress pressure, episodes | strict | m"


def test_the_episode_scale_finds_none_where_there_is_none() -> None:
    # the same outcome in both cells on every seed: no discordant pair
    same = [s % 3 != 0 for s in range(12)]
    (line,) = _strict(pressure_episode_lines(_episodes(same, same)))
    assert (line.successes, line.control_successes, line.styled_only, line.plain_only) == (
        8,
        8,
        0,
        0,
    )
    assert line.diff == 0 and line.p == 1 and line.p_holm == 1
    assert line.ci[0] <= 0 <= line.ci[1]
    # discordant both ways as often: the marginal rates differ by nothing, no evidence
    styled = [s % 2 == 0 for s in range(12)]
    plain = [s % 4 in (0, 1) for s in range(12)]  # agrees on 6 seeds, 3 each way on the rest
    (line,) = _strict(pressure_episode_lines(_episodes(styled, plain)))
    assert (line.styled_only, line.plain_only, line.diff, line.p) == (3, 3, 0.0, 1.0)
    assert line.ci[0] < 0 < line.ci[1]


def test_the_episode_scale_pairs_by_seed_and_reads_each_scoring() -> None:
    styled, plain = _cell("double", 0.25), _cell("double_plain", 0.25)
    parts = [
        # seed 0: strict fails in the styled cell, the decline-aware reading succeeds
        _ep(styled, 0, [("p1", True, True)], success=False, decline_aware=True),
        _ep(plain, 0, [("p1", True, False)], success=True, decline_aware=True),
        _ep(styled, 1, [("p1", True, False)], success=True),
        _ep(plain, 1, [("p1", True, False)], success=True),
        # seed 2: the plain episode is missing, so the seed is not paired
        _ep(styled, 2, [("p1", True, True)], success=False),
        # a cooperative control: no plain control, no line
        _ep(_cell("cooperative"), 0, [("p1", False, False)], success=True),
    ]
    strict, aware = pressure_episode_lines(parts)
    assert (strict.scoring, aware.scoring) == ("strict", "decline_aware")
    assert (strict.seeds, strict.successes, strict.control_successes) == (2, 1, 2)
    assert (strict.styled_only, strict.plain_only, strict.diff) == (0, 1, -0.5)
    assert (aware.seeds, aware.successes, aware.control_successes, aware.diff) == (2, 2, 2, 0)
    assert aware.family == "Stress pressure, episodes | decline_aware | m"
    # a styled cell with no turn stressed in both has no per-turn line, and none here
    lone = [_ep(styled, 0, [("p1", True, True)]), _ep(plain, 0, [("p1", False, False)])]
    assert pressure_episode_lines(lone) == ()


def test_the_episode_scale_is_holm_within_one_scoring_of_one_model() -> None:
    parts: list[TurnOutcomes] = []
    for model in ("m", "n"):
        for arm in ("raw", "enforce"):
            for dose in (0.25, 1.0):
                # raw fails 9 of 12 styled seeds its control wins; enforce never does
                styled = [arm != "raw" or s >= 9 for s in range(12)]
                parts += _episodes(styled, [True] * 12, dose, arm, model)
    lines = pressure_episode_lines(parts)
    assert len(lines) == 16  # 2 models x 2 arms x 2 doses x 2 scorings
    families = {x.family for x in lines}
    assert families == {
        f"Stress pressure, episodes | {s} | {m}"
        for s in ("strict", "decline_aware")
        for m in ("m", "n")
    }
    for family in families:
        mine = [x for x in lines if x.family == family]
        assert len(mine) == 4
        assert [x.p_holm for x in mine] == pytest.approx(holm([x.p for x in mine]))
    raw = [x for x in lines if x.cell.arm == "raw"]
    assert all(x.diff == pytest.approx(-9 / 12) and x.p_holm < 0.05 for x in raw)
    assert all(x.diff == 0 and x.p_holm == 1 for x in lines if x.cell.arm == "enforce")
    section = "\n".join(pressure_episode_section(lines))
    assert "### On the episode scale" in section
    assert "| raw | restate - restate_plain | 0.25 |" in section
    assert "| strict | 12 | 3/12 | 12/12 | 0 / 9 | -0.750 [" in section
    assert pressure_episode_section(()) == []


def test_the_episode_scale_leaves_the_per_turn_lines_as_they_were() -> None:
    parts = _episodes([s >= 10 for s in range(12)], [True] * 12)
    plain = [TurnOutcomes(cell=p.cell, seed=p.seed, turns=p.turns) for p in parts]
    assert pressure_lines(parts) == pressure_lines(plain)  # success plays no part per turn


def test_the_episode_section_follows_the_per_turn_one() -> None:
    from scoring.analyses.pressure import PRESSURE
    from scoring.analyses.pressure_episodes import PRESSURE_EPISODES
    from scoring.analyses.registry import ANALYSES

    assert PRESSURE_EPISODES.compute is PRESSURE.compute  # computed once per batch
    names = [t.name for t in ANALYSES.entries()]
    assert names.index(PRESSURE_EPISODES.name) == names.index(PRESSURE.name) + 1
