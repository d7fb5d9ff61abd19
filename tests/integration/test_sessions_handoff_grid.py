"""runner/grids/sessions-handoff.toml (issue #48, a handoff between agents): with its two
synthetic models replaced by two perfect agents every cell scores 1.0 (a complete note read
by the other agent carries the state); with two always-book agents the enforcement gate keeps
each cell at its one-session score, seed for seed and channel for channel. The handed
variants run for the first model alone (a variant's ``models``)."""

from __future__ import annotations

import asyncio
import io
import tomllib
from pathlib import Path

from rich.console import Console

from protocol.records import EpisodeRecord
from runner.execution.grid_run import run_async
from runner.grid.expand import parse_grid
from runner.rundir.records import load_records
from scoring.replay.episode_score import score_episode

GRID = Path(__file__).resolve().parents[2] / "runner" / "grids" / "sessions-handoff.toml"


def _run(tmp: Path, first: str, second: str) -> list[EpisodeRecord]:
    """The shipped grid on seeds 100-101 with its models renamed ``first`` and ``second``."""
    text = GRID.read_text()
    data = tomllib.loads(text)
    old_first, old_second = (m["name"] for m in data["models"])
    names = {old_first: first, old_second: second}
    for m in data["models"]:
        m["name"] = names[m["name"]]
    for v in data["run"]["variants"]:
        if "next_model" in v:
            v["next_model"] = names[v["next_model"]]
            v["models"] = [names[x] for x in v["models"]]
    data["run"]["seeds"] = "100-101"
    asyncio.run(run_async(parse_grid(data), tmp, console=Console(file=io.StringIO()), live=False))
    records, _ = load_records(tmp)
    assert all(r.termination == "completed" for r in records)
    # the first model: 4 arms, 4 with its note, 4 handed; the second: no handed cells
    assert len(records) == 2 * (4 * 3 + 4 * 2)
    assert all(r.cell.model == first for r in records if r.cell.knobs.next_model)
    return records


def test_the_shipped_grid_hands_each_other_session_to_the_second_model() -> None:
    data = tomllib.loads(GRID.read_text())
    first, second = (m["name"] for m in data["models"])
    handed = [v for v in data["run"]["variants"] if v.get("next_model")]
    assert {v["arm"] for v in handed} == set(data["run"]["arms"])
    assert all(v["next_model"] == second and v["sessions"] == 3 for v in handed)
    assert all(v["models"] == [first] for v in handed)  # the second never hands to itself
    assert all(v["handoff"] == "note" for v in data["run"]["variants"])
    assert first != second


def test_two_perfect_agents_score_1_in_every_cell(tmp_path: Path) -> None:
    records = _run(tmp_path, "scripted/perfect", "scripted/perfect?drop_system=0")
    assert any(r.cell.knobs.next_model for r in records)
    for r in records:
        s = score_episode(r)
        assert not s.mismatches
        assert s.primary.success and s.decline_aware.success, (r.cell.slug(), r.spec.seed)


def test_always_book_behind_enforce_keeps_its_score(tmp_path: Path) -> None:
    records = _run(tmp_path, "scripted/always-book", "scripted/always-book?drop_system=0")
    control = {
        (r.cell.model, r.spec.seed): score_episode(r)
        for r in records
        if r.cell.arm == "enforce" and not r.cell.knobs.sessions
    }
    enforce = [r for r in records if r.cell.arm == "enforce" and r.cell.knobs.sessions]
    assert len(enforce) == 2 * 3  # two seeds: the first model twice, the second once
    for r in enforce:
        s, c = score_episode(r), control[(r.cell.model, r.spec.seed)]
        assert (s.primary.success, s.primary.channels) == (c.primary.success, c.primary.channels)
