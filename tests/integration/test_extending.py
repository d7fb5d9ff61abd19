"""docs/extending.md's recipes, followed by tests.

A new arm is one session class plus one row of the arm table naming it (both here, in the
test, and nowhere else): it runs end to end on the embedded scripted endpoint, is scored, and its
requests rebuild from the log. A new table is one Analysis plus one entry of
``scoring.analyses.registry.ANALYSES``, a new figure one PaperFigure plus one entry of
``scoring.report.paper_figures.FIGURES``: both join ``ladder report``, which is otherwise unchanged."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec
import pytest
from rich.console import Console

import protocol.arms.table
from protocol.arms.table import ARMS, ArmSpec
from protocol.config import config_label
from protocol.episode.generate import generate
from protocol.probe.history import rebuild_messages
from protocol.records import CellKey, Turn
from protocol.state.machine import TaskState
from runner.arms import ArmSession, registry
from runner.execution.grid_run import run_async
from runner.grid.expand import parse_grid
from runner.rundir.logs import LogReport, read_logs
from runner.rundir.report import write_report
from runner.rundir.rescore import rescore_dir
from scoring.analyses.base import Analysis, Pair, by_cell, markdown_section
from scoring.analyses.corruption_replay import CorruptionLine
from scoring.analyses.registry import ANALYSES
from scoring.replay.ground_truth import EpisodeCache
from scoring.report.figures import Drawn, Point
from scoring.report.paper_figures import FIGURES, PaperFigure
from scoring.results.lines import CellLine

# OURS: the toy arm's whole contribution, a reminder of how many steps remain.
TOY_LINE = "Reminder: {n} steps remain."


class ReminderArm(ArmSession):
    """A toy arm: the number of steps not yet done after each user turn."""

    def addition(self, turn: Turn, state: TaskState) -> str:
        left = sum(1 for v in state.deps if state.status(v) not in ("done", "cancelled"))
        return TOY_LINE.format(n=left)


@pytest.fixture
def toy_arm() -> Iterator[str]:
    """The recipe: the session class and one row naming it (undone after the test)."""
    ARMS.add("reminder", ArmSpec(name="reminder", session=ReminderArm))
    try:
        yield "reminder"
    finally:
        ARMS.remove("reminder")


def _grid(arms: list[str]) -> dict[str, object]:
    return {
        "run": {"seeds": "100-102", "graphs": [{"steps": 5, "density": 0.3}], "arms": arms},
        "endpoints": [{"name": "embedded", "base_url": "embedded", "max_in_flight": 16}],
        "models": [
            {"name": "scripted/synthetic?obey=0.9&fresh=0.35&seed=7", "endpoint": "embedded"}
        ],
    }


def test_a_toy_arm_runs_end_to_end_and_is_scored(toy_arm: str, tmp_path: Path) -> None:
    grid = parse_grid(_grid(["raw", toy_arm]))
    asyncio.run(run_async(grid, tmp_path, console=Console(file=io.StringIO()), live=False))
    records = read_logs(tmp_path)
    mine = [r for r in records.values() if r.cell.arm == toy_arm]
    assert sorted(r.spec.seed for r in mine) == [100, 101, 102]
    assert all(r.termination == "completed" for r in mine)
    turn = mine[0].turns[0]
    assert turn.arm_text.startswith("Reminder: ") and turn.sent_text.endswith(turn.arm_text)
    # the probe's rebuild reads the toy's prompt policy (the text arms') from the table
    for r in mine:
        episode = generate(r.spec)
        for pos, t in enumerate(r.turns):
            messages = rebuild_messages(r, episode, pos)
            assert messages[0]["content"] == episode.brief
            assert messages[-1]["content"] == t.sent_text
            assert len(messages) == 2 * pos + 2
    lines, scored = rescore_dir(tmp_path, LogReport(), jobs=1)
    assert scored == 6
    cells = {line.cell.arm: line for line in lines if isinstance(line, CellLine)}
    assert cells[toy_arm].n == 3 and cells[toy_arm].seeds == (100, 101, 102)
    assert cells[toy_arm].channels.keys() == cells["raw"].channels.keys()


def test_without_its_row_the_toy_arm_is_refused() -> None:
    with pytest.raises(ValueError, match="not in the arm table"):
        registry.get("reminder")
    with pytest.raises(Exception, match="unknown arm 'reminder'"):
        parse_grid(_grid(["reminder"]))


def test_the_toy_arm_row_is_seen_by_the_tables_readers(toy_arm: str) -> None:
    from protocol.arms.policy import policy

    assert protocol.arms.table.arm_spec(toy_arm) == ArmSpec(name=toy_arm, session=ReminderArm)
    assert protocol.arms.table.arm_rank(toy_arm) == (len(ARMS) - 1, "")
    cell = CellKey(model="m", steps=5, density=0.3, arm=toy_arm)
    assert policy(cell) == policy(msgspec.structs.replace(cell, arm="raw"))
    assert registry.get(toy_arm) is ReminderArm


# --- a new table: one Analysis (one file) plus one registration in scoring.analyses.registry.ANALYSES -------


class TurnsLine(msgspec.Struct, frozen=True, kw_only=True, tag="turns"):
    """The toy table's line: episodes and turns played per cell."""

    cell: CellKey
    episodes: int
    turns: int


