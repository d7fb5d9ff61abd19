"""The tool harness's parts: the brief, the workspace and its stamps, the dispatch (gate and
executor, calls admitted one by one), the LangGraph graph, and scoring from the stamps."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import msgspec
import pytest

from protocol import strings
from protocol.brief import render_brief, tool_name
from protocol.episode.generate import generate
from protocol.records import Booking, CallRecord, CellKey, EpisodeSpec, Knobs, Turn
from protocol.state.machine import TaskState
from protocol.state.receipts import Action, find_actions
from runner.arms import EpisodeContext, make_arm
from runner.arms.base import ArmSession, Shaped
from runner.client.endpoint import Reply
from runner.harness import run_harness_episode
from runner.harness.dispatch import Dispatch
from runner.harness.graph import NODES, build_graph
from runner.harness.play import Play
from runner.harness.workspace import Workspace, stamp_text
from scoring.replay.episode_score import score_episode

SPEC = EpisodeSpec(seed=300, steps=10, density=0.15)
EPISODE = generate(SPEC)
HARNESS = Knobs(harness="langgraph")


def _action(tool: str, wo: str) -> str:
    return "ACTION " + json.dumps({"tool": tool, "work_order": wo})


def _turn(step: str, wo: str = "#W1234") -> Turn:
    return Turn(index=0, kind="ask", step=step, work_order=wo, text=f"please do it ({wo})")


class _Gate(ArmSession):
    """Refuses bookings of the steps in ``refuse``; admits the others."""

    def __init__(self, ctx: EpisodeContext, refuse: set[str]) -> None:
        super().__init__(ctx)
        self.refuse = refuse
        self.seen: list[str] = []

    def refusal(self, booking: Booking, shaped: Shaped) -> tuple[str | None, str | None]:
        return ("blocked" if booking.step in self.refuse else None), booking.step

    def observe(self, turn: Turn, admitted: Sequence[Booking], reply: str) -> None:
        self.seen += [b.step for b in admitted if b.step]


def _ctx(arm: str = "raw", knobs: Knobs = HARNESS, agent: object = None) -> EpisodeContext:
    cell = CellKey(model="test", steps=10, density=0.15, arm=arm, knobs=knobs)
    return EpisodeContext(episode=EPISODE, cell=cell, agent=agent)  # type: ignore[arg-type]


def test_harness_brief_carries_the_tool_clause_instead_of_the_ref_protocol() -> None:
    brief = render_brief(EPISODE.steps, "amended", harness=True)
    assert strings.TOOL_CLAUSE in brief
    assert strings.BRIEF_EXECUTION_PROTOCOL not in brief
    assert strings.ONE_SHOT in brief
    for s in EPISODE.steps:  # every step is a tool, listed in the brief
        assert strings.TOOL_STEP_SUFFIX.format(tool=tool_name(s)) in brief
    # Appendix B.1, verbatim
    assert strings.TOOL_CLAUSE == (
        'TOOLS: to carry out a step, emit exactly one line in your reply: ACTION {"tool": '
        '"<tool name>", "work_order": "#W1234"} using the work order number from my current '
        "message. The system executes it and returns a result. Never emit an ACTION for work "
        "you should not perform in this turn; if a step is blocked or cancelled, say why instead."
    )


def test_workspace_one_stamp_per_execution_and_cleaned(tmp_path: Path) -> None:
    with Workspace.open() as ws:
        root = ws.root
        a = ws.stamp("t_one", "#W1111")
        b = ws.stamp("t_one", "#W2222")  # a second stamp: a re-execution
        c = ws.stamp("t_two", "#W1111")
        assert len({a, b, c}) == 3
        assert ws.executions("t_one") == 2 and ws.executions("t_two") == 1
        assert ws.receipts() == {
            a: stamp_text("t_one", "#W1111"),
            b: stamp_text("t_one", "#W2222"),
            c: stamp_text("t_two", "#W1111"),
        }
        assert (root / a).read_text() == "t_one #W1111"
    assert not root.exists()


def test_workspace_is_removed_when_the_episode_is_cancelled() -> None:
    with pytest.raises(KeyboardInterrupt), Workspace.open() as ws:
        ws.stamp("t", "#W1000")
        root = ws.root
        raise KeyboardInterrupt
    assert not root.exists()


def test_dispatch_refused_call_stamps_nothing_and_calls_are_admitted_in_order(
    tmp_path: Path,
) -> None:
    s1, s2 = EPISODE.steps[0], EPISODE.steps[1]
    t1, t2 = tool_name(s1), tool_name(s2)
    arm = _Gate(_ctx(), refuse={s2.id})
    ws = Workspace(tmp_path)
    d = Dispatch(EPISODE, arm, ws)
    turn, shaped = _turn(s1.id), Shaped(sent="", kept="")
    d.begin_turn()
    outcomes = []
    for a in find_actions("\n".join([_action(t1, "#W1234"), _action(t2, "#W1234")])):
        call, booking, notice = d.decide(turn, shaped, a, 0)
        if call.outcome == "executed":
            assert booking is not None and notice is None
            assert arm.seen == []  # nothing observed before the executor runs
            call, result = d.execute(turn, call, booking)
            assert call.receipt is not None and call.receipt in result
            assert arm.seen == [s1.id]  # told at once: the next call is judged after it
        else:
            assert notice is not None and t2 in notice and "#W1234" in notice
        outcomes.append(call.outcome)
    assert outcomes == ["executed", "refused"]
    assert ws.executions(t1) == 1 and not (tmp_path / t2).exists()  # refused: no stamp
    # the same tool and work order again in the turn is the execution already made
    again, _, _ = d.decide(turn, shaped, Action(tool=t1, work_order="#W1234", start=0, end=0), 1)
    assert again.outcome == "repeat" and ws.executions(t1) == 1
    stale, b, _ = d.decide(turn, shaped, Action(tool=t1, work_order="#W9", start=0, end=0), 1)
    assert stale.outcome == "stale" and b is None
    unknown, _, _ = d.decide(
        turn, shaped, Action(tool="nope", work_order="#W1234", start=0, end=0), 1
    )
    assert unknown.outcome == "stale" and unknown.step is None
    assert len(ws.receipts()) == 1


def test_enforcement_judges_each_call_on_the_state_the_previous_calls_produced(
    tmp_path: Path,
) -> None:
    """A prerequisite executed in the same reply unblocks its dependant (state-bound)."""
    from runner.arms.gates import EnforcementGate

    dep = next(s for s in EPISODE.steps if len(s.deps) == 1 and not EPISODE.step(s.deps[0]).deps)
    pre = EPISODE.step(dep.deps[0])
    arm = EnforcementGate(_ctx("enforce"))
    arm.gate = TaskState({s.id: s.deps for s in EPISODE.steps})
    arm.codes = {s.code: s.id for s in EPISODE.steps}
    d = Dispatch(EPISODE, arm, Workspace(tmp_path))
    shaped = Shaped(sent="", kept="", matched_step=dep.id)
    turn = _turn(dep.id)
    d.begin_turn()
    # the step first: blocked, refused; then its prerequisite; then the step again
    order = [(dep, "refused"), (pre, "executed")]
    for step, want in order:
        call, booking, _ = d.decide(
            turn, shaped, Action(tool=tool_name(step), work_order="#W1234", start=0, end=0), 0
        )
        assert call.outcome == want, step.id
        if want == "executed":
            assert booking is not None
            d.execute(turn, call, booking)
    d.begin_turn()  # a fresh reply of a new request for the same step: now eligible
    call, _, _ = d.decide(
        _turn(dep.id, "#W4321"),
        shaped,
        Action(tool=tool_name(dep), work_order="#W4321", start=0, end=0),
        0,
    )
    assert call.outcome == "executed"


class _Script:
    """An in-process agent: books the requested step's tool once per request."""

    def __init__(self) -> None:
        self.calls: list[list[dict[str, str]]] = []

    async def __call__(self, messages: list[dict[str, str]]) -> Reply:
        self.calls.append(messages)
        last = messages[-1]["content"]
        text = "ok"
        if not last.startswith("[TOOL RESULT]"):
            for s in EPISODE.steps:
                if s.text in last and "#W" in last:
                    wo = "#W" + last.split("#W")[1][:4]
                    text = f"doing it\n{_action(tool_name(s), wo)}\n{_action(tool_name(s), wo)}"
        return Reply(content=text, reasoning="", call=CallRecord(role="agent"))


