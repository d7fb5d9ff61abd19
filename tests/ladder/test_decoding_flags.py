"""``--temperature``, ``--top-p`` and ``--max-tokens`` (#40, item 6): the grid's [decoding]
overridden (recorded in the manifest), top_p sent in every request body, the reply budget
of every regime set; bad values refused in one line."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from ladder.app import app
from ladder.flags import RunFlags, grid_from_flags
from runner.grid.schema import Decoding, ModelConfig


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def test_flags_set_the_grids_decoding() -> None:
    flags = RunFlags(temperature=0.7, top_p=0.9, max_tokens=300)
    grid, _ = grid_from_flags(flags)
    assert grid.decoding.temperature == 0.7 and grid.decoding.top_p == 0.9
    assert grid.decoding.reply_budget == {"no-think": 300, "thinking": 300}
    kw = grid.models[0].chat_kwargs(grid.decoding, "agent")
    assert kw["temperature"] == 0.7 and kw["extra"]["top_p"] == 0.9 and kw["max_tokens"] == 300
    plain, _ = grid_from_flags(RunFlags())
    assert plain.decoding.top_p is None
    assert "top_p" not in ModelConfig(name="m").chat_kwargs(Decoding(), "agent")["extra"]


def test_a_run_records_them_and_sends_them(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--arms", "raw", "--seeds", "100", "--temperature", "0.5", "--top-p", "0.8"]
    result = CliRunner().invoke(app, [*args, "--max-tokens", "321", "--out", str(out)])
    assert result.exit_code == 0, result.output
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    assert manifest["grid"]["decoding"]["top_p"] == 0.8
    assert manifest["history"][0]["overrides"]["--max-tokens"] == 321
    (log,) = (out / "logs").iterdir()
    record = orjson.loads(log.read_bytes().splitlines()[0])
    calls = [c for t in record["turns"] for c in t["calls"] if c["role"] == "agent"]
    assert calls and all(c["max_tokens"] == 321 for c in calls)
    # the report's run details say so (#40, item 8)
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    report = (out / "report.md").read_text()
    assert "## Run details" in report
    assert (
        "- decoding: `temperature 0.5; top_p 0.8; reply budget no-think 321, thinking 321`"
        in report
    )
    assert "- git revision: `" in report or "- generator: `" in report


@pytest.mark.parametrize(
    ("flag", "value", "needle"),
    [("--top-p", "1.5", "top_p must be in (0, 1]"), ("--max-tokens", "0", "--max-tokens")],
)
def test_bad_values_are_one_line(tmp_path: Path, flag: str, value: str, needle: str) -> None:
    result = CliRunner().invoke(app, ["run", flag, value, "--out", str(tmp_path / "r")])
    assert result.exit_code == 2 and needle in result.output
    assert len(result.output.strip().splitlines()) == 1
