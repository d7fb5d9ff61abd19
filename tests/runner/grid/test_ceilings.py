"""Every number of a grid has a ceiling checked at validation (#47): one line naming the
field, never a TypeError deep in a run; the reply's byte cap holds whatever max_tokens
says."""

from __future__ import annotations

import tomllib
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from ladder.app import app
from runner.client.endpoint import BUDGET_CEILING
from runner.client.wire import REPLY_CAP_TOKENS, reply_cap
from runner.grid.ceilings import value_problems
from runner.grid.expand import Grid, GridError, parse_grid
from tests.reliability_kit import grid_data

GRIDS = sorted((Path(__file__).resolve().parents[3] / "runner" / "grids").glob("*.toml"))


@pytest.mark.parametrize(
    ("table", "key", "value", "named"),
    [
        ("run", "concurrency", 10**20, "run.concurrency"),
        ("decoding", "attempts", 10**6, "decoding.attempts"),
        ("decoding", "timeout_s", 1e300, "decoding.timeout_s"),
        ("decoding", "reply_budget", {"no-think": 2 * 10**7, "thinking": 10}, "reply_budget"),
    ],
)
def test_a_number_past_its_ceiling_is_one_line_naming_it(
    table: str, key: str, value: object, named: str
) -> None:
    data = grid_data(seeds="100", arms=("raw",))
    data.setdefault(table, {})[key] = value
    with pytest.raises(GridError) as refused:
        parse_grid(data)
    (line,) = str(refused.value).splitlines()
    assert named in line and "must be at most" in line


def test_an_integer_past_64_bits_anywhere_is_one_line() -> None:
    data = grid_data(seeds="100", arms=("raw",))
    data["models"][0]["extra"] = {"max_completion_tokens": 10**20}
    with pytest.raises(GridError, match=r"models\[0\]\.extra\.max_completion_tokens"):
        parse_grid(data)


def test_max_tokens_past_its_ceiling_is_one_line(tmp_path: Path) -> None:
    for value in ("99999999999999999999", "20000000"):
        args = ["run", "--model", "scripted/perfect", "--arms", "raw", "--seeds", "100"]
        args += ["--max-tokens", value, "--out", str(tmp_path / "run"), "--no-live"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        (line,) = result.output.strip().splitlines()
        assert "reply_budget must be at most" in line and value in line


def test_the_reply_cap_holds_whatever_max_tokens_says() -> None:
    assert REPLY_CAP_TOKENS == BUDGET_CEILING
    assert reply_cap(10**20) == reply_cap(BUDGET_CEILING) <= 4_200_000


@pytest.mark.parametrize("path", GRIDS, ids=lambda p: p.name)
def test_every_shipped_grid_is_under_every_ceiling(path: Path) -> None:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data["run"]["seeds"] = str(data["run"]["seeds"])
    assert value_problems(msgspec.convert(data, Grid)) == []


@pytest.mark.parametrize("bad", ["\x1b[31m", "\u202e", "\u200b", "\n", "\x85"])
def test_a_control_character_in_a_grid_is_one_line_naming_it(bad: str) -> None:
    data = grid_data(seeds="100", arms=("raw",))
    data["models"][0]["name"] = f"scripted/perfect{bad}x"
    with pytest.raises(GridError) as refused:
        parse_grid(data)
    (line,) = str(refused.value).splitlines()
    assert "models[0].name holds the control character" in line
    assert bad not in line  # shown as its escape, never obeyed