def test_graph_has_the_nodes_and_the_episode_scores_from_its_stamps() -> None:
    agent = _Script()
    ctx = _ctx(agent=agent)
    with Workspace.open() as ws:
        graph = build_graph(Play(ctx, make_arm(ctx), ws))
        assert set(NODES) <= set(graph.get_graph().nodes)

    import asyncio

    record = asyncio.run(run_harness_episode(ctx))
    assert record.termination == "completed"
    # a harness record carries the flat keys and totals of every log record
    assert record.slug == ctx.cell.slug() and record.arm == ctx.cell.arm
    assert record.agent_calls == sum(c.role == "agent" for t in record.turns for c in t.calls)
    assert len(record.turns) >= len(EPISODE.turns)
    executed = [c for t in record.turns for c in t.tool_calls if c.outcome == "executed"]
    assert executed and all(c.receipt for c in executed)
    # the duplicate ACTION in a reply is one execution
    assert all(sum(c.outcome == "executed" for c in t.tool_calls) <= 1 for t in record.turns)
    # tool results go back in the user role, within the turn
    follow = [m for m in agent.calls if m[-1]["content"].startswith("[TOOL RESULT]")]
    assert follow and all(m[-1]["role"] == "user" for m in follow)
    assert all(m["role"] in ("system", "user", "assistant") for m in agent.calls[-1])
    score = score_episode(record)
    assert score.admitted_diffs == 0 and not score.mismatches
    n_exec = sum(len(t.executed) for t in score.primary.turns)
    assert n_exec == len(executed)
    # a receipt that is not a stamp of the call books nothing
    t = next(t for t in record.turns if any(c.receipt for c in t.tool_calls))
    forged = tuple(msgspec.structs.replace(c, receipt=None) for c in t.tool_calls)
    turns = tuple(
        msgspec.structs.replace(x, tool_calls=forged) if x is t else x for x in record.turns
    )
    rescored = score_episode(msgspec.structs.replace(record, turns=turns))
    assert sum(len(x.executed) for x in rescored.primary.turns) == n_exec - 1
    assert rescored.admitted_diffs == 1