def _turns(batch: Sequence[Pair], cache: EpisodeCache) -> list[TurnsLine]:
    by_cell: dict[CellKey, list[int]] = {}
    for record, _ in batch:
        by_cell.setdefault(record.cell, []).append(len(record.turns))
    return [TurnsLine(cell=c, episodes=len(n), turns=sum(n)) for c, n in by_cell.items()]


def _turns_markdown(lines: tuple[TurnsLine, ...]) -> list[str]:
    rows = [[x.cell.arm, config_label(x.cell), str(x.episodes), str(x.turns)] for x in lines]
    return markdown_section(
        "Turns per cell (toy)", "Turns played.", ["arm", "configuration", "episodes", "turns"], rows
    )


TURNS: Analysis[TurnsLine, TurnsLine] = Analysis(
    name="turns", table="none (a toy)", compute=_turns, finish=by_cell, markdown=_turns_markdown
)


def _arms_drawn(cells: Sequence[CellLine], corruption: Sequence[CorruptionLine]) -> Drawn | None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3.0, 2.0))
    fig.add_subplot().bar([c.cell.arm for c in cells], [c.n for c in cells])
    return fig, [Point(series="n", x=c.cell.arm, y=c.n, lo=c.n, hi=c.n, n=c.n) for c in cells]


def test_a_toy_table_and_figure_join_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    grid = parse_grid(_grid(["raw", "checklist"]))
    asyncio.run(run_async(grid, run, console=Console(file=io.StringIO()), live=False))
    before = write_report(run, tmp_path / "before" / "report.md", figures=True).read_text()
    ANALYSES.add(TURNS.name, TURNS)
    FIGURES.add("arms", PaperFigure(name="arms", caption="Toy: episodes per arm", draw=_arms_drawn))
    try:
        after = write_report(run, tmp_path / "after" / "report.md", figures=True).read_text()
    finally:
        ANALYSES.remove(TURNS.name)
        FIGURES.remove("arms")
    section = "\n## Turns per cell (toy)\n\nTurns played.\n\n| arm | cfg | episodes |"
    assert section in after and section not in before
    # the configurations are listed first (#40); the figures follow the sections
    toy = after[after.index("\n## Turns per cell") : after.index("\n## Figures")]
    figure = "![Toy: episodes per arm](report-arms.png)\n"
    assert figure in after and after.replace(toy, "").replace(figure, "") == before
    data = json.loads((tmp_path / "after" / "report-analyses.json").read_text())
    assert list(data)[-1] == "turns"
    assert {(x["cell"]["arm"], x["episodes"]) for x in data["turns"]} == {
        ("raw", 3),
        ("checklist", 3),
    }
    figures = json.loads((tmp_path / "after" / "report-figures.json").read_text())
    assert [(p["x"], p["n"]) for p in figures["arms"]["points"]] == [("raw", 3), ("checklist", 3)]
    assert (tmp_path / "after" / "report-arms.png").stat().st_size > 0
    assert "arms" not in json.loads((tmp_path / "before" / "report-figures.json").read_text())
