"""``ladder report``'s workers leave out the stress-only analyses' parts of a configuration
with no stressed cell (#50): the report is still the serial one byte for byte, and a
stressed cell elsewhere that would read the parts left out sends the run to the serial
path."""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import pytest

import runner.rundir.rescore as rescore_mod
import runner.rundir.rescore_part as part_mod
from protocol.records import CellKey, Knobs
from runner.rundir import report as report_mod
from runner.rundir.logs import LogReport
from runner.rundir.rescore import scored_dir
from scoring.analyses.registry import STRESS_ONLY, scored_once, stress_free
from tests.stress_run_kit import styled_and_plain_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One configuration with user-style cells (stressed), one with none (plain)."""
    styled = [
        {"arm": a, "user_style": s}
        for a in ("raw", "enforce")
        for s in ("restate", "restate_plain")
    ]
    out = styled_and_plain_run(tmp_path_factory, styled)
    assert len(list((out / "logs").glob("*.jsonl"))) == 8
    return out


def _report(
    run_dir: Path, out: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, min_bytes: int = 0
) -> dict[str, bytes]:
    monkeypatch.setattr(report_mod, "scored_dir", partial(scored_dir, min_bytes=min_bytes))
    report_mod.write_report(run_dir, out / "report.md", jobs=jobs)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_a_plain_configuration_leaves_out_its_stress_parts_and_the_report_stays(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    once = scored_once

    def spy(*a: Any, **k: Any) -> Any:
        calls.append(1)
        return once(*a, **k)

    monkeypatch.setattr(rescore_mod, "scored_once", spy)
    serial = _report(run_dir, tmp_path / "serial", monkeypatch, jobs=1, min_bytes=sys.maxsize)
    parallel = _report(run_dir, tmp_path / "parallel", monkeypatch, jobs=2)
    assert calls == [1]  # the workers scored it (their parts checked): no serial pass
    # what a worker makes of each configuration
    part = part_mod.score_group(
        [str(p) for p in sorted((run_dir / "logs").glob("*S6*.jsonl"))], detail=True
    )
    assert part.skipped and all(stress_free(c) for c in part.skipped)
    assert all(d[2][name] == [] for d in part.detail for name in STRESS_ONLY)
    styled = part_mod.score_group(
        [str(p) for p in sorted((run_dir / "logs").glob("*S10*.jsonl"))], detail=True
    )
    assert styled.skipped == []
    assert list(parallel) == list(serial)
    for name, data in serial.items():
        assert parallel[name] == data, name
    analyses = json.loads(serial["report-analyses.json"])
    assert analyses["stress_pressure"] and analyses["stress_turns"] and analyses["wording"]


def _cell(steps: int, **knobs: Any) -> CellKey:
    return CellKey(model="m", steps=steps, density=0.3, arm="raw", knobs=Knobs(**knobs))


def test_a_stressed_cell_reading_a_left_out_part_sends_the_run_to_the_serial_path(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain, styled = _cell(6), _cell(6, user_style="restate")
    part = part_mod.Part({}, {}, [], set(), [], [plain])
    assert rescore_mod._unread([part], [plain, _cell(10, user_style="restate")])
    assert not rescore_mod._unread([part], [plain, styled])
    assert msgspec.structs.replace(styled, knobs=Knobs()) == plain
    # and scored_dir then scores serially, as the serial path gives it
    calls: list[int] = []
    once = scored_once

    def serial(*a: Any, **k: Any) -> Any:
        calls.append(1)
        return once(*a, **k)

    monkeypatch.setattr(rescore_mod, "scored_once", serial)
    monkeypatch.setattr(rescore_mod, "_unread", lambda parts, cells: False)
    a, n = scored_dir(run_dir, LogReport(), jobs=2, min_bytes=0)
    assert calls == [1] and n == 24
    monkeypatch.undo()
    b, m = scored_dir(run_dir, LogReport(), jobs=2, min_bytes=0)
    assert (a.lines, a.analyses.json(), m) == (b.lines, b.analyses.json(), n)
