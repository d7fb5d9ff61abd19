"""The README's "Query your logs" snippets, run as written against a demo directory: their
numbers equal ``ladder cost`` and ``ladder score``."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

import duckdb
import msgspec
import orjson
import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

from ladder.app import app
from ladder.demo import DEMO_GRID
from runner.execution.grid_run import run_async
from runner.grid.expand import load_grid

README = Path(__file__).resolve().parent.parent.parent / "README.md"
cli = CliRunner()


def _blocks(lang: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Query your logs", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{lang}\n(.*?)```", section, flags=re.S)


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    grid = load_grid(DEMO_GRID)  # the demo's grid, on fewer seeds
    grid = msgspec.structs.replace(grid, run=msgspec.structs.replace(grid.run, seeds="100-107"))
    asyncio.run(run_async(grid, out, console=Console(file=io.StringIO()), live=False))
    (command,) = _blocks("bash")
    args = command.split(">")[0].split()[1:]  # ladder score DIR --episodes --json
    result = cli.invoke(app, [str(out) if a == "DIR" else a for a in args])
    assert result.exit_code == 0, result.output
    (out / "episodes.jsonl").write_text(result.stdout)
    return out


def _expected(demo_dir: Path) -> dict[str, tuple[float, float]]:
    """arm -> (mean agent tokens from `ladder cost`, strict rate from `ladder score`)."""
    cost = cli.invoke(app, ["cost", str(demo_dir), "--json"]).stdout.splitlines()
    tokens = {row["arm"]: row["total_tokens"] for row in map(orjson.loads, cost)}
    score = cli.invoke(app, ["score", str(demo_dir), "--json"]).stdout.splitlines()
    strict = {
        line["cell"]["arm"]: line["strict"]
        for line in map(orjson.loads, score)
        if line["type"] == "cell"
    }
    assert tokens.keys() == strict.keys() and len(tokens) == 6
    return {arm: (tokens[arm], strict[arm]) for arm in tokens}


def test_the_duckdb_query_equals_ladder_cost_and_ladder_score(demo_dir: Path) -> None:
    (sql,) = _blocks("sql")
    relation = duckdb.sql(sql.replace("DIR", str(demo_dir)))
    assert relation is not None
    got = relation.fetchall()
    expected = _expected(demo_dir)
    assert [row[0] for row in got] == sorted(expected)
    for arm, tokens, strict in got:
        assert tokens == pytest.approx(expected[arm][0], rel=1e-12)
        assert strict == pytest.approx(expected[arm][1], rel=1e-12)


def test_the_pandas_snippet_equals_ladder_cost_and_ladder_score(demo_dir: Path) -> None:
    (code,) = _blocks("python")
    namespace: dict[str, object] = {}
    exec(code.replace("DIR", str(demo_dir)).replace("print(per_arm)", ""), namespace)
    per_arm = namespace["per_arm"]
    assert isinstance(per_arm, pd.DataFrame)
    expected = _expected(demo_dir)
    assert sorted(per_arm.index) == sorted(expected)
    for arm, (tokens, strict) in expected.items():
        assert per_arm.loc[arm, "agent_tokens"] == pytest.approx(tokens, rel=1e-12)
        assert per_arm.loc[arm, "strict"] == pytest.approx(strict, rel=1e-12)


def test_the_readmes_failing_turns_example_shows_a_failing_turn(demo_dir: Path) -> None:
    """``ladder show runs/demo ... --seed N --failing-turns`` in the README reads a failed
    episode of the demo (#40, item 9: it showed a passing one)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    (line,) = [x for x in readme.splitlines() if "--failing-turns" in x and "ladder show" in x]
    args = line.split("#")[0].split()[1:]  # show runs/demo --arm raw --seed 104 --failing-turns
    result = cli.invoke(app, [str(demo_dir) if a == "runs/demo" else a for a in args])
    assert result.exit_code == 0, result.output
    assert "strict FAIL" in result.output and "FAILED:" in result.output, result.output[:2000]
