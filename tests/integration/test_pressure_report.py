"""The report's pressure section (issue #46; scoring.analyses.pressure), end to end: a scripted
run of restate, double and their plain controls on the embedded endpoint, each line
recomputed from the episodes' per-turn scores paired by (seed, planned turn), the two cells'
stressed turns the same slots, and the section in the report; the episode scale recomputed
from the episodes' successes, paired by seed."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import msgspec
import pytest

from protocol.config import PLAIN_CONTROLS
from protocol.records import CellKey, EpisodeRecord
from protocol.user import STYLE_KINDS
from runner.grid.expand import parse_grid
from scoring.analyses.pressure import pressure_lines
from scoring.analyses.pressure_episodes import pressure_episode_lines
from scoring.analyses.registry import analysis_sections, log_analyses
from scoring.analyses.stress_turns import turn_outcomes
from scoring.replay.episode_score import EpisodeScore, score_episode
from scoring.results.stats import mcnemar_exact

ARMS = ["raw", "enforce"]
DOSES = [0.25, 1.0]
STYLES = ["restate", "restate_plain", "double", "double_plain"]
SEEDS = range(6)


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[EpisodeRecord, EpisodeScore]]:
    from rich.console import Console

    from runner.execution.grid_run import run_async
    from runner.rundir.records import load_records

    tmp = tmp_path_factory.mktemp("pressure")
    variants: list[dict[str, Any]] = [
        {"arm": a, "user_style": s, "user_dose": d} for a in ARMS for s in STYLES for d in DOSES
    ]
    grid = {
        "run": {
            "seeds": f"{SEEDS[0]}-{SEEDS[-1]}",
            "graphs": [{"steps": 15, "density": 0.3}],
            "arms": ARMS,
            "variants": variants,
        },
        "models": [{"name": "scripted/synthetic"}],
    }
    asyncio.run(run_async(parse_grid(grid), tmp, console=Console(file=io.StringIO()), live=False))
    records, _ = load_records(tmp)
    assert all(r.termination == "completed" for r in records)
    return [(r, score_episode(r)) for r in records]


def _stressed(record: EpisodeRecord, score: EpisodeScore) -> dict[str, bool]:
    """The episode's stressed turns by planned turn, each with whether it erred."""
    return {
        t.draw_turn: bool(s.errors)
        for t, s in zip(record.turns, score.primary.turns, strict=True)
        if t.kind in STYLE_KINDS
    }


def test_each_line_is_the_styled_cell_minus_its_plain_control(
    pairs: list[tuple[EpisodeRecord, EpisodeScore]],
) -> None:
    by = {(r.cell, r.spec.seed): _stressed(r, s) for r, s in pairs}
    lines = pressure_lines(turn_outcomes(pairs))
    assert {(x.cell.arm, x.style, x.control, x.dose) for x in lines} == {
        (a, s, f"{s}_plain", d) for a in ARMS for s in PLAIN_CONTROLS.values() for d in DOSES
    }
    for x in lines:
        plain: CellKey = msgspec.structs.replace(
            x.cell, knobs=msgspec.structs.replace(x.cell.knobs, user_style=x.control)
        )
        turns = errors = control = 0
        d = []
        for seed in SEEDS:
            mine, theirs = by[(x.cell, seed)], by[(plain, seed)]
            assert mine.keys() == theirs.keys() and mine  # the same slots, by planned turn
            e, c = sum(mine.values()), sum(theirs.values())
            turns, errors, control = turns + len(mine), errors + e, control + c
            d.append((e - c) / len(mine))
        assert (x.seeds, x.turns, x.errors, x.control_errors) == (6, turns, errors, control)
        assert x.pressure == pytest.approx(sum(d) / 6)
        assert x.ci[0] <= x.pressure <= x.ci[1] and 0 < x.p <= x.p_holm <= 1
        assert x.family == f"Stress pressure | {x.cell.model}"
    # the synthetic agent reads a request by its step, never its manner (docs/stress.md):
    # the plain control errs where the styled cell does, so its pressure is nil
    assert all(x.pressure == 0 and x.errors == x.control_errors for x in lines)
    assert sum(x.errors for x in lines if x.cell.arm == "raw") > 0  # the trap itself bites
    section = "\n".join(analysis_sections(log_analyses(pairs)))
    assert "## Stress pressure: a style against its plain control" in section
    assert "| raw | restate - restate_plain | 1 |" in section


