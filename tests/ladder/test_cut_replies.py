"""``ladder score`` counts the replies cut at their token budget (finish_reason length) per
cell and role, in its table and ``--json``, with a warning line past
:data:`CUT_WARN_SHARE` (#49, item 8). The cuts are real: the embedded scripted endpoint
cuts a reply at the request's ``max_tokens`` (serve.endpoint.chat.shape), under an agent
budget of 8 tokens and a matcher budget of 3."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol.records import CellKey
from runner.rundir.records import load_records
from scoring.analyses.truncation import CUT_WARN_SHARE, cut_replies
from scoring.report.cut_table import cut_table
from scoring.report.tables import Labels
from scoring.results.cells import cell_line
from scoring.results.lines import CellLine

CUT_ARGS = ["--max-tokens", "8", "--set", "decoding.matcher_budget.no-think=3"]


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def cut_run(out: Path, *extra: str) -> Path:
    """A scripted/perfect run of raw and enforce over seeds 100-101 with ``extra`` flags;
    the run's end warns of the cut replies when any cell passes the threshold."""
    args = ["run", "--model", "scripted/perfect", "--arms", "raw,enforce", "--steps", "5"]
    args += ["--seeds", "100-101", "--out", str(out), "--no-live", *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    asyncio.set_event_loop_policy(None)
    warned = "cut at their token budget" in " ".join(result.output.split())
    assert warned == bool(extra), result.output
    return out


@pytest.fixture(scope="module")
def cut_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return cut_run(tmp_path_factory.mktemp("cut") / "run", *CUT_ARGS)


def _cells(out: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["score", str(out), "--json"])
    assert result.exit_code == 0, result.output
    rows = [orjson.loads(x) for x in result.stdout.splitlines()]
    return {r["cell"]["arm"]: r for r in rows if r["type"] == "cell"}


def test_score_counts_cut_replies_per_cell_and_role(cut_dir: Path) -> None:
    records, _ = load_records(cut_dir)
    expected = cut_replies(records)
    cells = _cells(cut_dir)
    for cell, roles in expected.items():
        assert {k: tuple(v) for k, v in cells[cell.arm]["cut"].items()} == roles
    raw, enforce = cells["raw"]["cut"], cells["enforce"]["cut"]
    assert raw["agent"][0] > 0 and raw["matcher"] == raw["compiler"] == [0, 0]
    assert enforce["matcher"][0] == enforce["matcher"][1] > 0  # 3 tokens: every answer cut
    assert enforce["compiler"][1] > 0
    # the terminal: the table, then a warning per cell and role past the threshold
    result = CliRunner().invoke(app, ["score", str(cut_dir)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert all(len(x) <= 80 for x in out.splitlines())
    n, made = raw["agent"]
    assert f"#1   raw      {n}/{made} ({n / made:.0%}) !" in out
    text = " ".join(out.split())
    assert f"warning: #1 raw: {n}/{made} agent replies ({n / made:.0%}) cut at their" in text
    m = enforce["matcher"][1]
    assert f"warning: #1 enforce: {m}/{m} matcher replies (100%) cut at their token" in text
    # --episodes --json: each episode's cut replies per role
    eps = CliRunner().invoke(app, ["score", str(cut_dir), "--episodes", "--json"]).stdout
    rows = [orjson.loads(x) for x in eps.splitlines()]
    assert sum(r["cut_agent"] for r in rows if r["arm"] == "raw") == n
    assert sum(r["cut_matcher"] for r in rows if r["arm"] == "enforce") == m
    # --json: the warnings on stderr, named in full (no legend there)
    err = CliRunner().invoke(app, ["score", str(cut_dir), "--json"]).stderr
    assert "warning: scripted/perfect no-think S=5 rho=0.15 procurement amended raw: " in err


def test_a_run_with_no_cut_reply_says_so(tmp_path: Path) -> None:
    out = cut_run(tmp_path / "run")
    cells = _cells(out)
    assert cells["raw"]["cut"]["agent"][0] == 0 < cells["raw"]["cut"]["agent"][1]
    made = sum(m for c in cells.values() for _, m in c["cut"].values())
    text = CliRunner().invoke(app, ["score", str(out)]).stdout
    assert f"Replies cut at their token budget (finish_reason length): none of {made} " in text
    assert "warning:" not in text


def test_the_table_marks_only_shares_past_the_threshold() -> None:
    """5% of a role's replies is not past the threshold; 6% is; lines older than the
    count give no table."""
    key = CellKey(model="m", steps=5, density=0.15, arm="raw")

    def _line(key: CellKey, cut: dict[str, tuple[int, int]]) -> CellLine:
        return msgspec.structs.replace(cell_line(key, []), cut=cut)

    at, past = _line(key, {"agent": (5, 100)}), _line(key, {"agent": (6, 100)})
    assert CUT_WARN_SHARE == 0.05
    assert "5/100 (5%) !" not in cut_table([at], Labels.of([at]))
    assert "warning" not in cut_table([at], Labels.of([at]))
    table = cut_table([past], Labels.of([past]))
    assert "6/100 (6%) !" in table and "warning: #1 raw: 6/100 agent replies" in table
    assert cut_table([_line(key, {})], Labels()) == ""
