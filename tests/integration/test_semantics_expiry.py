"""The expiry knob's oracles end to end (issue #48, generator 6), on the embedded scripted
endpoint through the runner and the scorer: the perfect agent scores 1.0, strict and
decline-aware, in every arm at every validity; always-book behind the state-bound
enforcement gate keeps its score (the gate refuses the request while the run is valid and
admits the one after the lapse); an episode with an expiring step has its control's length
and, off its two turns, its control's labels; the synthetic agent's lapse errors land on the
lapsed request."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.records import EpisodeRecord
from scoring.replay.episode_score import score_episode
from tests.rule_kit import control_records, labels, run_rule_grid

ARMS = ["raw", "checklist", "directive", "enforce", "hybrid", "ledger"]
TURNS = (4, 10)
SEEDS = "100-103"


def _run(tmp: Path, model: str, arms: list[str], seeds: str = SEEDS) -> list[EpisodeRecord]:
    return run_rule_grid(
        tmp, model, arms, [{"arm": a, "expiry": t} for a in arms for t in TURNS], seeds
    )


@pytest.fixture(scope="module")
def perfect(tmp_path_factory: pytest.TempPathFactory) -> list[EpisodeRecord]:
    return _run(tmp_path_factory.mktemp("perfect"), "scripted/perfect", ARMS)


def test_the_perfect_agent_scores_1_in_every_arm_at_every_validity(
    perfect: list[EpisodeRecord],
) -> None:
    assert len(perfect) == 4 * len(ARMS) * (1 + len(TURNS))
    for r in perfect:
        s = score_episode(r)
        assert s.primary.success and s.decline_aware.success and not s.mismatches, r.cell.slug()
        if r.cell.knobs.expiry:
            placed = [t.label for t in s.primary.turns if t.kind == "expiry_repeat"]
            assert placed == ["done", "lapsed"], r.cell.slug()


def test_expiring_episodes_keep_their_controls_length_and_labels(
    perfect: list[EpisodeRecord],
) -> None:
    controls = control_records(perfect, "expiry")
    for r in perfect:
        if not r.cell.knobs.expiry:
            continue
        base = controls[(r.cell.arm, r.spec.seed)]
        stressed = {i for i, t in enumerate(r.turns) if t.kind == "expiry_repeat"}
        assert len(r.turns) == len(base.turns) == 44 and len(stressed) == 2
        a, b = labels(score_episode(r)), labels(score_episode(base))
        assert [x for i, x in enumerate(a) if i not in stressed] == [
            x for i, x in enumerate(b) if i not in stressed
        ]


def test_always_book_behind_enforce_keeps_its_score(tmp_path: Path) -> None:
    records = _run(tmp_path, "scripted/always-book", ["enforce"])
    for r in records:
        s = score_episode(r)
        assert s.primary.success and s.decline_aware.success, r.cell.slug()
        if r.cell.knobs.expiry:
            first, second = [t for t in r.turns if t.kind == "expiry_repeat"]
            assert first.refused and not first.admitted  # the run is valid: a redo probe
            assert second.admitted and not second.refused  # lapsed: run it again


def test_the_synthetic_agent_misses_the_lapse_in_raw_not_behind_a_directive(
    tmp_path: Path,
) -> None:
    model = "scripted/synthetic?lapse=1&obey=1&omit=0&fresh=0&premature=0&superseded=0&cite=0"
    records = _run(tmp_path, model, ["raw", "directive"], seeds="100-101")
    for r in records:
        if not r.cell.knobs.expiry:
            continue
        s = score_episode(r)
        lapsed = [t for t in s.primary.turns if t.kind == "expiry_repeat" and t.label == "lapsed"]
        channels = [[e.channel for e in t.errors] for t in lapsed]
        want = [["lapse_missed"]] if r.cell.arm == "raw" else [[]]
        assert channels == want, r.cell.slug()


def test_the_expiry_section_reads_the_perfect_agent_as_itscontrols(
    perfect: list[EpisodeRecord],
) -> None:
    from scoring.analyses.semantics import expiry_lines, expiry_parts, expiry_section

    lines = expiry_lines(expiry_parts([(r, score_episode(r)) for r in perfect]))
    assert len(lines) == len(ARMS) * len(TURNS)
    for x in lines:
        assert x.successes == x.control_successes == x.episodes == 4
        assert (x.within, x.within_failed, x.beyond, x.beyond_executed) == (4, 0, 4, 0)
    assert "## Expiry" in "\n".join(expiry_section(lines))