def test_a_run_without_plain_controls_has_no_pressure_section(
    pairs: list[tuple[EpisodeRecord, EpisodeScore]],
) -> None:
    styled = [(r, s) for r, s in pairs if not r.cell.knobs.user_style.endswith("_plain")]
    assert pressure_lines(turn_outcomes(styled)) == ()
    assert pressure_episode_lines(turn_outcomes(styled)) == ()
    section = "\n".join(analysis_sections(log_analyses(styled)))
    assert "## Stress pressure" not in section and "### On the episode scale" not in section


def test_the_json_carries_the_lines(pairs: list[tuple[EpisodeRecord, EpisodeScore]]) -> None:
    analyses = log_analyses(pairs)
    decoded = msgspec.json.decode(analyses.json())
    assert len(decoded["stress_pressure"]) == len(ARMS) * 2 * len(DOSES)
    assert all(x["type"] == "pressure" for x in decoded["stress_pressure"])
    episodes = decoded["stress_pressure_episodes"]
    assert len(episodes) == len(ARMS) * 2 * len(DOSES) * 2  # strict and decline-aware
    assert {x["type"] for x in episodes} == {"pressure_episodes"}
    assert {x["scoring"] for x in episodes} == {"strict", "decline_aware"}


def test_the_episode_scale_pairs_each_seed_s_successes(
    pairs: list[tuple[EpisodeRecord, EpisodeScore]],
) -> None:
    won = {
        (r.cell, r.spec.seed): {
            "strict": s.primary.success,
            "decline_aware": s.decline_aware.success,
        }
        for r, s in pairs
    }
    lines = pressure_episode_lines(turn_outcomes(pairs))
    assert {(x.cell.arm, x.style, x.dose, x.scoring) for x in lines} == {
        (a, s, d, sc)
        for a in ARMS
        for s in PLAIN_CONTROLS.values()
        for d in DOSES
        for sc in ("strict", "decline_aware")
    }
    for x in lines:
        plain: CellKey = msgspec.structs.replace(
            x.cell, knobs=msgspec.structs.replace(x.cell.knobs, user_style=x.control)
        )
        mine = [won[(x.cell, s)][x.scoring] for s in SEEDS]
        theirs = [won[(plain, s)][x.scoring] for s in SEEDS]
        styled_only = sum(a and not b for a, b in zip(mine, theirs, strict=True))
        plain_only = sum(b and not a for a, b in zip(mine, theirs, strict=True))
        assert (x.seeds, x.successes, x.control_successes) == (6, sum(mine), sum(theirs))
        assert (x.styled_only, x.plain_only) == (styled_only, plain_only)
        assert x.diff == pytest.approx((sum(mine) - sum(theirs)) / 6)
        assert x.p == mcnemar_exact(styled_only, plain_only) and x.p <= x.p_holm <= 1
        assert x.ci[0] <= x.diff <= x.ci[1]
        assert x.family == f"Stress pressure, episodes | {x.scoring} | {x.cell.model}"
    # paired by construction and deaf to manner, the synthetic agent wins or loses each
    # seed alike in both cells: no discordant seed, no pressure
    assert all(x.styled_only == x.plain_only == 0 and x.p == 1 for x in lines)
    assert any(x.successes < x.seeds for x in lines if x.cell.arm == "raw")  # not a ceiling
    section = "\n".join(analysis_sections(log_analyses(pairs)))
    _, found, tail = section.partition("## Stress pressure: a style against its plain control")
    assert found and "### On the episode scale" in tail.split("\n## ")[0]  # under per-turn
    assert "| raw | restate - restate_plain | 1 |" in tail
