"""``ladder cost`` charges each arm what it needs, and the grid's actual helper spend
reconciles with ``helpers.jsonl`` exactly (issue 28, item 3)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from runner.rundir.logs import read_logs
from tests.reliability_kit import ladder

GATES = ("directive", "enforce", "hybrid")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two briefs (two configurations), the three gate arms and raw, four seeds."""
    out = tmp_path_factory.mktemp("cost") / "r"
    result = ladder(
        "run", "--seeds", "100-103", "-S", "6", "--arms", "raw," + ",".join(GATES),
        "--brief", "amended,original", "--out", str(out), "--no-live",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return out


def _cost_json(path: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    result = ladder("cost", str(path), "--json")
    assert result.returncode == 0, result.stderr
    cells = [json.loads(x) for x in result.stdout.splitlines()]
    assert {x["type"] for x in cells} == {"cost"}
    result = ladder("cost", str(path), "--json", "--spend")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(x) for x in result.stdout.splitlines()]
    assert {x["type"] for x in lines} == {"helper_spend"}
    return cells, {x["helper"]: x for x in lines}


def _ledger(run: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {"compile": [], "matcher": []}
    for raw in (run / "helpers.jsonl").read_text().splitlines():
        line = json.loads(raw)
        out[line["kind"]] += line["calls"]
    return out


def _tokens(calls: list[dict[str, Any]]) -> int:
    return sum(c.get("prompt_tokens", 0) + c.get("completion_tokens", 0) for c in calls)


def test_each_gate_arm_is_charged_what_it_needs_in_every_configuration(run: Path) -> None:
    cells, _ = _cost_json(run)
    by_brief: dict[str, dict[str, dict[str, Any]]] = {}
    for c in cells:
        by_brief.setdefault(c["brief"], {})[c["arm"]] = c
    assert set(by_brief) == {"amended", "original"}
    for brief, arms in by_brief.items():
        needs = {
            a: (arms[a]["matcher_required"], arms[a]["compiler_required"], arms[a]["helper_tokens"])
            for a in GATES
        }
        assert len(set(needs.values())) == 1, (brief, needs)  # whichever arm ran first
        matcher, compiler, tokens = needs["enforce"]
        assert compiler == 2.0 and matcher > 0 and tokens > 0, (brief, needs)
        assert arms["raw"]["helper_tokens"] == 0 and arms["raw"]["compiler_required"] == 0
        made = [arms[a]["helper_tokens_made"] for a in GATES]
        assert min(made) < tokens  # sharing: some arm was served what another made


def test_the_grids_spend_reconciles_with_the_helper_log_exactly(run: Path) -> None:
    cells, spend = _cost_json(run)
    ledger = _ledger(run)
    assert spend["compiler"]["spent_calls"] == len(ledger["compile"]) == 2 * 4  # one per seed
    assert spend["compiler"]["spent_tokens"] == _tokens(ledger["compile"])
    assert spend["matcher"]["spent_calls"] == len(ledger["matcher"])
    assert spend["matcher"]["spent_tokens"] == _tokens(ledger["matcher"])
    assert {s["source"] for s in spend.values()} == {"helper log"}
    # the per-arm needs, summed over episodes, are the grid's needs
    for helper, column in (("compiler", "compiler_required"), ("matcher", "matcher_required")):
        assert spend[helper]["needed_calls"] >= sum(round(c["n"] * c[column]) for c in cells)
    needed = sum(s["needed_tokens"] for s in spend.values())
    assert needed == pytest.approx(sum(c["n"] * c["helper_tokens"] for c in cells), abs=1e-6)
    assert all(s["saved_tokens"] == s["needed_tokens"] - s["spent_tokens"] for s in spend.values())
    # every request made is in the log once: the matcher requests the episodes sent are the
    # log's matcher calls; the compiles episodes sent are among the log's (the rest: precompile)
    records = read_logs(run).values()
    made = [
        c for r in records for t in r.turns for c in t.calls if c.role != "agent" and not c.cached
    ]
    key = ("prompt_tokens", "completion_tokens")

    def multiset(calls: list[dict[str, Any]]) -> Counter[tuple[int, ...]]:
        return Counter(tuple(c.get(k, 0) for k in key) for c in calls)

    sent = {
        role: multiset([{k: getattr(c, k) for k in key} for c in made if c.role == role])
        for role in ("compiler", "matcher")
    }
    assert sent["matcher"] == multiset(ledger["matcher"])
    assert not sent["compiler"] - multiset(ledger["compile"])
    # every call an arm was served carries the tokens of a request in the log
    served = [
        c for r in records for t in r.turns for c in t.calls if c.role == "compiler" and c.cached
    ]
    assert served and all(c.shared and c.prompt_tokens > 0 for c in served)


def test_cost_on_a_run_without_matcher_lines_counts_the_episodes_requests(
    run: Path, tmp_path: Path
) -> None:
    import shutil

    old = tmp_path / "old"
    shutil.copytree(run, old)
    log = old / "helpers.jsonl"
    kept = [x for x in log.read_text().splitlines() if '"kind":"compile"' in x]
    log.write_text("\n".join(kept) + "\n")
    _, spend = _cost_json(old)
    assert spend["matcher"]["source"] == "episode logs"
    assert spend["matcher"]["spent_calls"] == len(_ledger(run)["matcher"])
    text = ladder("cost", str(old)).stdout
    assert "Helper spend for the grid" in text and "episode logs" in text