def test_table_19_grid() -> None:
    """runner/grids/tools.toml: seeds 300..349, the five harness arms for both models."""
    from runner.grid.expand import load_grid

    grid = load_grid(
        Path(__file__).resolve().parent.parent.parent.parent / "runner/grids/tools.toml"
    )
    assert grid.seeds() == list(range(300, 350))
    cells = grid.cells()
    assert all(c.knobs.harness == "langgraph" for c in cells)
    arms = {(c.arm, c.knobs.binding) for c in cells}
    assert arms == {
        ("raw", "state"),
        ("checklist", "state"),
        ("directive", "state"),
        ("enforce", "state"),
        ("enforce", "request"),
    }
    assert {c.model for c in cells} == {"qwen3-235b", "qwen3.6-35b"} and len(cells) == 10


def test_grid_refuses_an_arm_the_harness_does_not_run() -> None:
    from runner.grid.expand import GridError, parse_grid

    data = {
        "run": {"arms": [], "variants": [{"arm": "ledger", "harness": "langgraph"}]},
        "models": [{"name": "scripted/perfect"}],
    }
    with pytest.raises(GridError, match="tool harness runs the arms"):
        parse_grid(data)


def test_scripted_agents_speak_the_tool_protocol() -> None:
    """Tool results get an acknowledgement with no ACTION; a refused call is undone in the
    agent's own record; the prerequisites policy books the missing chain, then the step."""
    from serve.agents import answer
    from serve.agents.prerequisites import chain
    from serve.agents.replay import replay
    from serve.agents.transcript import split_user

    brief = render_brief(EPISODE.steps, "amended", harness=True)
    dep = next(s for s in EPISODE.steps if s.deps)
    pre = EPISODE.step(dep.deps[0])
    ask = f"Please {pre.text} now (#W1234)."
    booked = _action(tool_name(pre), "#W1234")
    result = strings.TOOL_RESULT.format(tool=tool_name(pre), work_order="#W1234", receipt="r")
    msgs = [("system", brief), ("user", ask), ("assistant", booked), ("user", result)]
    for policy in ("perfect", "always-book", "synthetic", "prerequisites"):
        a = answer(policy, {}, msgs, digest="d")
        assert not find_actions(a.content), policy
    rejected = strings.TOOL_REJECTION.format(
        tool=tool_name(pre), work_order="#W1234", id=pre.id, status="BLOCKED"
    )
    user = split_user(rejected)
    assert [n.code for n in user.notices] == [f"tool:{tool_name(pre)}"]
    from serve.agents.brief import parse_brief

    parsed = parse_brief(brief)
    history = [(split_user(ask), booked)]
    assert pre.id in replay(parsed, history, split_user("next")).done
    assert pre.id not in replay(parsed, history, user).done
    state = TaskState({s.id: s.deps for s in EPISODE.steps})
    order = chain(state, dep.id)
    assert order is not None and pre.id in order
    assert all(  # deepest first: every prerequisite before its dependants
        order.index(u) < order.index(v) for v in order for u in EPISODE.step(v).deps if u in order
    )
    # asked for the blocked step, the prerequisites policy books the chain and then the step
    msgs = [("system", brief), ("user", f"Please {dep.text} now (#W2222).")]
    reply = answer("prerequisites", {}, msgs, digest="d").content
    assert [a.tool for a in find_actions(reply)] == [
        *(tool_name(EPISODE.step(v)) for v in order),
        tool_name(dep),
    ]
    assert not find_actions(answer("perfect", {}, msgs, digest="d").content)
