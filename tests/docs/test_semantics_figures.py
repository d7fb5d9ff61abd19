"""docs/semantics.md's figures reproduce (#48): each table of what the synthetic agent shows
for a rule beyond one-shot state (budget, expiry, exclusive steps) is rerun here with the
command the doc prints above it, and every row the rerun gives must stand in the doc.

A change that moves a figure on purpose fails its test: rerun the doc's command (or this test
with ``-s``, which prints the rows) and paste the new rows into the doc. The grids take minutes
each, so the tests are marked ``slow`` (``pytest -m slow tests/docs/test_semantics_figures.py``).
:func:`rows` reads a finished run directory too (``python -c`` on the doc's ``--out``).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from protocol.records import EpisodeRecord
from runner.rundir.records import load_records
from scoring.analyses.semantics import (
    BudgetLine,
    BudgetPart,
    budget_lines,
    budget_parts,
    exclusive_lines,
    exclusive_parts,
    expiry_lines,
    expiry_parts,
)
from scoring.analyses.sessions import sessions_lines, sessions_parts
from scoring.replay.episode_score import score_episode

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "semantics.md"
ARMS = ("raw", "checklist", "ledger", "directive", "enforce")
SEEDS = "--seeds 100-131"


def _command(knob: str) -> str:
    return (
        f"ladder run runner/grids/{knob}.toml --served scripted/synthetic --base-url embedded "
        f"{SEEDS}"
    )


def _lines(knob: str, records: Sequence[EpisodeRecord]) -> tuple[BudgetLine, ...]:
    pairs = [(r, score_episode(r)) for r in records]
    parts: dict[
        str, tuple[Callable[..., list[BudgetPart]], Callable[..., tuple[BudgetLine, ...]]]
    ] = {
        "budget": (budget_parts, budget_lines),
        "expiry": (expiry_parts, expiry_lines),
        "exclusive": (exclusive_parts, exclusive_lines),
    }
    compute, finish = parts[knob]
    return finish(compute(pairs))


def _ratio(lines: Sequence[BudgetLine], failed: str, total: str) -> str:
    return f"{sum(getattr(x, failed) for x in lines)}/{sum(getattr(x, total) for x in lines)}"


def rows(knob: str, records: Sequence[EpisodeRecord]) -> list[str]:
    """The doc's table rows for ``knob`` from ``records`` (one Markdown row per arm)."""
    lines = _lines(knob, records)
    out: list[str] = []
    for arm in ARMS:
        mine = sorted((x for x in lines if x.cell.arm == arm), key=lambda x: x.cap)
        control = f"{mine[0].control_successes}/{mine[0].episodes}"
        if knob == "budget":
            strict = " / ".join(str(x.successes) for x in mine)
            within = _ratio([x for x in mine if x.cap > 1], "within_failed", "within")
            cells = [strict, within, _ratio(mine, "beyond_executed", "beyond")]
        elif knob == "expiry":
            mine.reverse()  # the doc reads T = 12 / 6
            strict = " / ".join(str(x.successes) for x in mine)
            valid = ", ".join(_ratio([x], "within_failed", "within") for x in mine)
            lapsed = ", ".join(_ratio([x], "beyond_executed", "beyond") for x in mine)
            cells = [strict, valid, lapsed]
        else:
            strict = " / ".join(str(x.successes) for x in mine)
            booked = ", ".join(_ratio([x], "beyond_executed", "beyond") for x in mine)
            cells = [strict, booked]
        out.append("| " + " | ".join([arm, control, *cells]) + " |")
    return out


def read_rows(knob: str, run_dir: str) -> None:
    """Print the rows of a finished run (the doc's ``--out`` directory)."""
    records, _ = load_records(Path(run_dir))
    print("\n".join(rows(knob, records)))


