"""``ladder run --set TABLE.KEY=VALUE``: any grid field from the command line, checked as a
grid file is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from ladder.flags import FlagError, RunFlags, apply_flags, grid_from_flags
from runner.grid.expand import GridError, load_grid

GRIDS = Path(__file__).resolve().parents[2] / "runner" / "grids"


def test_set_reaches_any_table_with_a_toml_value() -> None:
    flags = RunFlags(
        sets=["run.seeds=100-103", "decoding.temperature=0.7", "models.0.served=scripted/x"]
    )
    grid, _ = grid_from_flags(flags, env={})
    assert grid.run.seeds == "100-103" and grid.decoding.temperature == 0.7
    assert grid.models[0].served == "scripted/x"
    assert flags.given() == {"--set": flags.sets}


def test_set_comes_after_the_named_flags_on_a_grid_file() -> None:
    grid = load_grid(GRIDS / "demo.toml")
    flags = RunFlags(seeds="100-131", sets=["run.seeds=5-6", 'run.arms=["raw"]'])
    new, given = apply_flags(grid, flags, source="demo.toml")
    assert new.run.seeds == "5-6" and new.run.arms == ["raw"] and "--set" in given


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("seeds=1-2", "expected TABLE.KEY=VALUE"),
        ("run.seeds", "expected TABLE.KEY=VALUE"),
        ("models.3.served=x", "models.3: no such entry (1 listed)"),
        ("run.seeds.first=1", "run.seeds is not a table"),
        ("run.sedes=1-2", "did you mean 'seeds'"),
        ("decoding.temperature=-1", "temperature must be at least 0"),
    ],
)
def test_a_wrong_set_is_one_line(item: str, message: str) -> None:
    with pytest.raises((FlagError, GridError), match=re.escape(message)) as e:
        grid_from_flags(RunFlags(sets=[item]), env={})
    assert "\n" not in str(e.value)


def test_set_on_the_command_line_runs(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--arms", "raw", "--steps", "5", "--out", str(out), "--no-live"]
    result = CliRunner().invoke(app, [*args, "--set", "run.seeds=100-101"])
    assert result.exit_code == 0, result.stderr
    assert len((out / "logs").glob("*.jsonl").__next__().read_text().splitlines()) == 2
    bad = CliRunner().invoke(app, [*args, "--set", "run.sedes=1"])
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1 and "seeds" in bad.stderr
