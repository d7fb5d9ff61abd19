"""Duplicate arms are refused as duplicate models are (#47): `--arms raw,raw` would write
every episode twice into one log; an arms list of 2M entries is one line, at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from runner.grid.expand import (
    MAX_EPISODES,
    MAX_GRID_BYTES,
    MAX_LISTED,
    GridError,
    load_grid,
    parse_grid,
)
from tests.reliability_kit import grid_data


def test_an_arm_listed_twice_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(GridError) as refused:
        parse_grid(grid_data(seeds="100", arms=("raw", "directive", "raw")))
    (line,) = str(refused.value).splitlines()
    assert "arm 'raw' is listed twice" in line
    args = ["run", "--model", "scripted/perfect", "--arms", "raw,raw", "--seeds", "100"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run"), "--no-live"])
    assert result.exit_code == 2 and "arm 'raw' is listed twice" in result.output
    assert not (tmp_path / "run").exists()


def test_a_huge_arms_list_is_refused_before_it_is_checked() -> None:
    with pytest.raises(GridError, match=f"at most {MAX_LISTED:,}"):
        parse_grid(grid_data(seeds="100", arms=["raw"] * 2_000_000))
    data = grid_data(seeds="100", arms=("raw",))
    data["models"] = data["models"] * (MAX_LISTED + 1)
    with pytest.raises(GridError, match="models; a grid may list at most"):
        parse_grid(data)


def test_a_grid_file_over_its_cap_is_refused_unparsed(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text("[run]\narms = [" + '"raw", ' * 2_000_000 + "]\n")  # 14 MB of TOML
    with pytest.raises(GridError, match=f"over {MAX_GRID_BYTES} bytes"):
        load_grid(grid)


def test_a_grid_of_too_many_episodes_is_refused_before_they_are_listed() -> None:
    data = grid_data(seeds="0-999999", arms=("raw", "directive"))
    with pytest.raises(GridError) as refused:
        parse_grid(data)
    (line,) = str(refused.value).splitlines()
    assert "2,000,000 episodes" in line and f"at most {MAX_EPISODES:,}" in line
