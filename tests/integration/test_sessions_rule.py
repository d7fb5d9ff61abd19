"""The sessions knob's oracles end to end (issue #48, generator 6), on the embedded scripted
endpoint through the runner and the scorer.

* The perfect agent (the oracle: perfect compliance and perfect memory; it remembers its own
  earlier sessions by the runner's lineage header, docs/semantics.md) scores 1.0, strict and
  decline-aware, in every arm at every K with every handoff.
* The amnesiac perfect agent (``scripted/perfect?memory=0``, or any client that sends no
  lineage header) knows only what it sees: it scores 1.0 wherever the handoff carries what it
  needs (a checklist or a gate shows the state in every session, its own note carries it in
  every arm). Where nothing carries it (the raw transcript with no note, the ledger arm with
  nothing kept) its errors fall only after a restart; the ledger the arm keeps
  (``handoff = "arm"``) carries done-ness and cancellation but not the plan change, so there
  its only errors are prerequisite errors after a restart.
* A sessioned episode has its control's turns and labels; each restart is recorded on the
  first turn of its session, at the boundaries the seed placed, with the note it carried.
* The memoryless always-book policy behind the state-bound enforcement gate keeps its score.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from ladder.app import app
from protocol import generate
from protocol.records import EpisodeRecord
from protocol.rule_strings import HANDOFF_CARRIED
from protocol.stress.budget import cell_episode
from runner.execution.grid_run import run_async
from runner.grid.expand import parse_grid
from runner.rundir.records import load_records
from scoring.analyses.sessions import sessions_lines, sessions_parts, sessions_section
from scoring.replay.episode_score import score_episode
from serve.agents.handoff import NOTE_EMPTY
from tests.rule_kit import control_records, labels, run_rule_grid

ARMS = ["raw", "checklist", "directive", "enforce", "hybrid", "ledger"]
DOSES = (2, 4)
HANDOFFS = ("none", "note", "arm")
SEEDS = "100-102"
# (arm, handoff) where nothing carries the state over a restart (docs/semantics.md)
UNCARRIED = {("raw", "none"), ("raw", "arm"), ("ledger", "none")}
PLAN_LOST = {("ledger", "arm")}  # statuses carried, the revision's rewiring not
AMNESIAC = "scripted/perfect?memory=0"  # the perfect agent without its memory of sessions


def _run(tmp: Path, model: str, arms: list[str]) -> list[EpisodeRecord]:
    variants: list[dict[str, object]] = [
        {"arm": a, "sessions": k, "handoff": h} for a in arms for k in DOSES for h in HANDOFFS
    ]
    return run_rule_grid(tmp, model, arms, variants, SEEDS)


def _first_restart(r: EpisodeRecord) -> int:
    """The record index of the first turn after a restart."""
    return next(i for i, t in enumerate(r.turns) if isinstance(t.session, int))


@pytest.fixture(scope="module")
def perfect(tmp_path_factory: pytest.TempPathFactory) -> list[EpisodeRecord]:
    return _run(tmp_path_factory.mktemp("perfect"), "scripted/perfect", ARMS)


@pytest.fixture(scope="module")
def amnesiac(tmp_path_factory: pytest.TempPathFactory) -> list[EpisodeRecord]:
    return _run(tmp_path_factory.mktemp("amnesiac"), AMNESIAC, ARMS)


def test_the_perfect_agent_scores_1_in_every_cell(perfect: list[EpisodeRecord]) -> None:
    assert len(perfect) == 3 * len(ARMS) * (1 + len(DOSES) * len(HANDOFFS))
    for r in perfect:
        s = score_episode(r)
        assert not s.mismatches, s.mismatches
        assert s.primary.success and s.decline_aware.success, (r.cell.slug(), r.spec.seed)


def test_the_amnesiac_agent_errs_only_after_a_restart_with_nothing_carried(
    amnesiac: list[EpisodeRecord],
) -> None:
    assert len(amnesiac) == 3 * len(ARMS) * (1 + len(DOSES) * len(HANDOFFS))
    bitten = 0
    for r in amnesiac:
        s = score_episode(r)
        assert not s.mismatches, s.mismatches
        knobs = r.cell.knobs
        if (r.cell.arm, knobs.handoff) in UNCARRIED and knobs.sessions:
            after = _first_restart(r)
            wrong = [i for i, t in enumerate(s.primary.turns) if t.errors]
            assert all(i >= after for i in wrong), (r.cell.slug(), wrong, after)
            bitten += bool(wrong)
            continue
        if (r.cell.arm, knobs.handoff) in PLAN_LOST:
            after = _first_restart(r)
            errs = [(i, e.channel) for i, t in enumerate(s.primary.turns) for e in t.errors]
            assert all(i >= after and ch in ("omission", "premature") for i, ch in errs)
            continue
        assert s.primary.success and s.decline_aware.success, (r.cell.slug(), r.spec.seed)
    assert bitten, "a restart with nothing carried never cost the perfect agent a turn"


def test_a_sessioned_episode_has_its_controls_turns_and_labels(
    perfect: list[EpisodeRecord],
) -> None:
    control = control_records(perfect, "sessions")
    for r in perfect:
        if not r.cell.knobs.sessions:
            continue
        c = control[(r.cell.arm, r.spec.seed)]
        assert [t.user_text for t in r.turns] == [t.user_text for t in c.turns]
        assert labels(score_episode(r)) == labels(score_episode(c)), r.cell.slug()


def test_each_restart_is_recorded_at_the_seeds_boundaries(perfect: list[EpisodeRecord]) -> None:
    for r in perfect:
        k, handoff = r.cell.knobs.sessions, r.cell.knobs.handoff
        opened = [t for t in r.turns if isinstance(t.session, int)]
        if not k:
            assert not opened
            continue
        cuts = cell_episode(generate(r.spec), r.cell.knobs).boundaries
        assert len(cuts) == k - 1
        assert [t.index for t in opened] == list(cuts)  # planned indices open the sessions
        assert [t.session for t in opened] == list(range(1, k))
        for t in opened:
            if handoff == "note":
                assert isinstance(t.carried, str) and t.carried
                head = HANDOFF_CARRIED.split("{")[0]
                assert t.sent_text.startswith(head + t.carried)
                assert t.calls[0].role == "agent"  # the note call, before the turn's own
            else:
                assert not isinstance(t.carried, str)


def test_always_book_behind_enforce_keeps_its_score(tmp_path: Path) -> None:
    records = _run(tmp_path, "scripted/always-book", ["enforce"])
    control = control_records(records, "sessions")
    for r in records:
        s, c = score_episode(r), score_episode(control[(r.cell.arm, r.spec.seed)])
        assert s.primary.success == c.primary.success, r.cell.slug()
        assert s.primary.channels == c.primary.channels, r.cell.slug()
        assert labels(s) == labels(c)


def _report_lines(records: list[EpisodeRecord]) -> dict[tuple[str, int, str], Any]:
    pairs = [(r, score_episode(r)) for r in records]
    lines = {(x.cell.arm, x.sessions, x.handoff): x for x in sessions_lines(sessions_parts(pairs))}
    assert set(lines) == {(a, k, h) for a in ARMS for k in DOSES for h in HANDOFFS}
    return lines


def test_the_report_sets_each_handoff_against_its_control(
    perfect: list[EpisodeRecord], amnesiac: list[EpisodeRecord]
) -> None:
    for x in _report_lines(perfect).values():
        assert x.episodes == 3 and x.control_successes == 3 and x.control_after_failed == 0
        assert x.successes == 3 and x.after_failed == 0 and x.after > 0
    lines = _report_lines(amnesiac)
    for (arm, _k, handoff), x in lines.items():
        assert x.episodes == 3 and x.control_successes == 3 and x.control_after_failed == 0
        if (arm, handoff) not in UNCARRIED | PLAN_LOST:
            assert x.successes == 3 and x.after_failed == 0 and x.after > 0
    raw = lines[("raw", 4, "none")]
    assert raw.after_failed > 0 and raw.only_control == 3 - raw.successes
    section = "\n".join(sessions_section(tuple(lines.values())))
    assert "## Sessions" in section and "| raw | 4 | note |" in section


def test_the_synthetic_agent_forgets_without_a_note_and_reads_one(tmp_path: Path) -> None:
    """docs/semantics.md: with nothing carried the synthetic agent rebuilds its state from the
    new transcript alone; its note (each line kept at 1 - note_drop) brings most of it back."""
    records = _run(tmp_path, "scripted/synthetic", ["raw"])
    pairs = [(r, score_episode(r)) for r in records]
    lines = {(x.sessions, x.handoff): x for x in sessions_lines(sessions_parts(pairs))}
    for k in DOSES:
        none, note, arm = (lines[(k, h)] for h in HANDOFFS)
        assert none.after_failed > note.after_failed >= note.control_after_failed
        assert arm.after_failed == none.after_failed  # the raw arm keeps nothing


OTHER = "scripted/perfect?drop_system=0"  # a second perfect agent under another model name


def test_a_handoff_between_agents_of_the_grid(tmp_path: Path) -> None:
    """next_model: the grid's other model runs every other session. A complete note read by
    another perfect agent carries the state in every arm; handed to always-book (which
    notes and reads nothing, and books every request) the episode errs after the restart
    only."""
    arms = ["raw", "checklist", "enforce"]
    grid = {
        "run": {
            "seeds": "100-101",
            "generator": 6,
            "graphs": [{"steps": 10, "density": 0.3}],
            "arms": arms,
            "variants": [
                {"arm": a, "sessions": 2, "handoff": "note", "next_model": m}
                for a in arms
                for m in (OTHER, "scripted/always-book")
            ],
        },
        "models": [{"name": "scripted/perfect"}, {"name": OTHER}, {"name": "scripted/always-book"}],
    }
    asyncio.run(run_async(parse_grid(grid), tmp_path, console=Console(file=io.StringIO()),
                          live=False))  # fmt: skip
    records, _ = load_records(tmp_path)
    mine = [r for r in records if r.cell.model == "scripted/perfect"]
    assert len(mine) == 2 * len(arms) * 3 and all(r.termination == "completed" for r in mine)
    bitten = False
    for r in mine:
        s = score_episode(r)
        if r.cell.knobs.next_model != "scripted/always-book":
            assert s.primary.success and s.decline_aware.success, (r.cell.slug(), r.spec.seed)
            continue
        after = _first_restart(r)
        wrong = [i for i, t in enumerate(s.primary.turns) if t.errors]
        assert all(i >= after for i in wrong)
        bitten |= bool(wrong)
        opened = r.turns[after]
        assert isinstance(opened.carried, str) and opened.carried != NOTE_EMPTY  # perfect's
    assert bitten, "handing the episode to always-book never cost a turn"


@pytest.fixture
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)  # `ladder run` sets its own


def _shipped(tmp: Path, served: str, arms: str) -> list[EpisodeRecord]:
    grid = Path(__file__).resolve().parents[2] / "runner" / "grids" / "sessions.toml"
    out = tmp / "run"
    args = ["run", str(grid), "--seeds", "100-101", "--arms", arms, "--served", served]
    args += ["--base-url", "embedded", "--out", str(out), "--no-live"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    records, _ = load_records(out)
    assert records and all(r.termination == "completed" for r in records)
    return records


@pytest.mark.usefixtures("_default_loop_policy")
def test_the_shipped_grid_keeps_the_oracles_in_every_cell(tmp_path: Path) -> None:
    """runner/grids/sessions.toml (K = 3, S = 15 dense): the perfect agent at 1.0 in every
    cell; always-book behind the enforcement gate at its one-session score, seed for seed and
    channel for channel."""
    perfect = _shipped(tmp_path / "p", "scripted/perfect", "raw,checklist,directive,enforce,ledger")
    assert len({r.cell.slug() for r in perfect}) == 20
    for r in perfect:
        s = score_episode(r)
        assert not s.mismatches
        assert s.primary.success and s.decline_aware.success, (r.cell.slug(), r.spec.seed)
    books = _shipped(tmp_path / "b", "scripted/always-book", "enforce")
    control = control_records(books, "sessions")
    assert len(books) == 2 * 4
    for r in books:
        s, c = score_episode(r), score_episode(control[(r.cell.arm, r.spec.seed)])
        assert (s.primary.success, s.primary.channels) == (c.primary.success, c.primary.channels)
