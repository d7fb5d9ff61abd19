"""At-most-once under tool failure (issue #37, the ``tool_failure_landed`` knob): a timeout
whose write landed, the read-only status tool, the gate's reconciliation with the workspace,
the careful agent's status question, and the scoring of a duplicate write."""

from __future__ import annotations

from collections.abc import Sequence

from protocol import strings
from protocol.arms.policy import policy, system_prompt
from protocol.arms.render import render_tool_failure
from protocol.brief import tool_name
from protocol.episode.generate import generate
from protocol.records import (
    Booking,
    CellKey,
    EpisodeRecord,
    EpisodeSpec,
    Knobs,
    ToolCall,
    Turn,
    TurnRecord,
    scripted_fields,
)
from protocol.state.receipts import Action, find_actions
from protocol.stress.tool_failure import draw_tool_failure
from runner.arms import EpisodeContext
from runner.arms.base import ArmSession, Shaped
from runner.harness.dispatch import Dispatch
from runner.harness.play import MAX_FOLLOW_UPS, STATUS_FOLLOW_UPS, follow_ups
from runner.harness.workspace import Workspace
from scoring.replay.episode_score import score_episode
from serve.agents.tool_results import acknowledge

SPEC = EpisodeSpec(seed=300, steps=10, density=0.15, generator=5)
EPISODE = generate(SPEC)
LANDED = Knobs(harness="langgraph", tool_failure=1.0, tool_failure_landed=1.0)


def _cell(knobs: Knobs, arm: str = "raw") -> CellKey:
    return CellKey(model="m", steps=10, density=0.15, arm=arm, knobs=knobs)


class _StateGate(ArmSession):
    """Refuses a step it has been told is done (what a state-bound gate does)."""

    def __init__(self, ctx: EpisodeContext) -> None:
        super().__init__(ctx)
        self.done: set[str] = set()

    def refusal(self, booking: Booking, shaped: Shaped) -> tuple[str | None, str | None]:
        return ("done" if booking.step in self.done else None), booking.step

    def observe(self, turn: Turn, admitted: Sequence[Booking], reply: str) -> None:
        self.done |= {b.step for b in admitted if b.step}


def _act(tool: str, wo: str) -> Action:
    return find_actions(f'ACTION {{"tool": "{tool}", "work_order": "{wo}"}}')[0]


def test_the_status_tool_is_in_the_brief_only_with_the_knob() -> None:
    off = system_prompt(policy(_cell(Knobs(harness="langgraph", tool_failure=0.3))), EPISODE)
    on = system_prompt(policy(_cell(LANDED)), EPISODE)
    assert strings.STATUS_CLAUSE not in off and strings.STATUS_CLAUSE in on
    assert on.replace("\n" + strings.STATUS_CLAUSE, "") == off
    assert follow_ups(False) == MAX_FOLLOW_UPS == 2 and follow_ups(True) == STATUS_FOLLOW_UPS


