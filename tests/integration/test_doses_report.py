"""The dose-response and interaction sections (issue #37; scoring.analyses.doses): each line
recomputed from the episodes' scores, the bootstrap interval reproducible and honest."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.records import EpisodeRecord
from runner.grid.expand import parse_grid
from scoring.analyses.doses import (
    control_of,
    did_interval,
    dose_lines,
    interaction_lines,
    outcomes,
    stress_of,
)
from scoring.analyses.registry import analysis_sections, log_analyses
from scoring.replay.episode_score import score_episode

ARMS = ["raw", "enforce"]
DOSES = [0.25, 1.0]


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[EpisodeRecord]:
    from rich.console import Console

    from runner.execution.grid_run import run_async
    from runner.rundir.records import load_records

    tmp = tmp_path_factory.mktemp("doses")
    variants: list[dict[str, Any]] = [
        {"arm": a, "user_style": "restate", "user_dose": d} for a in ARMS for d in DOSES
    ]
    variants += [{"arm": a, "spoof": "receipt", "spoof_dose": 1.0} for a in ARMS]
    grid = {
        "run": {
            "seeds": "0-7",
            "graphs": [{"steps": 10, "density": 0.3}],
            "arms": ARMS,
            "variants": variants,
        },
        "models": [{"name": "scripted/synthetic?fresh=0.5&obey=0.5&seed=2"}],
    }
    asyncio.run(run_async(parse_grid(grid), tmp, console=Console(file=io.StringIO()), live=False))
    recs, _ = load_records(tmp)
    return recs


def test_dose_lines_are_the_cells_strict_success(records: list[EpisodeRecord]) -> None:
    pairs = [(r, score_episode(r)) for r in records]
    lines = dose_lines(outcomes(pairs))
    by = {(x.cell.arm, x.stress, x.dose): x for x in lines}
    assert set(by) == {(a, "user_style=restate", d) for a in ARMS for d in (0.0, *DOSES)} | {
        (a, "spoof=receipt", d) for a in ARMS for d in (0.0, 1.0)
    }
    for r, _ in pairs:
        stressed = stress_of(r.cell) or ("user_style=restate", 0.0)
        line = by[(r.cell.arm, stressed[0], stressed[1])]
        assert line.cell == control_of(r.cell)
    for (arm, stress, dose), line in by.items():
        mine = [
            s.primary.success
            for r, s in pairs
            if r.cell.arm == arm
            and (stress_of(r.cell) == (stress, dose) or (dose == 0 and stress_of(r.cell) is None))
        ]
        assert (line.episodes, line.successes) == (len(mine), sum(mine)) == (8, line.successes)
    # the stress bites on some arm (which one is the synthetic agent's: its dice are paired
    # by seed and turn, and a gate's own account counters a forgery, #46)
    assert any(
        by[(a, "spoof=receipt", 1.0)].successes < by[(a, "spoof=receipt", 0.0)].successes
        for a in ARMS
    )


def test_interactions_are_paired_differences_of_differences(records: list[EpisodeRecord]) -> None:
    pairs = [(r, score_episode(r)) for r in records]
    lines = interaction_lines(outcomes(pairs))
    assert {(x.a.arm, x.b_arm, x.stress, x.dose) for x in lines} == {
        ("raw", "enforce", "user_style=restate", d) for d in DOSES
    } | {("raw", "enforce", "spoof=receipt", 1.0)}
    ok = {(r.cell, r.spec.seed): s.primary.success for r, s in pairs}
    for x in lines:
        a_ctl, b_ctl = x.a, msgspec.structs.replace(x.a, arm=x.b_arm)
        a_str = next(
            c for c, _ in ok if control_of(c) == a_ctl and stress_of(c) == (x.stress, x.dose)
        )
        b_str = next(
            c for c, _ in ok if control_of(c) == b_ctl and stress_of(c) == (x.stress, x.dose)
        )
        d = [
            (ok[(a_str, s)] - ok[(a_ctl, s)]) - (ok[(b_str, s)] - ok[(b_ctl, s)]) for s in range(8)
        ]
        assert x.seeds == 8 and x.did == pytest.approx(sum(d) / 8)
        assert x.ci[0] <= x.did <= x.ci[1]
    section = "\n".join(analysis_sections(log_analyses(pairs)))
    assert "## Dose-response" in section and "## Stress interactions" in section
    assert "(control)" in section


def test_the_bootstrap_interval() -> None:
    assert did_interval([0.0] * 20, "k") == (0.0, 0.0)
    assert did_interval([1.0] * 20, "k") == (1.0, 1.0)
    mixed = [1.0, 0.0, -1.0, 1.0, 1.0, 0.0, 1.0, 0.0] * 4
    lo, hi = did_interval(mixed, "k")
    assert lo < sum(mixed) / len(mixed) < hi and (lo, hi) == did_interval(mixed, "k")
    wide = did_interval(mixed[:8], "k")
    assert wide[1] - wide[0] > hi - lo  # fewer seeds, a wider interval


def test_two_domains_form_a_paired_contrast(tmp_path: Path) -> None:
    """Generator 5 pairs domains by seed; the report forms each arm's cross-domain contrast
    (an exact McNemar on the seeds both ran) in its own Holm family."""
    from rich.console import Console

    from runner.execution.grid_run import run_async
    from runner.rundir.records import load_records
    from scoring.results.lines import ContrastLine
    from scoring.results.offline import rescore

    grid = {
        "run": {
            "seeds": "0-5",
            "graphs": [{"steps": 10, "density": 0.3}],
            "domains": ["procurement", "release"],
            "arms": ["raw", "enforce"],
        },
        "models": [{"name": "scripted/synthetic?seed=4"}],
    }
    asyncio.run(
        run_async(parse_grid(grid), tmp_path, console=Console(file=io.StringIO()), live=False)
    )
    recs, _ = load_records(tmp_path)
    by = {(r.cell.domain, r.cell.arm, r.spec.seed): r for r in recs}
    from protocol import generate

    for (domain, arm, seed), r in by.items():  # the same planned structure on both sides
        other = by[("release" if domain == "procurement" else "procurement", arm, seed)]
        a, b = generate(r.spec), generate(other.spec)
        assert [(t.kind, t.step, t.work_order) for t in a.turns] == [
            (t.kind, t.step, t.work_order) for t in b.turns
        ]
        assert a.turns != b.turns  # the words differ
    lines = [x for x in rescore(recs) if isinstance(x, ContrastLine) and x.kind == "domain"]
    assert {(x.a, x.b, x.scoring) for x in lines} == {
        (f"{a}[procurement]", f"{a}[release]", s)
        for a in ("raw", "enforce")
        for s in ("strict", "decline_aware")
    }
    assert all(
        x.family is not None and x.family.startswith("Domains domain | ") and x.n == 6
        for x in lines
    )


def test_each_dose_line_prints_its_stressed_turns_per_episode(
    records: list[EpisodeRecord],
) -> None:
    """Issue #46: the report prints beside each dose how many turns it stressed per episode,
    counted on the records, the planned stress turns of generator 6."""
    from protocol import generate
    from protocol.stress.plan import stress_plan
    from scoring.analyses.doses import stressed_turns

    pairs = [(r, score_episode(r)) for r in records]
    planned: dict[tuple[str, str, float], list[int]] = {}
    for r in records:
        if (found := stress_of(r.cell)) is None:
            continue
        k = r.cell.knobs
        plan = stress_plan(
            generate(r.spec),
            spoof=k.spoof,
            spoof_dose=k.spoof_dose,
            user_style=k.user_style,
            user_dose=k.user_dose,
        )
        assert stressed_turns(r) == len(plan)
        planned.setdefault((r.cell.arm, *found), []).append(len(plan))
    lines = dose_lines(outcomes(pairs))
    for x in lines:
        if x.dose == 0:
            assert (x.stressed_mean, x.stressed_range) == (0.0, (0, 0))
            continue
        got = planned[(x.cell.arm, x.stress, x.dose)]
        assert x.stressed_mean == sum(got) / len(got) and x.stressed_range == (min(got), max(got))
    by = {(x.cell.arm, x.stress, x.dose): x for x in lines}
    assert by[("raw", "spoof=receipt", 1.0)].stressed_range[1] == 8  # the pool's eight slots
    assert by[("raw", "user_style=restate", 0.25)].stressed_range[1] == 2
    section = "\n".join(analysis_sections(log_analyses(pairs)))
    x = by[("raw", "user_style=restate", 1.0)]
    mean, lo, hi = x.stressed_mean, *x.stressed_range
    assert "stressed turns/ep" in section and f"| {mean:.2f} ({lo}-{hi}) |" in section


def test_dose_lines_name_ceiling_and_floor_apart(records: list[EpisodeRecord]) -> None:
    """#46: a line where every episode succeeds is a ceiling, one where none does a floor."""
    for x in dose_lines(outcomes([(r, score_episode(r)) for r in records])):
        want = {x.episodes: "ceiling", 0: "floor"}.get(x.successes, "")
        assert x.bound == want


