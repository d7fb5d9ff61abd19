"""docs/protocol.md's generator figures reproduce (#46): version 3's edge counts, the two
schedules' revision figures (versions 3 and 4) and version 3's ambiguous probes are
recomputed here from the generator (the probes served from a perfect-agent run), and every
row must stand in the doc beside the command the doc gives.

Pure and quick (a few seconds each), but marked slow with the other doc figures:
``python -m pytest -s -p no:xdist -m slow tests/docs/test_protocol_figures.py`` prints the rows.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from protocol import EpisodeSpec, generate
from protocol.episode.stats import schedule_figures
from protocol.state.machine import TaskState
from runner.rundir.records import load_records

DOC = Path(__file__).parents[2] / "docs" / "protocol.md"
SEEDS = range(100, 228)
EDGES = "python -m pytest -s -p no:xdist -m slow tests/docs/test_protocol_figures.py -k edges"
SCHEDULE = "--schedule SCHEDULE --summary --generator 4"


def _doc() -> str:
    return DOC.read_text(encoding="utf-8")


def _missing(rows: list[str]) -> list[str]:
    print("\n".join(rows))  # the figure as the rerun gives it (-s)
    lines = [line.strip() for line in _doc().splitlines()]
    return [r for r in rows if r not in lines]


def edge_rows() -> list[str]:
    """Version 3's edge counts and revision shapes per (S, rho) over seeds 100..227."""
    rows = []
    for rho in (0.15, 0.3):
        for steps in (5, 10, 15, 18):
            eps = [
                generate(EpisodeSpec(seed=s, steps=steps, density=rho, generator=3)) for s in SEEDS
            ]
            edges = [sum(len(x.deps) for x in ep.steps) for ep in eps]
            alone = sum(not any(ep.revision.cancel in x.deps for x in ep.steps) for ep in eps)
            null = sum(ep.revision.relax is None for ep in eps)
            only = sum(ep.revision.relax is None and not ep.revision.rewires for ep in eps)
            n = len(eps)
            rows.append(
                f"| {steps} | {rho} | {round(statistics.mean(edges), 2):g} | {min(edges)} | "
                f"{statistics.median(edges):g} | {max(edges)} | {alone}/{n} | {null}/{n} | "
                f"{only}/{n} |"
            )
    return rows


@pytest.mark.slow
def test_version_3_edge_counts() -> None:
    assert EDGES in " ".join(_doc().split()), "docs/protocol.md lost the edge table's command"
    assert not _missing(edge_rows()), "docs/protocol.md's edge table no longer reproduces"


def schedule_row(steps: int, rho: float, schedule: str) -> str:
    """One row of the schedules table: version 3's and version 4's figures (what
    ``ladder generate --summary`` prints for each)."""
    v3, v4 = (
        schedule_figures(
            generate(
                EpisodeSpec(seed=s, steps=steps, density=rho, generator=g, schedule=schedule)  # type: ignore[arg-type]
            )
            for s in SEEDS
        )
        for g in (3, 4)
    )
    q = " / ".join(f"{x:g}" for x in v4.revision_quartiles)
    return (
        f"| {steps} | {rho} | {schedule} | {v3.revision_mean:g} | {v4.revision_mean:g} | {q} | "
        f"{v4.revision_range[0]}-{v4.revision_range[1]} | {v4.post_revision_asks:g} | "
        f"{v3.no_ask_after} / {v4.no_ask_after} | "
        f"{v3.revised_asked_after} / {v4.revised_asked_after} |"
    )


@pytest.mark.slow
def test_the_two_schedules_figures() -> None:
    assert SCHEDULE in " ".join(_doc().split()), "docs/protocol.md lost the table's command"
    rows = [
        schedule_row(steps, rho, schedule)
        for steps, rho in ((5, 0.15), (10, 0.15), (15, 0.15), (15, 0.3), (18, 0.15))
        for schedule in ("earlier", "regenerated")
    ]
    assert not _missing(rows), "docs/protocol.md's schedule table no longer reproduces"


AMBIGUOUS = "ladder run tests/data/figures/ambiguous-v3.toml"


def eligible_fillers() -> tuple[int, int]:
    """Version 3, amended schedule, S = 15 dense, seeds 100-163: the fillers (and probe
    candidates) with three or more, and two or more, steps eligible under perfect play."""
    three = two = 0
    for seed in range(100, 164):
        spec = EpisodeSpec(seed=seed, steps=15, density=0.3, generator=3, brief="amended")
        ep = generate(spec)
        state = TaskState({s.id: frozenset(s.deps) for s in ep.steps})
        for t in ep.turns:
            if t.kind == "revision":
                state.apply_revision(ep.revision.cancel, ep.revision.rewires, ep.revision.relax)
            elif t.kind in ("ask", "re_ask") and t.step and state.status(t.step) == "todo":
                state.book(t.step)
            elif t.kind in ("filler", "ambiguous"):
                n = len(state.eligible())
                three, two = three + (n >= 3), two + (n >= 2)
    return three, two


@pytest.mark.slow
@pytest.mark.process
def test_version_3s_ambiguous_probes(tmp_path: Path) -> None:
    three, two = eligible_fillers()
    cmd = [sys.executable, "-m", "ladder", "run", *AMBIGUOUS.split()[2:]]
    subprocess.run([*cmd, "--out", str(tmp_path), "--no-live"], check=True, capture_output=True)
    records, _ = load_records(tmp_path)
    served = sum(t.kind == "ambiguous" for r in records for t in r.turns)
    sentence = (
        f"under perfect play {three:,} of the fillers of those 64 episodes have three or more "
        f"steps eligible ({three * 0.15:g} probes expected at 0.15; {served} served with our "
        f"streams), {two:,} have two or more ({two * 0.15:g} expected)"
    )
    print(sentence)
    doc = " ".join(_doc().split())
    assert AMBIGUOUS in doc, "docs/protocol.md lost the probes' command"
    assert sentence in doc, f"docs/protocol.md no longer reproduces; the rerun says: {sentence}"
