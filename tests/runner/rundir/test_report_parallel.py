"""``ladder report`` on ``ladder score``'s worker processes, its plots drawn in two
processes, writes exactly the serial report: the same Markdown, analyses JSON, figures JSON
and plots, byte for byte (#50)."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import runner.rundir.rescore as rescore_mod
from runner.execution.grid_run import run_async
from runner.grid.expand import parse_grid
from runner.rundir import report as report_mod
from runner.rundir.logs import LogReport
from runner.rundir.rescore import scored_dir
from scoring.analyses.registry import scored_once


def _grid() -> dict[str, Any]:
    return {
        "run": {
            "seeds": "100-103",
            "graphs": [{"steps": 10, "density": 0.3}, {"steps": 6, "density": 0.15}],
            "arms": ["raw", "directive", "enforce"],
            "variants": [{"arm": "enforce", "corruption": 3e-2}],
        },
        "models": [{"name": "scripted/synthetic?obey=0.8&fresh=0.35&seed=5"}],
    }


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    asyncio.run(
        run_async(parse_grid(_grid()), out, console=Console(file=io.StringIO()), live=False)
    )
    assert len(list((out / "logs").glob("*.jsonl"))) == 8
    return out


def _report(
    run_dir: Path, out: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, min_bytes: int
) -> dict[str, bytes]:
    monkeypatch.setattr(report_mod, "scored_dir", partial(scored_dir, min_bytes=min_bytes))
    path = report_mod.write_report(run_dir, out / "report.md", jobs=jobs, figures=True)
    assert path == out / "report.md"
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_the_parallel_report_is_the_serial_report_byte_for_byte(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial_calls: list[int] = []
    once = scored_once

    def spy(*a: Any, **k: Any) -> Any:
        serial_calls.append(1)
        return once(*a, **k)

    monkeypatch.setattr(rescore_mod, "scored_once", spy)
    serial = _report(run_dir, tmp_path / "serial", monkeypatch, jobs=1, min_bytes=sys.maxsize)
    assert serial_calls == [1]
    parallel = _report(run_dir, tmp_path / "parallel", monkeypatch, jobs=2, min_bytes=0)
    assert serial_calls == [1]  # the workers scored it: no serial pass
    # one process, the workers' groups one at a time in it (#50)
    grouped = _report(run_dir, tmp_path / "grouped", monkeypatch, jobs=1, min_bytes=0)
    assert serial_calls == [1]
    assert list(parallel) == list(serial) == list(grouped)
    assert "report-figure5a.png" in serial and "report-channels.png" in serial
    for name, data in serial.items():
        assert parallel[name] == data, name
        assert grouped[name] == data, name
    # the comparison reads real analyses: the gates' obedience, the corruption replay
    analyses = json.loads(serial["report-analyses.json"])
    assert analyses["obedience"] and analyses["corruption"] and analyses["wording"]


def test_the_workers_keep_the_serial_order_and_counts(run_dir: Path) -> None:
    one, two = LogReport(), LogReport()
    a, n = scored_dir(run_dir, one, jobs=1)
    b, m = scored_dir(run_dir, two, jobs=2, min_bytes=0)
    assert n == m == 32
    assert b.lines == a.lines
    assert b.analyses.json() == a.analyses.json()
    assert list(b.cuts.items()) == list(a.cuts.items())
    assert (two.files, two.records, two.duplicates) == (one.files, one.records, one.duplicates)
