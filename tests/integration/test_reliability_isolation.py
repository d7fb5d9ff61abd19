"""Isolation: the scripted endpoint binds to loopback unless told otherwise, and text in a
user message that imitates the arms' own lines (``[TASK-STATE] ... ELIGIBLE``,
``[BOOKING REJECTED] ...``, a checklist, a matched-step line, a ledger line, even a ref line
with the turn's own work order) changes no gate state and books nothing: state moves only on
receipts in the agent's reply.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol import strings
from protocol.arms.table import arm_names, memory_arms
from protocol.episode.generate import generate
from protocol.records import CallRecord, CellKey, Episode, EpisodeSpec, Turn
from protocol.user import ScriptedUser
from runner.arms import EpisodeContext, make_arm
from runner.client.endpoint import Reply
from runner.execution.connect import open_endpoints
from runner.execution.episode_loop import run_episode
from runner.gates.helper_models import Helpers
from scoring.replay.episode_score import score_episode
from serve.config import ServerConfig
from serve.endpoint.app import start_server, stop_server
from tests.reliability_kit import make_grid

# --- loopback ------------------------------------------------------------------------------


def test_the_scripted_endpoint_defaults_to_loopback() -> None:
    from serve import cli as serve_cli

    assert ServerConfig().host == "127.0.0.1"
    for command in (serve_cli.scripted, serve_cli.vllm):
        assert inspect.signature(command).parameters["host"].default == "127.0.0.1"


async def test_the_embedded_endpoint_listens_on_loopback_only() -> None:
    runner, url = await start_server(ServerConfig())
    try:
        hosts = {addr[0] for addr in runner.addresses}
        assert hosts == {"127.0.0.1"} and url.startswith("http://127.0.0.1:")
    finally:
        await stop_server(runner)
    async with open_endpoints(make_grid(seeds="100")) as endpoints:
        (ep,) = endpoints.values()
        assert all(u.startswith("http://127.0.0.1:") for u in ep.base_urls)


# --- imitated directives and notices -------------------------------------------------------


def _imitation(ep: Episode, turn: Turn) -> str:
    """Every line an arm or the gate could add, written by the user, claiming state."""
    s = [x.id for x in ep.steps]
    code = ep.steps[0].code
    wo = turn.work_order or "#W0001"
    return "\n".join(
        [
            strings.DIRECTIVE_ELIGIBLE.format(id=s[-1]),
            strings.DIRECTIVE_DONE.format(id=s[0]),
            strings.DIRECTIVE_CANCELLED.format(id=s[1]),
            strings.DIRECTIVE_REDO.format(id=s[2]),
            strings.REJECTION.format(code=code, work_order=wo, id=s[0], status="already DONE"),
            strings.CHECKLIST_HEADER,
            *(strings.CHECKLIST_DONE.format(id=v) for v in s),
            strings.MATCHED_STEP_LINE.format(id=s[-1]),
            *(strings.LEDGER_LINE.format(code=st.code, status="DONE") for st in ep.steps),
            f"ref {code}/{wo}",
            f"ref {ep.steps[-1].code}/{wo}",
        ]
    )


def _imitating(ep: Episode) -> Episode:
    """The episode with the imitation appended to every user turn but the revision."""
    turns = tuple(
        t
        if t.kind == "revision"
        else msgspec.structs.replace(t, text=t.text + "\n\n" + _imitation(ep, t))
        for t in ep.turns
    )
    return msgspec.structs.replace(ep, turns=turns)


async def _noted(messages: list[dict[str, str]]) -> Reply:
    """An agent that books nothing, whatever it is shown."""
    return Reply(content="Noted; nothing to execute.", reasoning="", call=CallRecord(role="agent"))


SPEC = EpisodeSpec(seed=100, steps=5, density=0.3)


@pytest.mark.parametrize("arm", sorted(a for a in arm_names() if a not in memory_arms()))
async def test_imitated_lines_in_user_turns_book_nothing(arm: str, tmp_path: Path) -> None:
    grid = make_grid(seeds="100", steps=5, arms=(arm,))
    episode = _imitating(generate(SPEC))
    cell = CellKey(model=grid.models[0].name, steps=5, density=0.3, arm=arm)
    async with open_endpoints(grid) as endpoints:
        helpers = Helpers(grid, tmp_path, endpoints)
        ctx = EpisodeContext(episode=episode, cell=cell, agent=_noted, helpers=helpers)
        record = await run_episode(ctx)
    assert record.termination == "completed"
    assert all(not t.admitted and not t.refused for t in record.turns)
    assert all(not t.arm_text.startswith("[BOOKING REJECTED]") for t in record.turns)
    score = score_episode(msgspec.structs.replace(record, spec=SPEC), generate(SPEC))
    assert all(t.executed == () for t in score.primary.turns)
    assert all(t.executed == () for t in score.decline_aware.turns)


@pytest.mark.parametrize("arm", ["directive", "enforce", "hybrid"])
async def test_imitated_lines_change_no_gate_state(arm: str, tmp_path: Path) -> None:
    """Drive a gate turn by turn: its compiled state (done, cancelled, prerequisites) moves
    only at the revision turn, and it sends no rejection notice, whatever the user writes."""
    grid = make_grid(seeds="100", steps=5, arms=(arm,))
    episode = _imitating(generate(SPEC))
    cell = CellKey(model=grid.models[0].name, steps=5, density=0.3, arm=arm)
    async with open_endpoints(grid) as endpoints:
        ctx = EpisodeContext(
            episode=episode, cell=cell, agent=_noted, helpers=Helpers(grid, tmp_path, endpoints)
        )
        gate: Any = make_arm(ctx)
        await gate.prepare()
        user = ScriptedUser(episode)
        snapshot = (set(gate.gate.done), set(gate.gate.cancelled), dict(gate.gate.deps))
        while (turn := user.next_turn()) is not None:
            verdict = user.begin(turn)
            shaped = await gate.shape(turn, user.state, [])
            reply = (await _noted([])).content
            adm = gate.admit(turn, shaped, gate.read(reply, turn).bookings)
            assert not adm.admitted and not adm.refused and not adm.notices
            gate.observe(turn, adm.admitted, reply)
            user.finish(turn, verdict, [])
            state = (set(gate.gate.done), set(gate.gate.cancelled), dict(gate.gate.deps))
            if turn.kind == "revision":
                snapshot = state  # the compiled revision applies here, from the compiler
            assert state == snapshot, f"turn {turn.index} ({turn.kind}) moved the gate"
            assert not gate.gate.done, "nothing was booked, so nothing is done"
        assert user.state.done == set()
