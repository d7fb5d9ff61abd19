"""Checks in the right order (issue 28, item 7) and the manifest as the grid runs (item 10):
a directory of another grid is refused before any endpoint is contacted; the manifest leaves
out the steps x density that explicit graphs replace and records the scripted endpoint's
latency and faults in its history."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from runner.grid.change import compare_grids, identity
from runner.grid.expand import load_grid
from tests.reliability_kit import REPO, ladder


def test_a_different_grid_is_refused_before_the_preflight(tmp_path: Path) -> None:
    out = tmp_path / "r"
    first = ladder(
        "run", "--seeds", "100", "--arms", "raw", "-S", "5", "--out", str(out), "--no-live"
    )
    assert first.returncode == 0, first.stderr
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        again = ladder(
            "run", "--seeds", "100", "--arms", "raw", "-S", "7", "--base-url", url,
            "--out", str(out), "--no-live", timeout=40,
        )  # fmt: skip
    assert again.returncode == 2
    assert "holds a different grid" in again.stderr  # one change a line, each "error:" (#49)
    assert all(x.startswith("error: ") for x in again.stderr.splitlines())
    assert all(len(x) <= 80 for x in again.stderr.splitlines()[1:])  # the first: the path
    assert "preflight" not in again.stdout and "probing" not in again.stdout, again.stdout


def test_the_manifest_records_the_grid_as_it_runs_and_the_scripted_settings(tmp_path: Path) -> None:
    out = tmp_path / "r"
    grid = tmp_path / "g.toml"
    text = (REPO / "runner" / "grids" / "demo.toml").read_text()
    grid.write_text(text.replace('seeds = "100-131"', 'seeds = "100"').replace(
        '"raw", "checklist", "ledger", "directive", "enforce", "hybrid"', '"raw"'))  # fmt: skip
    result = ladder("run", str(grid), "--out", str(out), "--no-live", "--fault", "503=0.1")
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    run = manifest["grid"]["run"]
    assert run["graphs"] == [{"steps": 10, "density": 0.15}]
    assert "steps" not in run and "density" not in run  # the lists the graphs replace
    (entry,) = manifest["history"]
    assert entry["scripted"]["faults"]["rate_503"] == 0.1
    # a rerun resumes (the recorded grid without the stale lists is the same grid)
    again = ladder("run", str(grid), "--out", str(out), "--no-live")
    assert again.returncode == 0 and "1 already done" in again.stdout, again.stdout
    assert "scripted" not in json.loads((out / "manifest.json").read_text())["history"][1]


def test_a_manifest_with_the_stale_lists_compares_equal() -> None:
    import msgspec

    grid = load_grid(REPO / "runner" / "grids" / "demo.toml")
    old = msgspec.to_builtins(grid)  # as manifests before recorded it: steps, density kept
    assert old["run"]["steps"] and old["run"]["graphs"]
    assert compare_grids(old, grid).same
    assert "steps" not in identity(old)["run"]
