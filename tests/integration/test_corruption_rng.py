"""The corruption RNG of the corrupted-state ablation (Appendix D.4): one draw
(protocol.stress.corruption) shared by the gate arms and the Table 12 replay.

The arm's stream is pinned by a digest taken on main before the draw moved out of
runner/arms/gates.py (commit 82a1dcf): the same events, the same scores."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import msgspec
import pytest

from protocol.records import CorruptionEvent, EpisodeRecord
from scoring.analyses.corruption_replay import (
    CorruptionLine,
    EventSource,
    corruption_lines,
    redrawn_events,
)
from scoring.replay.episode_score import score_episode
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.offline import score_records

GRID = {
    "run": {
        "seeds": "100-103",
        "generator": 3,  # the digest below was taken on generator 3's episodes
        "graphs": [{"steps": 15, "density": 0.3}],
        "arms": ["directive", "enforce"],
        "variants": [
            {"arm": "enforce", "corruption": 3e-2},
            {"arm": "directive", "corruption": 3e-2},
        ],
    },
    "models": [{"name": "scripted/synthetic?obey=0.9&fresh=0.35&seed=7"}],
}


async def _records(tmp: Path) -> list[EpisodeRecord]:
    from rich.console import Console

    from runner.execution.grid_run import run_async
    from runner.grid.expand import parse_grid
    from runner.rundir.records import load_records

    await run_async(parse_grid(GRID), tmp, console=Console(file=io.StringIO()), live=False)
    records, _ = load_records(tmp)
    return sorted(records, key=lambda r: (r.cell.slug(), r.spec.seed))


def _digest(records: list[EpisodeRecord]) -> str:
    rows = []
    for r in records:
        s = score_episode(r)
        rows.append(
            [
                r.cell.slug(),
                r.spec.seed,
                msgspec.to_builtins(r.corruptions),
                [t.directive for t in r.turns],
                [[b.code for b in t.refused] for t in r.turns],
                s.primary.success,
                s.primary.channels,
            ]
        )
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[EpisodeRecord]:
    import asyncio

    return asyncio.run(_records(tmp_path_factory.mktemp("corrupt")))


def test_the_arm_draws_the_stream_it_drew_before(records: list[EpisodeRecord]) -> None:
    corrupted = [r for r in records if r.cell.knobs.corruption > 0]
    assert len(corrupted) == 8 and all(r.corruptions for r in corrupted)
    # retaken for #46: the synthetic agent's dice now come from the runner's draw key, so its
    # bookings (and the states the corruption draws on) moved on purpose (CHANGELOG)
    assert _digest(records) == "be3fca4c7b6f7e1a5409971009f130998cbac0b13f8d8903031e62d7f1e99fc7"


def _lines(records: list[EpisodeRecord], source: EventSource = "redraw") -> list[CorruptionLine]:
    cache = EpisodeCache()
    scores = score_records(records, cache, detail=True)
    return corruption_lines(zip(records, scores, strict=True), cache, source=source)


def test_the_replay_redraws_the_logged_events(records: list[EpisodeRecord]) -> None:
    corrupted = [r for r in records if r.cell.knobs.corruption > 0]
    for r in corrupted:
        assert redrawn_events(r) == list(r.corruptions), (r.cell.slug(), r.seed)
    assert all(redrawn_events(r) == [] for r in records if r.cell.knobs.corruption == 0)
    lines = _lines(records)
    assert len(lines) == 2 and all(line.rng_mismatches == 0 for line in lines)
    assert sum(sum(line.events.values()) for line in lines) == sum(
        len(r.corruptions) for r in corrupted
    )
    assert all(line.replay_mismatches == 0 for line in lines)
    # on an honest log, re-drawing and reading the logged events give the same table
    assert _lines(records, "logged") == lines


def test_a_tampered_log_shows_rng_mismatches(records: list[EpisodeRecord]) -> None:
    honest = {line.cell.arm: line for line in _lines(records)}
    i = next(i for i, r in enumerate(records) if r.cell.arm == "enforce" and r.corruptions)
    rec = records[i]
    removed = msgspec.structs.replace(rec, corruptions=rec.corruptions[1:])
    lost = rec.corruptions[0]
    # a spurious done bit the RNG never drew, on a step and turn that had none
    steps = {e.step for e in rec.corruptions}
    free = next(s.id for s in rec.compile.graph if s.id not in steps)  # type: ignore[union-attr]
    extra = CorruptionEvent(turn=rec.turns[3].index, step=free, kind="spurious_done")
    added = msgspec.structs.replace(rec, corruptions=(*rec.corruptions, extra))
    for tampered, expect in ((removed, 1), (added, 1)):
        recs = [*records[:i], tampered, *records[i + 1 :]]
        by_arm = {line.cell.arm: line for line in _lines(recs)}
        assert by_arm["enforce"].rng_mismatches == expect
        assert by_arm["directive"] == honest["directive"]
        # the table counts the re-drawn events: the tamper does not move them
        assert by_arm["enforce"].events == honest["enforce"].events
        logged = {line.cell.arm: line for line in _lines(recs, "logged")}
        assert logged["enforce"].rng_mismatches == expect
        delta = sum(logged["enforce"].events.values()) - sum(honest["enforce"].events.values())
        assert delta == (-1 if tampered is removed else 1)
    both = [*records[:i], msgspec.structs.replace(removed, corruptions=(*removed.corruptions, extra)),
            *records[i + 1 :]]  # fmt: skip
    by_arm = {line.cell.arm: line for line in _lines(both)}
    assert by_arm["enforce"].rng_mismatches == 2 and lost != extra


async def test_the_replay_redraws_a_tool_harness_run(tmp_path: Path) -> None:
    """The LangGraph harness tells the gate each executed call at once; the compiled state
    the re-draw rebuilds from the turn records is the same."""
    grid = {
        "run": {
            "seeds": "300-301",
            "graphs": [{"steps": 10, "density": 0.15}],
            "arms": [],
            "variants": [
                {"arm": a, "harness": "langgraph", "corruption": 0.05}
                for a in ("directive", "enforce")
            ],
        },
        "models": [{"name": "scripted/perfect"}],
    }
    from rich.console import Console

    from runner.execution.grid_run import run_async
    from runner.grid.expand import parse_grid
    from runner.rundir.records import load_records

    await run_async(parse_grid(grid), tmp_path, console=Console(file=io.StringIO()), live=False)
    recs, _ = load_records(tmp_path)
    assert len(recs) == 4 and all(r.corruptions for r in recs)
    for r in recs:
        assert redrawn_events(r) == list(r.corruptions), (r.cell.slug(), r.seed)