def test_stress_per_stressed_turn_counts_the_stressed_turns(records: list[EpisodeRecord]) -> None:
    """#46: errors on the stressed turns, beside the control's on the same (planned) turns."""
    from protocol.user import STYLE_KINDS
    from scoring.analyses.stress_turns import stress_turn_lines, turn_outcomes

    pairs = [(r, score_episode(r)) for r in records]
    lines = {x.cell: x for x in stress_turn_lines(turn_outcomes(pairs))}
    assert len(lines) == len(ARMS) * (len(DOSES) + 1)
    scored = {(r.cell, r.spec.seed): (r, s) for r, s in pairs}
    for cell, x in lines.items():
        turns = errors = control = 0
        for seed in range(8):
            r, s = scored[(cell, seed)]
            c, cs = scored[(control_of(cell), seed)]
            c_err = {
                t.draw_turn: bool(ts.errors)
                for t, ts in zip(c.turns, cs.primary.turns, strict=True)
            }
            for t, ts in zip(r.turns, s.primary.turns, strict=True):
                if t.injected or t.kind in STYLE_KINDS:
                    assert t.draw_turn.startswith("p")  # a stress stands for a planned turn
                    turns += 1
                    errors += bool(ts.errors)
                    control += c_err[t.draw_turn]
        assert (x.episodes, x.turns, x.errors, x.control_errors) == (8, turns, errors, control)
        assert turns > 0 and x.errors_ci[0] <= errors / turns <= x.errors_ci[1]


