"""A gate that did not gate says so (issue #41), on the embedded scripted endpoint with its
helper fault knobs: a matcher that answers malformed after its correction, a compile cut by
its budget, a revision that echoes the prompt's example. Each run is two seeds at S = 5."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol.state.compiled_parse import ECHO_ERROR
from runner.grid.expand import parse_grid
from scoring.results.lines import ContrastLine, HelperLine, decode_line
from tests.reliability_kit import grid_data, records, run_inprocess

ARMS = ("raw", "checklist", "directive", "enforce")


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)


def _run(tmp: Path, model: str, decoding: dict[str, Any] | None = None) -> Path:
    data = grid_data(seeds="100-101", arms=ARMS, models=[{"name": model, "endpoint": "embedded"}])
    data["decoding"].update(decoding or {})
    data["decoding"]["timeout_s"] = 30
    out = tmp / "run"
    asyncio.run(run_inprocess(parse_grid(data, source="test"), out))
    return out


def _lines(out: Path) -> list[Any]:
    result = CliRunner().invoke(app, ["score", str(out), "--json", "-j", "1"])
    assert result.exit_code == 0, result.output
    return [decode_line(x) for x in result.stdout.splitlines() if x.startswith("{")]


def _helpers(lines: list[Any]) -> dict[str, HelperLine]:
    return {x.cell.arm: x for x in lines if isinstance(x, HelperLine)}


def test_a_malformed_matcher_leaves_the_directive_gate_inert_and_says_why(
    tmp_path: Path,
) -> None:
    out = _run(tmp_path, "scripted/always-book?matcher_malformed=1")
    lines = _lines(out)
    gate = _helpers(lines)["directive"].gate
    assert gate.inert and gate.directives == 0 and gate.notices == 0
    assert gate.matcher_malformed == gate.matcher_turns > 0
    assert gate.why is not None and "matcher answers malformed after correction" in gate.why
    # the enforcement gate refused bookings on its own state: it acted
    enforce = _helpers(lines)["enforce"].gate
    assert not enforce.inert and enforce.notices > 0
    flagged = {(c.a, c.b): c.gate_inert for c in lines if isinstance(c, ContrastLine)}
    assert flagged[("checklist", "directive")] == ("directive",)
    assert flagged[("directive", "enforce")] == ("directive",)
    assert flagged[("raw", "checklist")] == ()
    text = CliRunner().invoke(app, ["score", str(out), "-j", "1"]).stdout
    assert "directive [gate inert]" in text
    report = tmp_path / "report.md"
    result = CliRunner().invoke(app, ["report", str(out), "--out", str(report)])
    assert result.exit_code == 0, result.output
    md = report.read_text()
    assert "> GATE INERT: 1 gate cell never gated" in md and "## Gate activity" in md
    assert "checklist -> directive [INERT: directive]" in md
    assert "directive: gate inert: no directive" in md
    assert "checklist -> directive [INERT: directive]" in text
    assert "Gate activity" in text and "INERT" in text
    assert "directive: gate inert: no directive, arm text or rejection notice" in text


def test_a_compile_cut_by_its_budget_is_reported_truncated_and_the_gate_admits_all(
    tmp_path: Path,
) -> None:
    """The enforcement gate on a failed (empty) compile: it holds no step, so it refuses
    nothing and admits every booking (docs/protocol.md, "A failed compile"); the cell is
    marked inert with the truncation named."""
    out = _run(
        tmp_path,
        "scripted/always-book",
        {"compiler_budget": {"no-think": 8, "thinking": 8}},
    )
    recs = records(out)
    enforce = [r for r in recs.values() if r.cell.arm == "enforce"]
    assert enforce
    for r in enforce:
        assert r.compile is not None and r.compile.graph == ()
        assert r.compile.graph_error is not None
        assert r.compile.graph_error.startswith("truncated: the reply was cut at its budget")
        assert r.compile.accuracy.dep == 0
        assert r.compile.accuracy.rewire is False  # an unreadable revision agrees with nothing
        assert all(not t.refused and not t.notices for t in r.turns)
    raw = {r.spec.seed: r for r in recs.values() if r.cell.arm == "raw"}
    for r in enforce:  # always-book behind a gate that holds no step books as raw does
        assert [t.admitted for t in r.turns] == [t.admitted for t in raw[r.spec.seed].turns]
    helpers = _helpers(_lines(out))
    for arm in ("directive", "enforce"):
        gate = helpers[arm].gate
        assert gate.inert and gate.compile_failed == gate.compile_empty == gate.compiles == 2
        assert gate.why is not None and "2/2 compiles failed" in gate.why
        assert "truncated" in gate.why


def test_a_revision_that_echoes_the_prompt_example_is_a_compile_error(tmp_path: Path) -> None:
    out = _run(tmp_path, "scripted/perfect?compile_echo=1")
    recs = [r for r in records(out).values() if r.compile is not None]
    assert recs
    for r in recs:
        info = r.compile
        assert info is not None
        assert info.revision_error == ECHO_ERROR
        assert info.revision.cancel is None and info.revision.rewires == {}
        assert not info.validator.passed and info.validator.malformed
        assert not info.accuracy.cancel and not info.accuracy.rewire
    gate = _helpers(_lines(out))["enforce"].gate
    assert gate.compile_failed == 2 and gate.inert  # every compile failed
    assert gate.why is not None and f"2x {ECHO_ERROR}" in gate.why


def test_a_gate_that_acts_is_not_flagged(tmp_path: Path) -> None:
    lines = _lines(_run(tmp_path, "scripted/perfect"))
    for h in _helpers(lines).values():
        assert not h.gate.inert and h.gate.why is None and h.gate.directives > 0
    assert all(not c.gate_inert for c in lines if isinstance(c, ContrastLine))


def test_the_viewer_and_cost_mark_the_inert_cell(tmp_path: Path) -> None:
    from runner.viewer.data import RunView

    out = _run(tmp_path, "scripted/always-book?matcher_malformed=1")
    view = RunView(out).cells()
    marks = {c.line.cell.arm: c.gate_inert for c in view.cells}
    assert marks["directive"] is not None and "matcher answers malformed" in marks["directive"]
    assert marks["enforce"] is None and marks["raw"] is None
    flagged = {(c.line.a, c.line.b): c.line.gate_inert for c in view.contrasts}
    assert flagged[("checklist", "directive")] == ("directive",)
    assert flagged[("raw", "checklist")] == ()
    again = RunView(out).cells()  # read back from the index file
    assert {c.line.cell.arm: c.gate_inert for c in again.cells} == marks
    text = CliRunner().invoke(app, ["cost", str(out)]).stdout
    assert "directive [gate inert]" in text
    assert "  directive: gate inert: no directive" in text


def test_raw_helper_replies_are_kept_bounded_and_shown(tmp_path: Path) -> None:
    from protocol.records import REPLY_KEEP, kept_reply
    from runner.gates.base import read_helper_log

    out = _run(tmp_path, "scripted/always-book?matcher_malformed=1&compile_echo=1")
    recs = [r for r in records(out).values() if r.cell.arm == "directive"]
    turn = next(t for r in recs for t in r.turns if t.matcher_outcome == "malformed")
    assert len(turn.matcher_replies) == 2  # the reply and the one after the correction
    assert all(x.startswith('{"step": ') for x in turn.matcher_replies)
    info = recs[0].compile
    assert info is not None and info.graph_reply is None  # read: kept in the cache only
    assert info.revision_reply is not None and '"sX"' in info.revision_reply
    ledger, _ = read_helper_log(out / "helpers.jsonl")
    assert ledger and all(len(x.replies) == len(x.calls) for x in ledger)
    text = CliRunner().invoke(app, ["show", str(out), "--arm", "directive", "--seed", "100"]).stdout
    assert "matcher reply after the correction request" in text
    assert f"compile error (revision): {ECHO_ERROR}" in text and "compiler's revision reply" in text
    long = "x" * (REPLY_KEEP + 50)
    assert kept_reply(long) == "x" * REPLY_KEEP + "... [cut: 50 more characters]"
    assert kept_reply("short") == "short"
