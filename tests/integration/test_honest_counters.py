"""Honest counters (issue #41) on the embedded scripted endpoint: cached prompt tokens "not
reported" where the server sends no ``prompt_tokens_details`` (never 0), the compile charged
to an arm that read it, helper needs and calls in one unit."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from runner.client.wire import cached_tokens
from runner.gates.base import read_helper_log
from runner.grid.expand import parse_grid
from scoring.analyses.cost import cost_rows
from serve.config import PrefixCacheConfig, ServerConfig
from tests.reliability_kit import grid_data, records, run_inprocess

ARMS = ("raw", "directive", "enforce")


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def _run(tmp: Path, model: str, server: ServerConfig | None = None) -> tuple[Path, str]:
    data = grid_data(seeds="100-101", arms=ARMS, models=[{"name": model, "endpoint": "embedded"}])
    data["decoding"]["timeout_s"] = 30
    out = tmp / "run"
    _, text = asyncio.run(run_inprocess(parse_grid(data, source="test"), out, server))
    return out, text


def test_the_wire_reads_no_report_as_none_and_a_report_as_its_count() -> None:
    assert cached_tokens({"prompt_tokens": 9}) is None
    assert cached_tokens({"prompt_tokens": 9, "prompt_tokens_details": None}) is None
    assert cached_tokens({"prompt_tokens_details": {"cached_tokens": 0}}) == 0
    assert cached_tokens({"prompt_tokens_details": {"cached_tokens": 7}}) == 7
    assert cached_tokens({"cached_tokens": 3}) == 3
    assert cached_tokens({"prompt_tokens_details": {"cached_tokens": "x"}}) == 0


def test_cached_tokens_are_not_reported_where_the_server_sends_none(tmp_path: Path) -> None:
    out, _ = _run(tmp_path, "scripted/perfect")  # the scripted server: details null
    recs = records(out)
    agent = [c for r in recs.values() for t in r.turns for c in t.calls if c.role == "agent"]
    assert agent and all(c.cached_tokens is None for c in agent)
    assert all(r.cached_tokens is None for r in recs.values())
    rows = cost_rows(recs.values())
    assert rows and all(r.cached_tokens is None and r.uncached_tokens is None for r in rows)
    text = CliRunner().invoke(app, ["cost", str(out)]).stdout
    assert "not reported" in text


def test_cached_tokens_are_counted_where_the_server_reports_them(tmp_path: Path) -> None:
    out, _ = _run(
        tmp_path, "scripted/perfect", ServerConfig(prefix_cache=PrefixCacheConfig(enabled=True))
    )
    recs = records(out)
    agent = [c for r in recs.values() for t in r.turns for c in t.calls if c.role == "agent"]
    assert agent and all(c.cached_tokens is not None for c in agent)
    assert sum(c.cached_tokens or 0 for c in agent) > 0
    rows = cost_rows(recs.values())
    assert all(r.cached_tokens is not None and r.cached_tokens > 0 for r in rows)


def test_the_compile_is_charged_to_an_arm_that_read_it_and_units_agree(tmp_path: Path) -> None:
    out, text = _run(tmp_path, "scripted/perfect?matcher_malformed=0.3")
    recs = records(out).values()
    made = [
        c for r in recs for t in r.turns for c in t.calls if c.role == "compiler" and not c.cached
    ]
    ledger, bad = read_helper_log(out / "helpers.jsonl")
    spent = [c for line in ledger if line.kind == "compile" for c in line.calls]
    assert not bad and len(spent) == 4  # two seeds, two calls each
    assert len(made) == len(spent)  # each precompiled compile charged once, to its reader
    rows = {r.cell.arm: r for r in cost_rows(recs)}
    assert rows["directive"].compiler_made + rows["enforce"].compiler_made == 2.0
    for arm in ("directive", "enforce"):
        r = rows[arm]
        # one unit: the calls needed are those made plus those served
        assert r.matcher_required == pytest.approx(r.matcher_made + r.matcher_cached)
        assert r.matcher_required > r.matcher_answers > 0  # correction requests are calls
    assert "answers needed" in text and "calls:" in text and "correction requests" in text
