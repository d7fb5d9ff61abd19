"""Logs of ``--served scripted/...`` runs made before ``CellKey.served_by`` existed (#40):
their records carry no ``served_by``; every reader labels them from the run's manifest
(``served: scripted/...``), so score, report, cost, compare, the viewer and a resume read
them as a run made today."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import msgspec
import orjson
import pytest
from typer.testing import CliRunner

from ladder.app import app
from runner.rundir.errors import RunDirError
from runner.rundir.logs import read_logs
from runner.rundir.records import load_records
from runner.rundir.served import label_record, manifest_served
from runner.viewer.data import RunView

HONEST = "qwen3-235b <- scripted/synthetic"
SERVED = "scripted/synthetic?seed=3"


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def _run_args(out: Path) -> list[str]:
    args = ["run", "--model", "qwen3-235b", "--served", SERVED, "--base-url", "embedded"]
    args += ["--seeds", "100-101", "--arms", "raw,checklist", "-S", "5"]
    return [*args, "--out", str(out), "--no-live"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a run made today, the same run as an old-style directory: no served_by in its logs,
    no results or viewer index)."""
    base = tmp_path_factory.mktemp("old")
    new = base / "new"
    result = CliRunner().invoke(app, _run_args(new))
    assert result.exit_code == 0, result.output
    asyncio.set_event_loop_policy(None)
    old = base / "old"
    shutil.copytree(new, old)
    for name in ("results.jsonl", "view-index.msgpack"):
        (old / name).unlink(missing_ok=True)
    for log in (old / "logs").iterdir():
        lines = []
        for raw in log.read_bytes().splitlines():
            data = orjson.loads(raw)
            assert data["cell"].pop("served_by") == SERVED
            lines.append(orjson.dumps(data))
        log.write_bytes(b"\n".join(lines) + b"\n")
    assert b"served_by" not in b"".join(p.read_bytes() for p in (old / "logs").iterdir())
    return new, old


def test_the_readers_label_old_records_from_the_manifest(runs: tuple[Path, Path]) -> None:
    new, old = runs
    assert manifest_served(old) == {"qwen3-235b": SERVED}
    records, _ = load_records(old)
    assert len(records) == 4 and all(r.cell.served_by == SERVED for r in records)
    # the same cells as the run made today
    assert {r.cell for r in records} == {r.cell for r in load_records(new)[0]}
    assert all(r.cell.served_by == SERVED for r in read_logs(old / "logs").values())


def test_score_report_cost_and_compare_say_so(runs: tuple[Path, Path]) -> None:
    new, old = runs
    score = CliRunner().invoke(app, ["score", str(old), "--wide"])
    assert score.exit_code == 0, score.output
    rows = [x for x in score.output.splitlines() if "procurement" in x]
    assert rows and all(HONEST in x for x in rows), score.output
    report = CliRunner().invoke(app, ["report", str(old)])
    assert report.exit_code == 0, report.output
    text = (old / "report.md").read_text()
    assert f"> SYNTHETIC: cells of `{HONEST}`" in text and f"| {HONEST} no-think" not in text
    cost = CliRunner().invoke(app, ["cost", str(old), "--wide"])
    assert cost.exit_code == 0 and HONEST in cost.output, cost.output
    compare = CliRunner().invoke(app, ["compare", str(old), str(new)])
    assert compare.exit_code == 0, compare.output
    assert HONEST in compare.output and "no configuration" not in compare.output


def test_the_viewer_says_so(runs: tuple[Path, Path]) -> None:
    _, old = runs
    view = RunView(old).cells()
    assert view.synthetic.startswith("SYNTHETIC: cells of `" + HONEST)
    assert view.cells and all(c.config.startswith(HONEST) for c in view.cells)


def test_a_resume_of_an_old_run_finds_its_episodes_done(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    _, old = runs
    again = tmp_path / "again"
    shutil.copytree(old, again)
    result = CliRunner().invoke(app, _run_args(again))
    assert result.exit_code == 0, result.output
    assert "0 episodes run, 4 already done" in result.output


def test_a_missing_or_planted_manifest_labels_nothing(tmp_path: Path) -> None:
    assert manifest_served(tmp_path) == {}
    target = tmp_path / "elsewhere.json"
    grid = {"grid": {"models": [{"name": "qwen3-235b", "served": SERVED}]}}
    target.write_bytes(orjson.dumps(grid))
    os.symlink(target, tmp_path / "manifest.json")  # a planted link is never read
    assert manifest_served(tmp_path) == {}
    (tmp_path / "manifest.json").unlink()
    (tmp_path / "manifest.json").write_bytes(b"[1, 2")  # not JSON
    assert manifest_served(tmp_path) == {}
    real = {"grid": {"models": [{"name": "qwen3-235b", "served": "Qwen/Qwen3-235B"}, 7]}}
    (tmp_path / "manifest.json").write_bytes(orjson.dumps(real))
    with pytest.raises(RunDirError, match=r"\$\.grid\.models\[1\]"):  # a wrong type (#47)
        manifest_served(tmp_path)
    real["grid"]["models"].pop()
    (tmp_path / "manifest.json").write_bytes(orjson.dumps(real))
    assert manifest_served(tmp_path) == {}  # a real served name is no scripted label
    # a served name changed by --allow-grid-change: which served an old record is unknown
    changed = {
        "grid": {"models": [{"name": "qwen3-235b", "served": SERVED}]},
        "history": [{"grid_change": [f'models[qwen3-235b].served null -> "{SERVED}"']}],
    }
    (tmp_path / "manifest.json").write_bytes(orjson.dumps(changed))
    assert manifest_served(tmp_path) == {}
    changed["history"] = [{"grid_change": ["seeds 104-105"]}]  # a grown grid: labelled
    (tmp_path / "manifest.json").write_bytes(orjson.dumps(changed))
    assert manifest_served(tmp_path) == {"qwen3-235b": SERVED}


def test_a_labelled_record_keeps_its_label(runs: tuple[Path, Path]) -> None:
    new, _ = runs
    record = load_records(new)[0][0]
    assert label_record(record, {"qwen3-235b": "scripted/perfect"}) is record
    assert label_record(record, {}) is record
    bare = msgspec.structs.replace(record, cell=msgspec.structs.replace(record.cell, served_by=""))
    assert label_record(bare, {"other": SERVED}) is bare
    assert label_record(bare, {"qwen3-235b": SERVED}).cell == record.cell