def test_turn_interactions_are_holm_corrected_per_family(records: list[EpisodeRecord]) -> None:
    from scoring.analyses.stress_turns import turn_interaction_lines, turn_outcomes
    from scoring.results.stats import holm, sign_flip_p

    pairs = [(r, score_episode(r)) for r in records]
    lines = turn_interaction_lines(turn_outcomes(pairs))
    assert {(x.a.arm, x.b_arm, x.stress, x.dose) for x in lines} == {
        ("raw", "enforce", "user_style=restate", d) for d in DOSES
    } | {("raw", "enforce", "spoof=receipt", 1.0)}
    families: dict[str, list[float]] = {}
    for x in lines:
        assert x.seeds == 8 and x.diff == pytest.approx(x.effect_a - x.effect_b)
        assert x.ci[0] <= x.diff <= x.ci[1] and 0 < x.p <= x.p_holm <= 1
        families.setdefault(x.family, []).append(x.p)
    assert len(families) == 2  # spoof and user_style, one model
    for fam, ps in families.items():
        assert sorted(holm(ps)) == sorted(x.p_holm for x in lines if x.family == fam)
    section = "\n".join(analysis_sections(log_analyses(pairs)))
    assert "## Stress per stressed turn" in section
    assert "## Stress interactions per stressed turn" in section
    # the sign-flip test: exact over the nonzero differences
    assert sign_flip_p([0.0] * 5, "k") == 1.0
    assert sign_flip_p([0.5] * 8, "k") == pytest.approx(2 / 256)
    assert sign_flip_p([0.5, -0.5] * 4, "k") == 1.0
    big = [0.25] * 30
    assert sign_flip_p(big, "k") == sign_flip_p(big, "k") < 0.001


def test_a_gate_that_shows_the_state_counters_a_forgery(tmp_path: Path) -> None:
    """#46: the synthetic agent's forgery belief depends on what the arm shows. Following
    every forwarded forgery (quoted=1) unless the arm shows its own account of the step
    (countered=0): raw acts on every contested forgery, the directive gate on none."""
    from rich.console import Console

    from runner.execution.grid_run import run_async
    from runner.rundir.records import load_records
    from scoring.analyses.stress import spoof_lines

    grid = {
        "run": {
            "seeds": "0-3",
            "graphs": [{"steps": 10, "density": 0.3}],
            "arms": ["raw", "directive"],
            "variants": [
                {"arm": a, "spoof": "receipt", "spoof_dose": 1.0} for a in ("raw", "directive")
            ],
        },
        "models": [{"name": "scripted/synthetic?quoted=1&countered=0"}],
    }
    asyncio.run(
        run_async(parse_grid(grid), tmp_path, console=Console(file=io.StringIO()), live=False)
    )
    recs, _ = load_records(tmp_path)
    by = {x.cell.arm: x for x in spoof_lines((r, score_episode(r)) for r in recs)}
    assert by["raw"].contested > 0 and by["raw"].acted == by["raw"].contested
    assert by["directive"].contested > 0 and by["directive"].acted == 0


def test_episode_scale_interactions_are_holm_corrected(records: list[EpisodeRecord]) -> None:
    """#46: the episode-scale table's star needs a Holm p below 0.05 within its family."""
    from scoring.analyses.doses import holm_by_family
    from scoring.results.stats import holm, sign_flip_p

    lines = interaction_lines(outcomes([(r, score_episode(r)) for r in records]))
    assert {x.family.split(" | ")[1] for x in lines} == {"user_style", "spoof"}
    for x in lines:
        assert 0 < x.p <= x.p_holm <= 1
    ps, fams = [0.01, 0.04, 0.03, 0.5], ["a", "a", "b", "a"]
    adjusted = holm_by_family(ps, fams)
    assert adjusted[2] == 0.03  # alone in its family
    assert [adjusted[i] for i in (0, 1, 3)] == holm([0.01, 0.04, 0.5])
    assert sign_flip_p([1.0] * 4, "k") == pytest.approx(2 / 16)
