"""Tools that fail, the tool_failure knob of the tool harness (issue #31; protocol.stress.tool_failure,
docs/stress.md): the draw, a failed call's effects (none), a retry after a failure (no
re-execution), the gates advancing on successful results only, the scripted agents retrying,
the grid, the report section and the Holm family."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import runner.harness.dispatch
from protocol.brief import tool_name
from protocol.episode.generate import generate
from protocol.records import CellKey, EpisodeRecord, EpisodeSpec, Knobs, Turn
from protocol.state.machine import TaskState
from protocol.state.receipts import Action
from protocol.stress.tool_failure import FAILURE_KINDS, draw_tool_failure
from runner.arms import EpisodeContext
from runner.arms.base import Shaped
from runner.arms.gates import EnforcementGate
from runner.grid.expand import GridError, parse_grid
from runner.harness.dispatch import Dispatch
from runner.harness.workspace import Workspace
from scoring.analyses.registry import analysis_sections, log_analyses
from scoring.analyses.stress import tool_failure_lines
from scoring.replay.episode_score import score_episode
from scoring.replay.harness import ToolTable, read_harness_turn
from serve.agents.tool_results import acknowledge

SPEC = EpisodeSpec(seed=300, steps=10, density=0.15, generator=4)
EPISODE = generate(SPEC)
HARNESS = Knobs(harness="langgraph", tool_failure=0.3)


def _draw(rate: float, attempt: int = 0, turn: int = 0, tool: str = "t") -> Any:
    return draw_tool_failure(
        SPEC, "m", "no-think", rate, turn=turn, tool=tool, work_order="#W1234", attempt=attempt
    )


def test_the_draw_is_a_pure_function_of_the_call_at_its_rate() -> None:
    assert all(_draw(0.0, turn=t) is None for t in range(200))
    assert all(_draw(1.0, turn=t) in FAILURE_KINDS for t in range(200))
    draws = [_draw(0.3, turn=t, attempt=a) for t in range(300) for a in range(3)]
    assert draws == [_draw(0.3, turn=t, attempt=a) for t in range(300) for a in range(3)]
    failed = [d for d in draws if d is not None]
    assert abs(len(failed) / len(draws) - 0.3) < 0.04
    assert {d: failed.count(d) for d in FAILURE_KINDS}.keys() == set(FAILURE_KINDS)
    assert min(failed.count(d) for d in FAILURE_KINDS) > len(failed) / 5


def _turn(step: str, wo: str = "#W1234") -> Turn:
    return Turn(index=0, kind="ask", step=step, work_order=wo, text=f"please do it ({wo})")


def _gate() -> EnforcementGate:
    cell = CellKey(model="m", steps=10, density=0.15, arm="enforce", knobs=HARNESS)
    arm = EnforcementGate(EpisodeContext(episode=EPISODE, cell=cell, agent=None))  # type: ignore[arg-type]
    arm.gate = TaskState({s.id: s.deps for s in EPISODE.steps})
    arm.codes = {s.code: s.id for s in EPISODE.steps}
    return arm


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The failures the dispatch draws, in order (None: the call succeeds)."""
    plan: list[Any] = []
    monkeypatch.setattr(runner.harness.dispatch, "draw_tool_failure", lambda *a, **k: plan.pop(0))
    yield plan


@pytest.mark.parametrize("kind", FAILURE_KINDS)
def test_a_failed_call_changes_nothing_and_its_retry_is_no_re_execution(
    tmp_path: Path, scripted: list[Any], kind: str
) -> None:
    dep = next(s for s in EPISODE.steps if len(s.deps) == 1 and not EPISODE.step(s.deps[0]).deps)
    pre = EPISODE.step(dep.deps[0])
    arm, ws = _gate(), Workspace(tmp_path)
    d = Dispatch(EPISODE, arm, ws)
    turn, shaped, tool = (
        _turn(pre.id),
        Shaped(sent="", kept="", matched_step=pre.id),
        tool_name(pre),
    )
    action = Action(tool=tool, work_order="#W1234", start=0, end=0)
    d.begin_turn()
    scripted += [kind, None]
    call, booking, _ = d.decide(turn, shaped, action, 0)
    assert call.outcome == "executed" and booking is not None
    failed, result = d.execute(turn, call, booking)
    assert (failed.outcome, failed.status, failed.receipt) == ("failed", kind, None)
    assert result.startswith("[TOOL ERROR]") and "#W1234" in result
    assert ws.receipts() == {} and list(tmp_path.rglob("*.tmp")) == []  # nothing written
    assert arm.gate.status(pre.id) == "todo"  # the gate did not advance
    assert arm.refusal(_booking(dep), shaped)[0] == "blocked"
    # the retry with the same tool and work order goes through the gate and executes once
    again, booking2, _ = d.decide(turn, shaped, action, 1)
    assert again.outcome == "executed" and booking2 is not None
    done, _ = d.execute(turn, again, booking2)
    assert done.receipt is not None and ws.executions(tool) == 1
    assert arm.gate.status(pre.id) == "done"
    from protocol.records import TurnRecord, scripted_fields

    record = TurnRecord(
        **scripted_fields(turn),
        reply=f'ACTION {{"tool": "{tool}", "work_order": "#W1234"}}',
        follow_ups=(f'ACTION {{"tool": "{tool}", "work_order": "#W1234"}}',),
        tool_calls=(failed, done),
    )
    read = read_harness_turn(record, ToolTable(EPISODE))
    assert read.primary == (pre.id,)  # one execution: the retry is not a re-execution


