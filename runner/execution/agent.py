"""The agent call of one model: its endpoint and request settings bound once per run."""

from __future__ import annotations

from collections.abc import Mapping

from runner.arms import AgentCall
from runner.client.endpoint import Endpoint, Reply
from runner.execution.brief_check import BriefLost, brief_lost, brief_text, placed
from runner.grid.expand import Grid
from runner.grid.schema import ModelConfig

__all__ = ["agent_call", "agent_calls"]


def agent_call(endpoint: Endpoint, model: ModelConfig, grid: Grid) -> AgentCall:
    """``messages -> Reply`` for ``model`` as the agent (its reply budget and regime), the
    brief placed as the model's ``brief_role`` says; the first reply is checked for the
    brief (:mod:`runner.execution.brief_check`: raises :class:`BriefLost`, which stops the
    run)."""
    kwargs = model.chat_kwargs(grid.decoding, "agent")
    checked = False

    async def call(messages: list[dict[str, str]]) -> Reply:
        nonlocal checked
        brief = brief_text(messages)
        sent = placed(messages, model.brief_role)
        reply = await endpoint.chat(messages=sent, **kwargs)
        if not checked:
            checked = True
            lost = brief_lost(model.name, sent, reply.call.prompt_tokens, brief)
            if lost is not None:
                raise BriefLost(lost)
        return reply

    return call


def agent_calls(grid: Grid, endpoints: Mapping[str, Endpoint]) -> dict[str, AgentCall]:
    """The agent call of every model of ``grid``, by model name."""
    return {m.name: agent_call(endpoints[m.endpoint], m, grid) for m in grid.models}