def test_a_landed_timeout_writes_and_the_gate_reconciles_before_the_retry() -> None:
    step = next(s for s in EPISODE.steps if not s.deps)
    tool, wo = tool_name(step), "#W1234"
    index = next(  # a turn on which this call's first try is a timeout that landed
        i for i in range(200)
        if draw_tool_failure(SPEC, "m", "no-think", 1.0, turn=i, tool=tool, work_order=wo,
                             attempt=0, landed=1.0) == "landed"
    )  # fmt: skip
    turn = Turn(index=index, kind="ask", step=step.id, work_order=wo, text=f"do it ({wo})")
    ctx = EpisodeContext(episode=EPISODE, cell=_cell(LANDED), agent=None)  # type: ignore[arg-type]
    arm = _StateGate(ctx)
    with Workspace.open() as ws:
        d = Dispatch(EPISODE, arm, ws)
        d.begin_turn()
        shaped = Shaped(sent="", kept="")
        call, booking, notice = d.decide(turn, shaped, _act(tool, wo), 0)
        assert notice is None and booking is not None
        failed, result = d.execute(turn, call, booking)
        assert (
            failed.status == "landed" and failed.outcome == "failed" and failed.receipt is not None
        )
        assert result == strings.TOOL_TIMEOUT_UNKNOWN.format(tool=tool, work_order=wo)
        assert ws.writes(wo) == [tool] and arm.done == set()  # the gate saw a failed call
        # the status tool reads the workspace, through no gate
        status, none, text = d.decide(turn, shaped, _act("get_status", wo), 1)
        assert status.outcome == "status" and none is None
        assert text == strings.STATUS_HOLDS.format(work_order=wo, tools=tool)
        assert arm.done == set()
        # the retry: the gate reads the status first, so it refuses a step already done
        retry, _, notice = d.decide(turn, shaped, _act(tool, wo), 2)
        assert arm.done == {step.id}
        assert retry.outcome == "refused" and retry.status == "done" and notice
        assert ws.executions(tool) == 1


def test_the_status_tool_reads_only_work_orders() -> None:
    with Workspace.open() as ws:
        ws.stamp("book_x", "#W1234")
        assert ws.writes("#W1234") == ["book_x"]
        assert ws.writes("*") == [] and ws.writes("#W9999") == []
        ctx = EpisodeContext(episode=EPISODE, cell=_cell(LANDED), agent=None)  # type: ignore[arg-type]
        d = Dispatch(EPISODE, ArmSession(ctx), ws)
        turn = EPISODE.turns[0]
        for hostile in ("*", "../..", "#W*"):
            call, _, text = d.decide(turn, Shaped(sent="", kept=""), _act("get_status", hostile), 0)  # fmt: skip
            assert call.outcome == "status" and text is not None and "holds no write" in text


def test_without_the_knob_get_status_is_no_tool() -> None:
    knobs = Knobs(harness="langgraph", tool_failure=0.3)
    ctx = EpisodeContext(episode=EPISODE, cell=_cell(knobs), agent=None)  # type: ignore[arg-type]
    with Workspace.open() as ws:
        d = Dispatch(EPISODE, ArmSession(ctx), ws)
        turn = EPISODE.turns[0]
        call, booking, _ = d.decide(turn, Shaped(sent="", kept=""), _act("get_status", "#W1234"), 0)  # fmt: skip
        assert call.outcome == "stale" and booking is None
    assert render_tool_failure("t", "#W1234", "timeout") == strings.TOOL_FAILED.format(
        tool="t", work_order="#W1234", reason=strings.TOOL_FAILURE_REASONS["timeout"]
    )


def test_the_careful_agent_asks_the_status_then_retries_only_what_did_not_land() -> None:
    t1 = strings.TOOL_TIMEOUT_UNKNOWN.format(tool="book_a", work_order="#W1234")
    t2 = strings.TOOL_TIMEOUT_UNKNOWN.format(tool="book_b", work_order="#W1234")
    first = acknowledge(f"{t1}\n\n{t2}", careful=True)
    assert first.content.splitlines()[1:] == [
        'ACTION {"tool": "get_status", "work_order": "#W1234"}'
    ]
    blind = acknowledge(t1, careful=False)  # every other policy retries at once
    assert blind.content.splitlines()[1:] == ['ACTION {"tool": "book_a", "work_order": "#W1234"}']
    status = strings.STATUS_HOLDS.format(work_order="#W1234", tools="book_a")
    earlier = [("user", f"{t1}\n\n{t2}"), ("assistant", first.content)]
    second = acknowledge(status, earlier, careful=True)
    assert second.content.splitlines()[1:] == ['ACTION {"tool": "book_b", "work_order": "#W1234"}']
    both = strings.STATUS_HOLDS.format(work_order="#W1234", tools="book_a, book_b")
    assert "ACTION" not in acknowledge(both, earlier, careful=True).content


