"""What the memory arms need of a run: its grid and endpoints, bound once per run.

``Helpers.memory`` (built with the run's helpers) hands each memory-arm episode the
endpoint and model of its embeddings (the grid's ``[memory]`` settings) and the mem0
extraction call (the cell's model
on its endpoint, through ``ModelConfig.chat_kwargs``, role ``memory``). Light: no numpy,
no store.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol

from protocol.records import CallRecord, CellKey
from runner.client.endpoint import ChatEndpoint
from runner.grid.expand import Grid
from runner.memory.embedder import EmbeddingsEndpoint

__all__ = ["ChatCall", "MemoryServices"]

ChatCall = Callable[[list[dict[str, str]]], Awaitable[tuple[str, CallRecord]]]


class MemoryEndpoint(ChatEndpoint, EmbeddingsEndpoint, Protocol):
    """What the memory arms need of an endpoint: chat (mem0's extraction) and embeddings."""


class MemoryServices:
    def __init__(self, grid: Grid, endpoints: Mapping[str, MemoryEndpoint]) -> None:
        self.grid = grid
        self.endpoints = endpoints

    def embeddings(self, cell: CellKey) -> tuple[MemoryEndpoint, str]:
        """(endpoint, model) whose ``/v1/embeddings`` the cell's embedder calls: the
        ``[memory]`` settings, by default the cell model's endpoint and served name."""
        model = self.grid.model(cell.model)
        settings = self.grid.memory
        endpoint = self.endpoints[settings.embed_endpoint or model.endpoint]
        return endpoint, settings.embed_model or model.served_name()

    def chat(self, cell: CellKey) -> ChatCall:
        """mem0's extraction call: the cell's model in its regime on its endpoint."""
        model = self.grid.model(cell.model)
        endpoint = self.endpoints[model.endpoint]
        kwargs = model.chat_kwargs(self.grid.decoding, "memory")

        async def call(messages: list[dict[str, str]]) -> tuple[str, CallRecord]:
            reply = await endpoint.chat(messages=messages, **kwargs)
            return str(reply.content), reply.call

        return call
