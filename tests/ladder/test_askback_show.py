"""``ladder show`` and the viewer's turn view mark the ask-back exchanges (issue #38):
clarifying questions and answers, escalations and overrides, on their turns."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from ladder.app import app
from protocol import strings
from runner.rundir.logs import read_logs
from scoring.display.turns import turn_views
from scoring.replay.episode_score import score_episode
from tests.runner.arms.test_askback_oracle import _grid, run

runner = CliRunner()


async def test_show_and_view_mark_questions_escalations_and_overrides(tmp_path: Path) -> None:
    model = "scripted/always-book?matcher_none=0.2"
    variants = [{"arm": "enforce", "ask": "unresolved", "corruption": 1e-2, "escalate": True}]
    await run(tmp_path, _grid(model, [], variants, seeds="100-103"))
    records = list(read_logs(tmp_path).values())
    views = [v for r in records for v in turn_views(r, score_episode(r))]
    asked = [v for v in views if v.question is not None]
    assert asked and all(v.answer and v.ask_reason == "unresolved" for v in asked)
    overrides = [e for v in views for e in v.escalations if e.override]
    refused = [e for v in views for e in v.escalations if not e.override]
    assert overrides and refused
    assert {e.answer for e in overrides} == {strings.USER_CONFIRM}
    assert {e.answer for e in refused} == {strings.USER_REFUSE}
    assert all(e.text.startswith("[GATE ESCALATION] I refused the booking 'ref ") for e in refused)

    result = runner.invoke(app, ["show", str(tmp_path), "--arm", "enforce"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    heads = [ln for ln in out.splitlines() if ln.startswith(("-- turn ", "!! turn "))]
    shown = {r.spec.seed for r in records}
    assert len(shown) == 4
    assert any("ASKED BACK" in h for h in heads)
    assert any("OVERRIDE 1" in h for h in heads)
    assert any("ESCALATION REFUSED" in h for h in heads)
    assert "gate asked back (unresolved; first reading none):" in out
    assert f"      {strings.ASK_WHICH}" in out
    assert "[OVERRIDE (admitted once)]" in out and "[refused by the user]" in out
