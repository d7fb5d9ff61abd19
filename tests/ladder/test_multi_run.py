"""Several runs in one ``ladder score``, ``ladder compare A B`` with McNemar, and the
``--arm`` / ``--model`` / ``--cell`` filters of score, report and cost (#40, items 6-7)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from ladder.app import app
from scoring.results.stats import mcnemar_exact


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("multi")
    out = []
    for name, model in (("a", "scripted/synthetic"), ("b", "scripted/perfect")):
        args = ["run", "--model", model, "--arms", "raw,checklist", "--seeds", "100-105"]
        result = CliRunner().invoke(app, [*args, "--steps", "5", "--out", str(tmp / name)])
        assert result.exit_code == 0, result.output
        asyncio.set_event_loop_policy(None)
        out.append(tmp / name)
    return out[0], out[1]


def _cli(*args: object) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_several_runs_in_one_score(runs: tuple[Path, Path]) -> None:
    a, b = runs
    out = _cli("score", a, b)
    legend = out.split("\n\n")[0]
    assert f"{a}: scripted/synthetic" in legend and f"{b}: scripted/perfect" in legend
    table = out.split("Strict success, primary scoring")[1].split("\n\n")[0].splitlines()[3:]
    assert [tuple(x.split()[:2]) for x in table] == [
        ("#1", "raw"), ("#1", "checklist"), ("#2", "raw"), ("#2", "checklist"),
    ]  # fmt: skip
    lines = [orjson.loads(x) for x in _cli("score", a, b, "--json").splitlines()]
    cells = [x for x in lines if x["type"] == "cell"]
    assert {x["cell"]["model"] for x in cells} == {
        f"{a}: scripted/synthetic",
        f"{b}: scripted/perfect",
    }


def test_compare_pairs_the_seeds_with_mcnemar(runs: tuple[Path, Path]) -> None:
    a, b = runs
    lines = [orjson.loads(x) for x in _cli("compare", a, b, "--json").splitlines()]
    assert {(x["arm"], x["scoring"]) for x in lines} == {
        (arm, s) for arm in ("raw", "checklist") for s in ("strict", "decline_aware")
    }
    for x in lines:
        assert x["n"] == 6 and x["b_successes"] == 6  # the perfect agent: every seed
        assert x["p"] == mcnemar_exact(x["b_only"], x["a_only"])
        assert x["b_only"] == 6 - x["a_successes"] and x["a_only"] == 0
    text = _cli("compare", a, b)
    assert "scripted/synthetic vs scripted/perfect" in text
    assert all(len(x) <= 80 for x in text.splitlines())


def test_filters(runs: tuple[Path, Path]) -> None:
    a, _ = runs
    lines = [orjson.loads(x) for x in _cli("score", a, "--arm", "raw", "--json").splitlines()]
    assert {x["cell"]["arm"] for x in lines if x["type"] == "cell"} == {"raw"}
    assert not [x for x in lines if x["type"] == "contrast"]  # no partner arm
    cost = [orjson.loads(x) for x in _cli("cost", a, "--cell", "checklist", "--json").splitlines()]
    assert cost and {x["arm"] for x in cost} == {"checklist"}
    result = CliRunner().invoke(app, ["score", str(a), "--model", "nobody"])
    assert result.exit_code == 2 and "--model matched no cell" in result.output
    _cli("report", a, "--arm", "checklist", "--out", a.parent / "r.md")
    text = (a.parent / "r.md").read_text()
    assert "| checklist |" in text and "| raw |" not in text
