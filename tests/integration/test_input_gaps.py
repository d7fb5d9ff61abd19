"""Small input gaps, each one clear line and exit 2 (issue 28, item 9)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ladder.app import app
from runner.grid.expand import load_grid, parse_grid
from runner.rundir.results import read_results
from tests.reliability_kit import grid_data, grid_toml

GRID = grid_data(seeds="100", steps=5, arms=("raw", "enforce"))


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def _invoke(*args: str, **kw: Any) -> Any:
    return CliRunner().invoke(app, list(args), **kw)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("gaps")
    (tmp / "g.toml").write_text(grid_toml(GRID))
    result = _invoke("run", str(tmp / "g.toml"), "--out", str(tmp / "r"), "--no-live")
    assert result.exit_code == 0, result.output
    return tmp / "r"


def _one_line(result: Any, *needles: str) -> str:
    assert result.exit_code == 2, result.output
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in err[0], (needle, err[0])
    return str(err[0])


def test_show_with_a_typod_arm_says_did_you_mean(run_dir: Path) -> None:
    _one_line(_invoke("show", str(run_dir), "--arm", "rwa"), "'rwa'", "did you mean 'raw'")


@pytest.mark.parametrize("flag", ["--arms", "--steps", "--density", "--domain", "--brief",
                                  "--model", "--seeds"])  # fmt: skip
def test_an_empty_list_flag_is_refused_not_the_default(flag: str, tmp_path: Path) -> None:
    _one_line(_invoke("run", flag, "", "--out", str(tmp_path / "r"), "--no-live"), flag)
    assert not (tmp_path / "r").exists()


def test_cost_on_an_empty_or_missing_directory(tmp_path: Path) -> None:
    _one_line(_invoke("cost", str(tmp_path)), "no completed episode")
    _one_line(_invoke("cost", str(tmp_path / "missing")), "not a directory")


def test_generate_refuses_seed_with_seeds() -> None:
    _one_line(_invoke("generate", "--seed", "1", "--seeds", "1-3"), "--seed 1", "--seeds 1-3")
    assert _invoke("generate", "--seed", "1").exit_code == 0
    assert _invoke("generate", "--seeds", "1-2", "--steps", "5").exit_code == 0


def test_an_integer_seeds_is_one_seed(tmp_path: Path) -> None:
    data = {**GRID, "run": {**GRID["run"], "seeds": 100}}
    assert parse_grid(data).seeds() == [100]
    (tmp_path / "g.toml").write_text(grid_toml(data).replace('seeds = "100"', "seeds = 100"))
    assert "seeds = 100\n" in (tmp_path / "g.toml").read_text()
    assert load_grid(tmp_path / "g.toml").run.seeds == "100"


def test_validate_offline_warns_of_an_unset_key_variable(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv("NU_TEST_KEY", raising=False)
    data = grid_data(seeds="100", steps=5, arms=("raw",), api_key_env="NU_TEST_KEY")
    (tmp_path / "g.toml").write_text(grid_toml(data))
    offline = _invoke("validate", str(tmp_path / "g.toml"), "--offline")
    assert offline.exit_code == 0, offline.output
    assert offline.stderr.strip().splitlines() == [
        f"warning: {tmp_path / 'g.toml'}: endpoint 'embedded': $NU_TEST_KEY (its API key) "
        "is not set"
    ]
    _one_line(_invoke("validate", str(tmp_path / "g.toml")), "NU_TEST_KEY")  # it would send


def test_view_refuses_a_directory_that_is_no_run(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a run")
    _one_line(_invoke("view", str(tmp_path), "--port", "0"), "is not a run directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # nothing written


def test_read_results_takes_a_string(run_dir: Path) -> None:
    assert read_results(str(run_dir)) == read_results(run_dir) != []
