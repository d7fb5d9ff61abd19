"""The exclusive knob's oracles end to end (issue #48, generator 6), on the embedded scripted
endpoint through the runner and the scorer: the perfect agent scores 1.0, strict and
decline-aware, in every arm at every dose; always-book behind the state-bound enforcement
gate keeps its score (the gate refuses every request of the closed alternative); an episode
with an exclusive pair has its control's length and, off its placed turns, its control's
labels; the synthetic agent's closed-step errors land on the placed turns."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.records import EpisodeRecord
from scoring.replay.episode_score import score_episode
from tests.rule_kit import control_records, labels, run_rule_grid

ARMS = ["raw", "checklist", "directive", "enforce", "hybrid", "ledger"]
DOSES = (1, 4)
SEEDS = "100-103"


def _run(tmp: Path, model: str, arms: list[str], seeds: str = SEEDS) -> list[EpisodeRecord]:
    return run_rule_grid(
        tmp, model, arms, [{"arm": a, "exclusive": k} for a in arms for k in DOSES], seeds
    )


@pytest.fixture(scope="module")
def perfect(tmp_path_factory: pytest.TempPathFactory) -> list[EpisodeRecord]:
    return _run(tmp_path_factory.mktemp("perfect"), "scripted/perfect", ARMS)


def test_the_perfect_agent_scores_1_in_every_arm_at_every_dose(
    perfect: list[EpisodeRecord],
) -> None:
    assert len(perfect) == 4 * len(ARMS) * (1 + len(DOSES))
    for r in perfect:
        s = score_episode(r)
        assert s.primary.success and s.decline_aware.success and not s.mismatches, r.cell.slug()
        if r.cell.knobs.exclusive:
            placed = [t.label for t in s.primary.turns if t.kind == "exclusive_ask"]
            assert placed == ["closed"] * r.cell.knobs.exclusive, r.cell.slug()


def test_exclusive_episodes_keep_their_controls_length_and_labels(
    perfect: list[EpisodeRecord],
) -> None:
    controls = control_records(perfect, "exclusive")
    for r in perfect:
        if not r.cell.knobs.exclusive:
            continue
        base = controls[(r.cell.arm, r.spec.seed)]
        stressed = {i for i, t in enumerate(r.turns) if t.kind == "exclusive_ask"}
        assert len(r.turns) == len(base.turns) == 44
        assert len(stressed) == r.cell.knobs.exclusive
        a, b = labels(score_episode(r)), labels(score_episode(base))
        assert [x for i, x in enumerate(a) if i not in stressed] == [
            x for i, x in enumerate(b) if i not in stressed
        ]


def test_always_book_behind_enforce_keeps_its_score(tmp_path: Path) -> None:
    records = _run(tmp_path, "scripted/always-book", ["enforce"])
    controls = control_records(records, "exclusive")
    for r in records:
        s = score_episode(r)
        base = score_episode(controls[(r.cell.arm, r.spec.seed)])
        assert s.primary.success == base.primary.success, r.cell.slug()
        assert s.decline_aware.success == base.decline_aware.success, r.cell.slug()
        for t in r.turns:
            if t.kind == "exclusive_ask":
                assert t.refused and not t.admitted  # the closed alternative: refused


def test_the_synthetic_agent_books_the_closed_step_in_raw_not_behind_a_directive(
    tmp_path: Path,
) -> None:
    model = "scripted/synthetic?closed=1&obey=1&omit=0&fresh=0&premature=0&superseded=0&cite=0"
    records = _run(tmp_path, model, ["raw", "directive"], seeds="100-101")
    for r in records:
        if not r.cell.knobs.exclusive:
            continue
        s = score_episode(r)
        placed = [t for t in s.primary.turns if t.kind == "exclusive_ask"]
        channels = [[e.channel for e in t.errors] for t in placed]
        want = [["exclusive_closed"] if r.cell.arm == "raw" else []] * len(placed)
        assert channels == want, r.cell.slug()


def test_the_exclusive_section_reads_the_perfect_agent_as_itscontrols(
    perfect: list[EpisodeRecord],
) -> None:
    from scoring.analyses.semantics import exclusive_lines, exclusive_parts, exclusive_section

    lines = exclusive_lines(exclusive_parts([(r, score_episode(r)) for r in perfect]))
    assert len(lines) == len(ARMS) * len(DOSES)
    for x in lines:
        assert x.successes == x.control_successes == x.episodes == 4
        assert (x.within_failed, x.beyond, x.beyond_executed) == (0, 4 * x.cap, 0)
    assert "## Exclusive steps" in "\n".join(exclusive_section(lines))
