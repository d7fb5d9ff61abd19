"""``ladder score`` and ``ladder cost`` at 80 columns (#40, item 6): configurations by number
with a legend (``--wide`` for the long form), rows in ladder order (a variant after its plain
arm, raw first), every line within 80 columns."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app

GRID = """
[run]
seeds = "100-101"
steps = [5]
density = [0.15]
arms = ["enforce", "directive", "checklist", "raw"]
variants = [{ arm = "enforce", binding = "request" }]

[[endpoints]]
name = "e"
base_url = "embedded"

[[models]]
name = "qwen3-235b"
served = "scripted/synthetic"
endpoint = "e"
"""


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("t80")
    (tmp / "grid.toml").write_text(GRID, encoding="utf-8")
    out = tmp / "run"
    result = CliRunner().invoke(
        app, ["run", str(tmp / "grid.toml"), "--out", str(out), "--no-live"]
    )
    assert result.exit_code == 0, result.output
    asyncio.set_event_loop_policy(None)
    return out


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "80"}, terminal_width=80)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("command", ["score", "cost"])
def test_within_80_columns_with_a_legend(run_dir: Path, command: str) -> None:
    out = _cli(command, str(run_dir))
    lines = out.splitlines()
    assert all(len(x) <= 80 for x in lines), [x for x in lines if len(x) > 80]
    if command == "score":  # the SYNTHETIC banner first (#49)
        assert lines[0].startswith("SYNTHETIC: cells of qwen3-235b <- scripted/synthetic")
        lines = lines[lines.index("Configurations:") :]
        out = "\n".join(lines)
    assert lines[0] == "Configurations:"
    assert lines[1].startswith("  #1   qwen3-235b <- scripted/synthetic no-think S=5")
    assert any(x.startswith("  #2 ") for x in lines) and "binding=request" in out.split("\n\n")[0]


def test_rows_in_ladder_order(run_dir: Path) -> None:
    out = _cli("score", str(run_dir))
    table = out.split("Strict success, primary scoring")[1].split("\n\n")[0].splitlines()[3:]
    rows = [(x.split()[0], x.split()[1]) for x in table]
    assert rows == [
        ("#1", "raw"),
        ("#1", "checklist"),
        ("#1", "directive"),
        ("#1", "enforce"),
        ("#2", "enforce"),
    ]


def test_wide_names_each_configuration_in_full(run_dir: Path) -> None:
    out = _cli("score", str(run_dir), "--wide")
    assert "Configurations:" not in out
    rows = [x for x in out.splitlines() if x.startswith("qwen3-235b <- scripted/synthetic")]
    assert rows and any("binding=request" in x for x in rows)
    assert max(len(x) for x in out.splitlines()) > 80  # the long form, as before