def _run(command: str, out: Path) -> list[EpisodeRecord]:
    args = shlex.split(command)
    cmd = [sys.executable, "-m", "ladder", "run", *args[2:], "--out", str(out), "--no-live"]
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, timeout=3000)
    records, _ = load_records(out)
    return records


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.parametrize("knob", ["budget", "expiry", "exclusive"])
def test_the_synthetic_agents_rule_tables_reproduce(knob: str, tmp_path: Path) -> None:
    doc = DOC.read_text(encoding="utf-8")
    command = _command(knob)
    assert " ".join(command.split()) in " ".join(doc.replace("\\\n", " ").split()), command
    got = rows(knob, _run(command, tmp_path))
    print("\n".join(got))  # the figure as the rerun prints it (-s)
    missing = [row for row in got if row not in doc.splitlines()]
    assert not missing, f"docs/semantics.md no longer reproduces; the rerun says: {missing}"


HANDOFF_COMMAND = "ladder run runner/grids/sessions-handoff.toml --out runs/sessions-handoff"
HANDOFF_ARMS = ("raw", "checklist", "ledger", "enforce")


def handoff_rows(records: Sequence[EpisodeRecord]) -> list[str]:
    """The doc's rows for a handoff between agents (the first model's cells): per arm the
    control, one agent with its note, every other session the second model's."""
    pairs = [(r, score_episode(r)) for r in records]
    handed = {r.cell.knobs.next_model for r in records}
    first = next(r.cell.model for r in records if r.cell.model not in handed)
    lines = [x for x in sessions_lines(sessions_parts(pairs)) if x.cell.model == first]
    out: list[str] = []
    for arm in HANDOFF_ARMS:
        one = next(x for x in lines if x.cell.arm == arm and not x.cell.knobs.next_model)
        two = next(x for x in lines if x.cell.arm == arm and x.cell.knobs.next_model)
        cells = [f"{x.successes}/{x.episodes} ({x.after_failed}/{x.after})" for x in (one, two)]
        out.append(
            f"| {arm} | {one.control_successes}/{one.episodes} | " + " | ".join(cells) + " |"
        )
    return out


@pytest.mark.slow
@pytest.mark.process
def test_the_handoff_between_agents_table_reproduces(tmp_path: Path) -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert HANDOFF_COMMAND in doc
    command = HANDOFF_COMMAND.split(" --out")[0]
    got = handoff_rows(_run(command, tmp_path))
    print("\n".join(got))
    missing = [row for row in got if row not in doc.splitlines()]
    assert not missing, f"docs/semantics.md no longer reproduces; the rerun says: {missing}"


HARNESS_COMMAND = "ladder run runner/grids/sessions-harness.toml --out runs/sessions-harness"
HARNESS_ARMS = ("raw", "checklist", "directive", "enforce")


def harness_rows(records: Sequence[EpisodeRecord]) -> list[str]:
    """The doc's rows for sessions on the tool harness: per arm the control, then K = 3 with
    nothing carried and with the note (strict successes, and the turns after a restart with
    an error)."""
    pairs = [(r, score_episode(r)) for r in records]
    lines = sessions_lines(sessions_parts(pairs))
    out: list[str] = []
    for arm in HARNESS_ARMS:
        mine = {x.handoff: x for x in lines if x.cell.arm == arm}
        none, note = mine["none"], mine["note"]
        cells = [f"{x.successes}/{x.episodes} ({x.after_failed}/{x.after})" for x in (none, note)]
        out.append(
            f"| {arm} | {none.control_successes}/{none.episodes} | " + " | ".join(cells) + " |"
        )
    return out


@pytest.mark.slow
@pytest.mark.process
def test_the_sessions_table_on_the_harness_reproduces(tmp_path: Path) -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert HARNESS_COMMAND in doc
    got = harness_rows(_run(HARNESS_COMMAND.split(" --out")[0], tmp_path))
    print("\n".join(got))
    missing = [row for row in got if row not in doc.splitlines()]
    assert not missing, f"docs/semantics.md no longer reproduces; the rerun says: {missing}"