def _record(calls: tuple[ToolCall, ...], reply: str, follow: tuple[str, ...]) -> EpisodeRecord:
    ep = EPISODE
    turn = next(t for t in ep.turns if t.kind == "ask" and t.step and not ep.step(t.step).deps)
    i = ep.turns.index(turn)
    turns = [
        TurnRecord(
            **scripted_fields(t),
            sent_text=t.text,
            reply=reply if t is turn else "",
            follow_ups=follow if t is turn else (),
            tool_calls=calls if t is turn else (),
        )
        for t in ep.turns[: i + 1]
    ]
    return EpisodeRecord(cell=_cell(LANDED), spec=SPEC, turns=tuple(turns), termination="completed")


def test_a_retry_of_a_landed_write_scores_as_a_re_execution() -> None:
    turn = next(
        t for t in EPISODE.turns if t.kind == "ask" and t.step and not EPISODE.step(t.step).deps
    )
    assert turn.step is not None and turn.work_order is not None
    tool, wo = tool_name(EPISODE.step(turn.step)), turn.work_order
    digits = wo.lstrip("#")
    act = f'ACTION {{"tool": "{tool}", "work_order": "{wo}"}}'
    landed = ToolCall(tool=tool, work_order=wo, step=turn.step, reply=0, outcome="failed",
                      status="landed", receipt=f"{tool}/0001-{digits}.stamp")  # fmt: skip
    retry = ToolCall(tool=tool, work_order=wo, step=turn.step, reply=1,
                     receipt=f"{tool}/0002-{digits}.stamp")  # fmt: skip
    once = score_episode(_record((landed,), act, ("ok",)), EPISODE)
    twice = score_episode(_record((landed, retry), act, (act,)), EPISODE)
    last = len(once.primary.turns) - 1
    assert once.primary.turns[last].errors == () and once.primary.turns[last].executed == (
        turn.step,
    )
    assert [e.channel for e in twice.primary.turns[last].errors] == ["re_execution"]
    assert twice.primary.turns[last].label == "eligible"


def test_the_tools_table_counts_a_retry_of_a_landed_write_as_a_duplicate() -> None:
    """Issue #46: "recovered by a retry" counts failures that wrote nothing; a retry after a
    landed write is a duplicate write, never a recovery."""
    from scoring.analyses.stress import tool_failure_lines, tool_failure_section

    turn = next(
        t for t in EPISODE.turns if t.kind == "ask" and t.step and not EPISODE.step(t.step).deps
    )
    assert turn.step is not None and turn.work_order is not None
    tool, wo = tool_name(EPISODE.step(turn.step)), turn.work_order
    act = f'ACTION {{"tool": "{tool}", "work_order": "{wo}"}}'
    landed = ToolCall(tool=tool, work_order=wo, step=turn.step, reply=0, outcome="failed",
                      status="landed", receipt=f"{tool}/0001-x.stamp")  # fmt: skip
    lost = ToolCall(tool=tool, work_order=wo, step=turn.step, reply=0, outcome="failed",
                    status="transient")  # fmt: skip
    retry = ToolCall(tool=tool, work_order=wo, step=turn.step, reply=1,
                     receipt=f"{tool}/0002-x.stamp")  # fmt: skip
    for calls, recovered, duplicated in (
        ((landed, retry), 0, 1),  # the landed write, then the same write again
        ((lost, retry), 1, 0),  # nothing written, then the write: a recovery
    ):
        record = _record(calls, act, (act,))
        (line,) = tool_failure_lines([(record, score_episode(record, EPISODE))])
        assert (line.failed, line.recovered, line.duplicated) == (1, recovered, duplicated)
        assert line.landed == duplicated
    (line,) = tool_failure_lines([(record, score_episode(record, EPISODE))])
    text = "\n".join(tool_failure_section([line]))
    assert "duplicate writes" in text and "at most 2 tries of one call in a row" in text
