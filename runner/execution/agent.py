"""The agent call of one model: its endpoint and request settings bound once per run."""

from __future__ import annotations

from collections.abc import Mapping

from runner.arms import AgentCall
from runner.client.endpoint import Endpoint, Reply
from runner.grid.expand import Grid
from runner.grid.schema import ModelConfig

__all__ = ["agent_call", "agent_calls"]


def agent_call(endpoint: Endpoint, model: ModelConfig, grid: Grid) -> AgentCall:
    """``messages -> Reply`` for ``model`` as the agent (its reply budget and regime)."""
    kwargs = model.chat_kwargs(grid.decoding, "agent")

    async def call(messages: list[dict[str, str]]) -> Reply:
        return await endpoint.chat(messages=messages, **kwargs)

    return call


def agent_calls(grid: Grid, endpoints: Mapping[str, Endpoint]) -> dict[str, AgentCall]:
    """The agent call of every model of ``grid``, by model name."""
    return {m.name: agent_call(endpoints[m.endpoint], m, grid) for m in grid.models}
