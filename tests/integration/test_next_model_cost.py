"""A handoff between agents (the sessions knob's next_model, issue #48): ``ladder cost``
counts each agent call to the model that made it. Two fake agents tell their calls apart by
their token counts; the record's attribution (scoring.analyses.handed) must match."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from protocol import EpisodeSpec, generate
from protocol.records import CallRecord, CellKey, Knobs
from protocol.rule_strings import HANDOFF_REQUEST
from protocol.stress.sessions import sessioned
from runner.arms.base import EpisodeContext
from runner.client.endpoint import Reply
from runner.execution.episode_loop import run_episode
from runner.gates.helper_models import Helpers
from runner.grid.expand import parse_grid
from scoring.analyses.cost import cost_rows
from scoring.analyses.handed import agent_calls
from scoring.report.cost_table import cost_table
from tests.gates_fakes import FakeChat, truth

EP = sessioned(generate(EpisodeSpec(seed=101, steps=10, density=0.3, generator=6)), 4)
MINE, THEIRS = 1, 1000  # each agent's prompt tokens per call


def _agent(tokens: int, notes: list[int]) -> Callable[[list[dict[str, str]]], Awaitable[Reply]]:
    async def agent(messages: list[dict[str, str]]) -> Reply:
        if messages[-1]["content"] == HANDOFF_REQUEST:
            notes.append(tokens)
        return Reply(
            content="Noted.", reasoning="", call=CallRecord(role="agent", prompt_tokens=tokens)
        )

    return agent


@pytest.mark.parametrize("handoff", ["none", "note"])
async def test_each_call_is_counted_to_its_model(tmp_path: Path, handoff: str) -> None:
    knobs = Knobs(sessions=4, handoff=handoff, next_model="other")  # type: ignore[arg-type]
    cell = CellKey(model="m", steps=10, density=0.3, arm="raw", knobs=knobs)
    helpers = Helpers(
        parse_grid({"models": [{"name": "m"}]}),
        tmp_path,
        {"embedded": FakeChat(truth({EP.brief: EP}))},
    )
    notes: list[int] = []
    ctx = EpisodeContext(
        episode=EP,
        cell=cell,
        agent=_agent(MINE, notes),
        next_agent=_agent(THEIRS, notes),
        helpers=helpers,
    )
    record = await run_episode(ctx)
    assert record.termination == "completed", record.error
    assert len(EP.boundaries) == 3
    calls = list(agent_calls(record))
    assert all(theirs == (c.prompt_tokens == THEIRS) for c, theirs in calls)
    assert sum(theirs for _, theirs in calls) > 0 and sum(not t for _, t in calls) > 0
    # the notes: session 1 (mine), 2 (theirs), 3 (mine) close with one each
    assert notes == ([MINE, THEIRS, MINE] if handoff == "note" else [])
    (row,) = cost_rows([record])
    mine = [c for c, theirs in calls if not theirs]
    assert row.agent_calls == len(mine) and row.prompt_tokens == MINE * len(mine)
    assert row.next_model == "other"
    assert row.next_model_calls == len(calls) - len(mine)
    assert row.next_model_prompt_tokens == THEIRS * row.next_model_calls
    assert "raw: next_model other made" in cost_table([row])


async def test_without_next_model_every_call_is_the_cells(tmp_path: Path) -> None:
    knobs = Knobs(sessions=4, handoff="note")
    cell = CellKey(model="m", steps=10, density=0.3, arm="raw", knobs=knobs)
    helpers = Helpers(
        parse_grid({"models": [{"name": "m"}]}),
        tmp_path,
        {"embedded": FakeChat(truth({EP.brief: EP}))},
    )
    ctx = EpisodeContext(episode=EP, cell=cell, agent=_agent(MINE, []), helpers=helpers)
    record = await run_episode(ctx)
    assert not any(theirs for _, theirs in agent_calls(record))
    (row,) = cost_rows([record])
    assert row.next_model_calls == 0 and "next_model" not in cost_table([row])
