"""Seed expansion stays bounded at the command line (#47): seeds ``0-999999`` x 2 arms (two
million episodes, past the documented 250,000 of one grid) is one ``error:`` line, exit 2,
no traceback and nothing written, from ``validate``, ``validate --estimate`` and ``run``
(from a grid file and from the flags), before any episode is listed; a seed range past the
1,000,000 seeds of one input, or past 2^63-1, is one line too. docs/security.md gives the
ceilings and their measured cost."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from runner.grid.expand import MAX_EPISODES
from runner.grid.seeds import MAX_SEEDS
from tests.reliability_kit import grid_data, grid_toml


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


@pytest.fixture
def grid(tmp_path: Path) -> Path:
    path = tmp_path / "grid.toml"
    path.write_text(grid_toml(grid_data(seeds="0-999999", arms=("raw", "checklist"))))
    return path


def _one_line(argv: list[str]) -> str:
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ")
    return line


@pytest.mark.parametrize(
    "extra", [["validate", "--offline"], ["validate", "--estimate"], ["run", "--no-live"]]
)
def test_two_million_episodes_are_one_line(grid: Path, tmp_path: Path, extra: list[str]) -> None:
    out = tmp_path / "run"
    argv = [extra[0], str(grid), *extra[1:]] + (["--out", str(out)] if extra[0] == "run" else [])
    line = _one_line(argv)
    assert "2,000,000 episodes" in line and f"at most {MAX_EPISODES:,}" in line
    assert not out.exists()


def test_the_flags_alone_are_one_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    line = _one_line(
        ["run", "--seeds", "0-999999", "--arms", "raw,checklist", "--out", str(out), "--no-live"]
    )
    assert "2,000,000 episodes" in line and not out.exists()


@pytest.mark.parametrize(
    "seeds", [f"0-{MAX_SEEDS}", "0-9223372036854775806", "0-99999999999999999999"]
)
def test_a_seed_range_past_its_ceiling_is_one_line(tmp_path: Path, seeds: str) -> None:
    line = _one_line(["run", "--seeds", seeds, "--out", str(tmp_path / "r"), "--no-live"])
    assert "seed" in line
