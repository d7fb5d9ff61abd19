"""The live lines show a cell's replies cut at their token budget (finish_reason length,
#49) when any was: the streamed cell line gets a line of its own under it (within 80
columns, marked past :data:`CUT_WARN_SHARE`), the cells under way their count. The cuts are
real: the embedded scripted endpoint cuts a reply at the request's ``max_tokens``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from runner.execution.scheduler import Progress
from scoring.analyses.truncation import cut_line


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def _run(out: Path, *extra: str) -> list[str]:
    args = ["run", "--model", "scripted/perfect", "--arms", "raw,enforce", "--steps", "5"]
    args += ["--seeds", "100-101", "--out", str(out), "--no-live", *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def test_a_run_with_cut_replies_shows_them_per_cell(tmp_path: Path) -> None:
    lines = _run(tmp_path / "cut", "--max-tokens", "8")
    cut = [x for x in lines if x.startswith("    cut at budget: ")]
    assert len(cut) == 2, lines  # one under each cell's line (raw, enforce)
    wide = [x for x in lines if len(x.replace(str(tmp_path), "")) > 80]  # paths not counted
    assert not wide, wide
    assert all("agent " in x and x.endswith("(over 5%)") for x in cut), cut
    above = [lines[lines.index(x) - 1] for x in cut]
    assert all(x.startswith("#1 ") for x in above), above  # under the cell it counts


def test_a_run_without_cuts_says_nothing_of_them(tmp_path: Path) -> None:
    assert not [x for x in _run(tmp_path / "plain") if "cut at budget" in x]


def test_the_cut_line_names_each_role_cut_and_marks_a_share_over_the_threshold() -> None:
    assert cut_line({"agent": (0, 40), "matcher": (0, 20)}) == ""
    assert cut_line({"agent": (1, 40), "matcher": (0, 20)}) == "cut at budget: agent 1/40"
    assert cut_line({"agent": (3, 40), "matcher": (1, 20), "compiler": (0, 2)}) == (
        "cut at budget: agent 3/40, matcher 1/20 (over 5%)"
    )


def test_the_cells_under_way_count_their_cut_replies() -> None:
    p = Progress(cell_total={"a": 4, "b": 4}, cell_label={"a": "raw S=5", "b": "enforce S=5"})
    p.per_cell = {"a": 1, "b": 2}
    p.cut = {"b": 7}
    assert p.open_cells() == "raw S=5 1/4  enforce S=5 2/4 cut 7"
