"""The budget knob's oracles end to end (issue #48, generator 6), on the embedded scripted
endpoint through the runner and the scorer: the perfect agent scores 1.0, strict and
decline-aware, in every arm at every cap; the memoryless always-book policy behind the
state-bound enforcement gate keeps its unbudgeted score (the gate refuses the run beyond the
budget, and only it); a budgeted episode has its control's length and, off its budget turns,
its control's labels; and the synthetic agent's budget errors land on the budget's turns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.records import EpisodeRecord
from scoring.replay.episode_score import EpisodeScore, score_episode
from tests.rule_kit import control_records, labels, run_rule_grid

ARMS = ["raw", "checklist", "directive", "enforce", "hybrid", "ledger"]
CAPS = (1, 2, 3)
SEEDS = "100-103"


def _run(tmp: Path, model: str, arms: list[str], seeds: str = SEEDS) -> list[EpisodeRecord]:
    return run_rule_grid(
        tmp, model, arms, [{"arm": a, "budget": c} for a in arms for c in CAPS], seeds
    )


def _control(records: list[EpisodeRecord]) -> dict[tuple[str, int, int], EpisodeRecord]:
    """(arm, seed, cap) -> the record of the same arm and seed with the budget off."""
    plain = control_records(records, "budget")
    return {(r.cell.arm, r.spec.seed, r.cell.knobs.budget): plain[(r.cell.arm, r.spec.seed)]
            for r in records}  # fmt: skip


def _budget_turns(r: EpisodeRecord) -> set[int]:
    return {i for i, t in enumerate(r.turns) if t.kind == "budget_repeat"}


@pytest.fixture(scope="module")
def perfect(tmp_path_factory: pytest.TempPathFactory) -> list[EpisodeRecord]:
    return _run(tmp_path_factory.mktemp("perfect"), "scripted/perfect", ARMS)


def test_the_perfect_agent_scores_1_in_every_arm_at_every_cap(
    perfect: list[EpisodeRecord],
) -> None:
    assert len(perfect) == 4 * len(ARMS) * (1 + len(CAPS))
    for r in perfect:
        s = score_episode(r)
        assert s.primary.success and s.decline_aware.success, r.cell.slug()
        assert not s.mismatches, s.mismatches
        if r.cell.knobs.budget:
            stressed = _budget_turns(r)
            assert len(stressed) == r.cell.knobs.budget, r.cell.slug()
            spent = [t for t in s.primary.turns if t.label == "spent"]
            assert len(spent) == 1 and spent[0].kind == "budget_repeat"


def test_budgeted_episodes_keep_their_controls_length_and_labels(
    perfect: list[EpisodeRecord],
) -> None:
    controls = _control(perfect)
    checked = 0
    for r in perfect:
        if not r.cell.knobs.budget:
            continue
        base = controls[(r.cell.arm, r.spec.seed, r.cell.knobs.budget)]
        assert len(r.turns) == len(base.turns) == 44
        stressed = _budget_turns(r)
        a, b = labels(score_episode(r)), labels(score_episode(base))
        assert [x for i, x in enumerate(a) if i not in stressed] == [
            x for i, x in enumerate(b) if i not in stressed
        ]
        assert all(base.turns[i].kind == "filler" for i in stressed)
        checked += 1
    assert checked == 4 * len(ARMS) * len(CAPS)


def test_always_book_behind_enforce_keeps_its_unbudgeted_score(tmp_path: Path) -> None:
    records = _run(tmp_path, "scripted/always-book", ["enforce", "raw"])
    controls = _control(records)
    for r in records:
        s = score_episode(r)
        base = score_episode(controls[(r.cell.arm, r.spec.seed, r.cell.knobs.budget)])
        if r.cell.arm == "enforce":
            assert (s.primary.success, s.decline_aware.success) == (
                base.primary.success,
                base.decline_aware.success,
            ), r.cell.slug()
            assert s.primary.success, r.cell.slug()
            assert s.primary.channels.get("over_budget", 0) == 0
            refused = [t for t in r.turns if t.kind == "budget_repeat" and t.refused]
            assert len(refused) == (1 if r.cell.knobs.budget else 0)
        elif r.cell.knobs.budget:
            # raw: always-book runs the step beyond its budget (more than once where its
            # earlier runs, premature or repeated, used the budget up sooner: the realized state)
            assert s.primary.channels["over_budget"] >= 1 and not s.primary.success


def test_the_synthetic_agent_errs_on_the_budget_turns(tmp_path: Path) -> None:
    """The synthetic agent's budget parameters (serve.agents.synthetic: one_shot, over_budget)
    at 1: in the raw arm every run within the budget is confirmed instead (an omission), and a
    request beyond it run (over_budget; the labels follow the realized state, so with the
    earlier runs omitted only a cap of 1 has one); behind the enforcement gate the directive it obeys
    (obey = 1) says ELIGIBLE within the budget and that the runs are used beyond it."""
    model = (
        "scripted/synthetic?one_shot=1&over_budget=1&obey=1"
        "&omit=0&fresh=0&premature=0&superseded=0&cite=0"
    )
    records = _run(tmp_path, model, ["raw", "enforce"], seeds="100-101")
    for r in records:
        if not r.cell.knobs.budget:
            continue
        s = score_episode(r)
        turns = [t for t in s.primary.turns if t.kind == "budget_repeat"]
        within = [t for t in turns if t.label == "eligible"]
        over = s.primary.channels.get("over_budget", 0)
        if r.cell.arm == "raw":
            # every run within the budget is omitted, so on the realized state the runs are
            # never used up beyond a cap of 1: the last request is eligible too
            assert all([e.channel for e in t.errors] == ["omission"] for t in within)
            assert len(within) == (r.cell.knobs.budget if r.cell.knobs.budget > 1 else 0)
            assert over == (1 if r.cell.knobs.budget == 1 else 0), r.cell.slug()
        else:
            assert not any(t.errors for t in turns) and over == 0, r.cell.slug()


def test_a_budgeted_cells_line_lists_its_own_channel(perfect: list[EpisodeRecord]) -> None:
    from scoring.results.cells import cell_line

    by_cell: dict[Any, list[EpisodeScore]] = {}
    for r in perfect:
        by_cell.setdefault(r.cell, []).append(score_episode(r))
    for cell, scores in by_cell.items():
        line = cell_line(cell, scores)
        assert ("over_budget" in line.channels) == bool(cell.knobs.budget)
        if cell.knobs.budget:
            assert line.channels["over_budget"] == 0 and line.labels["spent"] == len(scores)
        assert msgspec.json.decode(msgspec.json.encode(line.channels)) == line.channels


def test_the_budget_section_reads_the_perfect_agent_as_its_control(
    perfect: list[EpisodeRecord],
) -> None:
    from scoring.analyses.semantics import budget_lines, budget_parts, budget_section

    pairs = [(r, score_episode(r)) for r in perfect]
    lines = budget_lines(budget_parts(pairs))
    assert len(lines) == len(ARMS) * len(CAPS)
    for x in lines:
        assert x.successes == x.control_successes == x.episodes == 4
        assert (x.only_budget, x.only_control, x.p_value) == (0, 0, 1.0)
        assert x.within == 4 * (x.cap - 1) and x.within_failed == 0
        assert x.beyond == 4 and x.beyond_executed == 0
    text = "\n".join(budget_section(lines))
    assert "## Budgets" in text and "Semantics: budget" in text
