"""docs/extending.md's recipes, followed by tests: a new arm is one session class plus one
row of the arm table (registered here, in the test, and nowhere else), and it runs end to end
on the embedded scripted endpoint, is scored, and its requests rebuild from the log."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from rich.console import Console

import protocol.arms
from cli.run import run_async
from protocol.arms import ARM_TABLE, ArmSpec
from protocol.generate import generate
from protocol.probe_history import rebuild_messages
from protocol.records import Turn
from protocol.state import TaskState
from runner.arms import ArmSession, registry
from runner.grid import parse_grid
from runner.logs import LogReport, read_logs
from runner.rescore import rescore_dir
from scoring.lines import CellLine

# OURS: the toy arm's whole contribution, a reminder of how many steps remain.
TOY_LINE = "Reminder: {n} steps remain."


class ReminderArm(ArmSession):
    """A toy arm: the number of steps not yet done after each user turn."""

    def addition(self, turn: Turn, state: TaskState) -> str:
        left = sum(1 for v in state.deps if state.status(v) not in ("done", "cancelled"))
        return TOY_LINE.format(n=left)


@pytest.fixture
def toy_arm(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The recipe: one row in the arm table, one registration (undone after the test)."""
    monkeypatch.setattr(protocol.arms, "ARM_TABLE", (*ARM_TABLE, ArmSpec(name="reminder")))
    monkeypatch.setattr(registry, "_CLASSES", dict(registry._CLASSES))
    registry.register("reminder")(ReminderArm)
    yield "reminder"


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
        registry.register("reminder")(ReminderArm)
    with pytest.raises(Exception, match="unknown arm 'reminder'"):
        parse_grid(_grid(["reminder"]))


def test_the_toy_arm_row_is_seen_by_the_tables_readers(toy_arm: str) -> None:
    from protocol.policy import policy
    from protocol.records import CellKey

    assert protocol.arms.arm_spec(toy_arm) == ArmSpec(name=toy_arm)
    assert protocol.arms.arm_rank(toy_arm) == (len(ARM_TABLE), "")
    cell = CellKey(model="m", steps=5, density=0.3, arm=toy_arm)
    assert policy(cell) == policy(msgspec.structs.replace(cell, arm="raw"))
    assert registry.get(toy_arm) is ReminderArm
