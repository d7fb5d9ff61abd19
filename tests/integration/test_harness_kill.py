"""Kill and resume with tool-harness episodes in flight: ``ladder run`` of a harness grid in
a subprocess, SIGKILLed mid-run after some episodes are logged, resumed with the same
command. The final logs hold every (cell, seed) exactly once and score as an uninterrupted
run; the workspaces of the killed episodes are the only ones left behind (a SIGKILL runs no
clean-up), and the resumed run leaves none of its own."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from runner.grid.expand import parse_grid
from tests.integration.test_reliability_kill import _kill_when, _log_lines, _resume, _start
from tests.reliability_kit import (
    grid_data,
    grid_toml,
    raw_completed_counts,
    records,
    run_inprocess,
    verdicts,
)

SEEDS = "300-305"
CONCURRENCY = 8


def _data() -> dict[str, Any]:
    data = grid_data(
        seeds=SEEDS,
        steps=5,
        arms=[],
        concurrency=CONCURRENCY,
        max_in_flight=CONCURRENCY,
        timeout_s=60.0,
        backoff_s=0.05,
    )
    data["run"]["variants"] = [
        {"arm": "raw", "harness": "langgraph"},
        {"arm": "checklist", "harness": "langgraph"},
        {"arm": "enforce", "harness": "langgraph"},
        {"arm": "enforce", "binding": "request", "harness": "langgraph"},
    ]
    return data


def _workspaces(tmp: Path) -> int:
    return sum(1 for _ in tmp.glob("ladder-ws-*"))


def test_kill_with_harness_episodes_in_flight_then_resume(tmp_path: Path, monkeypatch: Any) -> None:
    wstmp = tmp_path / "tmp"
    wstmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(wstmp))  # the subprocess's workspaces land here
    data = _data()
    reference_out = tmp_path / "reference"
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(wstmp))
    summary, _ = asyncio.run(run_inprocess(parse_grid(data, source="test grid"), reference_out))
    assert summary["infrastructure"] == 0
    assert _workspaces(wstmp) == 0  # an uninterrupted run removes every workspace
    reference = verdicts(records(reference_out))
    assert len(reference) == 24
    grid_file = tmp_path / "grid.toml"
    grid_file.write_text(grid_toml(data))
    out = tmp_path / "run"
    target = len(reference) // 3
    proc = _start(grid_file, out)
    assert _kill_when(proc, lambda: _log_lines(out) >= target), "killed before the end"
    logged = _log_lines(out)
    assert target <= logged < len(reference)
    left = _workspaces(wstmp)
    assert left <= CONCURRENCY  # at most the episodes in flight at the kill
    assert os.environ["TMPDIR"] == str(wstmp)
    done = _resume(grid_file, out)
    assert "resuming" in done.stdout
    assert _workspaces(wstmp) == left  # the resumed run cleaned every workspace it made
    final = records(out)
    assert {k for k, r in final.items() if r.termination == "completed"} == reference.keys()
    counts = raw_completed_counts(out)
    assert all(n == 1 for n in counts.values()), counts
    assert verdicts(final) == reference, "the resumed run scores as an uninterrupted one"