def _booking(step: Any) -> Any:
    from protocol.records import Booking

    return Booking(step=step.id, code=step.code, work_order="#W1234")


def test_the_scripted_agents_retry_a_failed_call_with_the_same_work_order() -> None:
    tool = tool_name(EPISODE.steps[0])
    from protocol.arms.render import render_tool_failure, render_tool_result

    answer = acknowledge(render_tool_failure(tool, "#W1234", "timeout"))
    assert f'ACTION {{"tool": "{tool}", "work_order": "#W1234"}}' in answer.content
    assert "ACTION" not in acknowledge(render_tool_result(tool, "#W1234", "r")).content


def test_the_grid_needs_the_harness_and_a_rate_in_range() -> None:
    def problems(**v: Any) -> str:
        raw = {"run": {"variants": [{"arm": "raw", **v}]}, "models": [{"name": "scripted/perfect"}]}
        try:
            parse_grid(raw)
        except GridError as e:
            return str(e)
        return ""

    assert "needs the tool harness" in problems(tool_failure=0.1)
    assert "[0, 1]" in problems(tool_failure=1.5, harness="langgraph")
    assert problems(tool_failure=0.1, harness="langgraph") == ""


# --- a run on the embedded endpoint ---------------------------------------------------------

ARMS = ["raw", "enforce"]


def _run(tmp: Path, rates: list[float]) -> list[EpisodeRecord]:
    from rich.console import Console

    from runner.execution.grid_run import run_async
    from runner.rundir.records import load_records

    variants = [{"arm": a, "harness": "langgraph", "tool_failure": r} for a in ARMS for r in rates]
    grid = {
        "run": {
            "seeds": "300-301",
            "graphs": [{"steps": 10, "density": 0.15}],
            "arms": [],
            "variants": variants,
        },
        "models": [{"name": "scripted/perfect"}],
    }
    asyncio.run(run_async(parse_grid(grid), tmp, console=Console(file=io.StringIO()), live=False))
    records, _ = load_records(tmp)
    return sorted(records, key=lambda r: (r.cell.slug(), r.spec.seed))


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[EpisodeRecord]:
    return _run(tmp_path_factory.mktemp("toolfail"), [0.0, 0.3])


def _played(r: EpisodeRecord) -> list[Any]:
    return [(t.user_text, t.sent_text, t.reply, t.follow_ups, t.tool_calls) for t in r.turns]


def test_failures_change_only_the_failed_turns_and_after(
    records: list[EpisodeRecord], tmp_path: Path
) -> None:
    plain = {(r.cell.arm, r.spec.seed): r for r in records if r.cell.knobs.tool_failure == 0}
    alone = _run(tmp_path, [0.0])  # rate-0 cells run alone: the same episodes
    assert [_played(r) for r in alone] == [_played(r) for r in plain.values()]
    stressed = [r for r in records if r.cell.knobs.tool_failure > 0]
    assert stressed and all(score_episode(r).counted for r in stressed)
    for r in stressed:
        base = plain[(r.cell.arm, r.spec.seed)]
        first = next(
            (i for i, t in enumerate(r.turns) if any(c.outcome == "failed" for c in t.tool_calls)),
            len(r.turns),
        )
        assert _played(r)[:first] == _played(base)[:first]
        ws = [c for t in r.turns for c in t.tool_calls if c.outcome == "failed"]
        assert all(c.receipt is None and c.status in FAILURE_KINDS for c in ws)


def test_the_report_gives_success_and_channels_per_rate(records: list[EpisodeRecord]) -> None:
    pairs = [(r, score_episode(r)) for r in records]
    lines = tool_failure_lines(pairs)
    by = {(x.cell.arm, x.rate): x for x in lines}
    assert set(by) == {(a, r) for a in ARMS for r in (0.0, 0.3)}
    for a in ARMS:
        assert by[(a, 0.0)].failed == 0 and by[(a, 0.0)].successes == 2
        hit = by[(a, 0.3)]
        assert hit.failed > 0 and 0 < hit.recovered <= hit.failed
        # the perfect agent retries: whatever it loses is omissions or what follows them
        assert hit.channels["re_execution"] == 0 and hit.channels["superseded"] == 0
    section = "\n".join(analysis_sections(log_analyses(pairs)))
    assert "## Tools that fail" in section and "| enforce | 0.3 |" in section


def test_tool_failure_contrasts_form_their_own_family(records: list[EpisodeRecord]) -> None:
    from scoring.results.lines import ContrastLine
    from scoring.results.offline import rescore

    lines = [x for x in rescore(records) if isinstance(x, ContrastLine)]
    stress = [c for c in lines if c.table == "Stress: tool failure"]
    assert len(stress) == 2 * len(ARMS)  # each arm at 0.3 against itself at 0, both scorings
    assert {c.family for c in stress} == {"Stress: tool failure contrasts | scripted/perfect"}
    for c in stress:  # the reference is the same cell with the rate alone at 0
        assert c.b == c.a.removesuffix("]") + ",tool_failure=0.3]"


def test_the_viewer_shows_the_failed_results_as_injected(records: list[EpisodeRecord]) -> None:
    from scoring.display.turns import turn_views

    r = next(
        r for r in records if any(c.outcome == "failed" for t in r.turns for c in t.tool_calls)
    )
    views = turn_views(r, score_episode(r))
    shown = [x for v in views for x in v.tool_failures]
    failed = [c for t in r.turns for c in t.tool_calls if c.outcome == "failed"]
    assert len(shown) == len(failed) and all(x.startswith("[TOOL ERROR]") for x in shown)
