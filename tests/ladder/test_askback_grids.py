"""The ask-back grids (issue #38) validate and run on the embedded synthetic agent, and their
report holds the "Ask back and escalation" section and its Holm family."""

from __future__ import annotations

import io
import json
import tomllib
from pathlib import Path
from typing import Any

from rich.console import Console

from protocol.knobs import variants
from runner.execution.grid_run import run_async
from runner.grid.expand import check_grid, parse_grid
from runner.rundir.report import write_report

GRIDS = Path(__file__).resolve().parent.parent.parent / "runner" / "grids"
FAMILY = "Ask back and escalation"


def _synthetic(name: str, agent: str, seeds: str, tmp: Path) -> dict[str, Any]:
    data = tomllib.loads((GRIDS / f"{name}.toml").read_text())
    data["run"]["seeds"] = seeds
    data["run"]["concurrency"] = 64
    data.pop("endpoints", None)
    for m in data["models"]:
        m.update(endpoint="embedded", served=agent, select="checkpoint", extra={})
    if data["run"].get("paraphrase_cache"):
        data["run"]["paraphrase_cache"] = str(tmp / "paraphrase_cache.json")
    return data


async def _report(
    name: str, agent: str, tmp: Path, seeds: str = "100-101"
) -> tuple[str, dict[str, Any]]:
    grid = parse_grid(_synthetic(name, agent, seeds, tmp), source=name)
    check_grid(grid, need_keys=False)
    out = tmp / name
    await run_async(grid, out, console=Console(file=io.StringIO()), live=False)
    text = write_report(out).read_text()
    return text, json.loads((out / "report-analyses.json").read_text())


def _family(out: Path) -> list[dict[str, Any]]:
    """The contrast lines of the ask-back Holm family in the run's results."""
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return [x for x in lines if x["type"] == "contrast" and x.get("table") == FAMILY]


def test_the_family_is_declared_once_per_knob() -> None:
    declared = {v.knob: v for v in variants() if v.table == FAMILY}
    assert set(declared) == {"show", "ask", "escalate"}
    assert all(v.alone for v in declared.values())


async def test_askback_wording_grid(tmp_path: Path) -> None:
    from ladder.paraphrase import run_paraphrase
    from runner.grid.schema import Decoding, ModelConfig

    cache = tmp_path / "paraphrase_cache.json"
    rewriter = ModelConfig(name="scripted/perfect")
    await run_paraphrase(
        "embedded", None, rewriter, Decoding(temperature=0.7), ["procurement"], cache, 3, 16
    )
    agent = "scripted/synthetic?matcher_wrong=0.05&matcher_none=0.05"
    text, analyses = await _report("askback-wording", agent, tmp_path)
    assert f"## {FAMILY}" in text
    lines = analyses["askback"]
    # 3 wordings x 2 gates x 4 knob cells, each beside its knobs-off reference
    assert len(lines) == 24 and all(x["reference_successes"] is not None for x in lines)
    assert {x["knobs"] for x in lines} == {
        "show=True",
        "ask=unresolved",
        "ask=second_reading",
        "show=True,ask=second_reading",
    }
    assert sum(x["burden"]["questions"] for x in lines) > 0
    family = _family(tmp_path / "askback-wording")
    assert len(family) == 24 * 2  # each knob cell against one reference, both scorings
    # a scripted agent serves qwen3-235b here: the family's name says so (#40)
    assert {x["family"] for x in family} == {
        f"{FAMILY} contrasts | qwen3-235b <- scripted/synthetic"
    }
    assert {x["a"] for x in family} == {
        "directive",
        "enforce",
        "directive[ask=second_reading]",
        "enforce[ask=second_reading]",
    }


async def test_askback_escalate_grid(tmp_path: Path) -> None:
    agent = "scripted/synthetic?obey=0.8&compile_cancel_left=1"
    # four seeds (#46): since the synthetic agent's dice are paired by seed and turn, the two
    # models of the grid roll the same dice, and seeds 100-101 happen to override nothing
    text, analyses = await _report("askback-escalate", agent, tmp_path, seeds="100-103")
    assert f"## {FAMILY}" in text
    lines = analyses["askback"]
    assert len(lines) == 2 * 5  # two models x (enforce, hybrid, three corrupted) with escalate
    assert all(x["knobs"] == "escalate=True" for x in lines)
    assert sum(x["burden"]["escalations"] for x in lines) > 0
    assert sum(x["burden"]["overrides"] for x in lines) > 0
    family = _family(tmp_path / "askback-escalate")
    assert len(family) == 10 * 2
    assert all(x["b"].endswith("escalate=True]") for x in family)
