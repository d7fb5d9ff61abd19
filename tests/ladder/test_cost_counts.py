"""``ladder cost`` says how it averages and what it left out, and warns of replies cut at
their token budget per cell and role (#49, item 8)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol.records import CellKey
from runner.viewer.data import RunView
from scoring.analyses.truncation import cut_replies, cut_warnings, episode_counts


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def _run(out: Path, seeds: str) -> list[Path]:
    args = ["run", "--model", "scripted/perfect", "--arms", "raw", "--steps", "5"]
    result = CliRunner().invoke(app, [*args, "--seeds", seeds, "--out", str(out), "--no-live"])
    assert result.exit_code == 0, result.output
    asyncio.set_event_loop_policy(None)
    return sorted((out / "logs").glob("*.jsonl"))


def _rewrite(log: Path, edit: dict[int, str]) -> None:
    """Record i of ``log``: "cut" sets every agent call's finish_reason to length,
    "overflow" ends it on context_overflow."""
    lines = [orjson.loads(x) for x in log.read_bytes().splitlines()]
    for i, what in edit.items():
        if what == "overflow":
            lines[i]["termination"] = "context_overflow"
        for turn in lines[i]["turns"] if what == "cut" else []:
            for call in turn["calls"]:
                if call["role"] == "agent":
                    call["finish_reason"] = "length"
    log.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))


def test_cost_counts_what_it_leaves_out_and_warns_of_cut_replies(tmp_path: Path) -> None:
    out = tmp_path / "run"
    (log,) = _run(out, "100-102")
    _rewrite(log, {0: "cut", 1: "overflow"})
    result = CliRunner().invoke(app, ["cost", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "Per-episode figures are means over completed episodes only." in text
    assert "#1 raw: 2 completed; left out 1 context overflows (scored as failures)" in text
    assert "warning: #1 raw: " in text and "agent replies (33%) cut at their token budget" in text
    assert all(len(x) <= 80 for x in result.stdout.splitlines())
    (row,) = [
        orjson.loads(x)
        for x in CliRunner().invoke(app, ["cost", str(out), "--json"]).stdout.splitlines()
    ]
    assert (row["completed"], row["overflowed"], row["failed"]) == (2, 1, 0)
    assert row["cut_agent"] * 3 == row["replies_agent"] and row["cut_matcher"] == 0
    # show and the viewer's episode say so for the episode
    shown = CliRunner().invoke(app, ["show", str(out), "--seed", "100"]).stdout
    assert "replies cut at their token budget: agent " in shown
    rv = RunView(out)
    rv.refresh()
    view = rv.episode(rv.index.slugs()[0], 100)
    assert view is not None and view.cut["agent"][0] == view.cut["agent"][1] > 0
    other = rv.episode(rv.index.slugs()[0], 102)
    assert other is not None and other.cut["agent"][0] == 0
    # the report says so too
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    cut, made = row["cut_agent"], row["replies_agent"]
    assert f"- Replies cut at their token budget (finish_reason length): agent {cut}/{made}" in (
        report
    )
    assert f"{cut}/{made} agent replies (33%) cut at their token budget" in report


def test_a_run_whose_only_episode_overflowed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    (log,) = _run(out, "100")
    _rewrite(log, {0: "overflow"})
    result = CliRunner().invoke(app, ["cost", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("no completed episode to average a cost over:")
    assert "0 completed; left out 1 context overflows" in " ".join(result.stdout.split())


def test_the_warning_threshold() -> None:
    cell = CellKey(model="m", steps=5, density=0.15, arm="raw")
    assert cut_warnings({cell: {"agent": (5, 100)}}, lambda c: c.arm) == []  # 5%: not past
    (line,) = cut_warnings({cell: {"matcher": (6, 100)}}, lambda c: c.arm)
    assert line == (
        "warning: raw: 6/100 matcher replies (6%) cut at their token budget (finish_reason length)"
    )
    assert cut_replies([]) == {} and episode_counts([]) == {}


def test_the_cached_share_per_arm_beside_the_latency(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--model", "scripted/perfect", "--arms", "raw,checklist", "--steps", "5"]
    result = CliRunner().invoke(app, [*args, "--seeds", "100", "--out", str(out), "--no-live"])
    assert result.exit_code == 0, result.output
    asyncio.set_event_loop_policy(None)
    (raw,) = (out / "logs").glob("*__raw.jsonl")
    lines = [orjson.loads(x) for x in raw.read_bytes().splitlines()]
    for turn in lines[0]["turns"]:
        for call in turn["calls"]:
            call["cached_tokens"] = call["prompt_tokens"] if call["role"] == "agent" else None
    raw.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    text = " ".join(CliRunner().invoke(app, ["cost", str(out)]).stdout.split())
    assert "which the arms of a model share" in text
    assert "Cached share of prompt tokens: #1 raw 100%, #1 checklist not reported." in text
