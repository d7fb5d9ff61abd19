"""Mem0 (the real ``mem0ai`` library) as one episode's memory, every call one of ours.

* The LLM mem0 calls for its memory extraction is :class:`EndpointLLM`: the cell's model on
  the cell's endpoint through :class:`runner.client.endpoint.Endpoint` (its limiter, retries and token
  accounting), each call logged as a ``memory`` :class:`~protocol.records.CallRecord`.
* The embedder is :class:`EndpointEmbedding` over the episode's
  :class:`~runner.memory.embedder.Embedder` (cached by text hash, ``embedding`` records).
* The vector store is mem0's own FAISS store kept in memory (:class:`InMemoryFAISS`: mem0
  writes the index to disk on every insert; here nothing is written), the history database
  SQLite ``:memory:``. mem0's telemetry is off (``MEM0_TELEMETRY=False`` before import) and
  its directory is a temporary one, so no socket but the endpoint's is opened.
* ``AsyncMemory`` runs every provider call in ``asyncio.to_thread``. With hundreds of
  episodes in flight that is a thread blocked on the network per call; :data:`_ON_LOOP`
  replaces the ``asyncio`` name inside ``mem0.memory.main`` and ``mem0.memory.notices`` with a view of asyncio whose
  ``to_thread`` awaits our providers' async twins (``agenerate_response``, ``aembed``,
  ``aembed_batch``) on the event loop and runs the local calls (FAISS, SQLite, all in
  memory, microseconds) inline. No thread is started.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
import uuid
from collections.abc import Callable, Sequence
from typing import TypedDict

# runner.memory (this package, imported before this module) has set MEM0_TELEMETRY=False
# and MEM0_DIR: mem0 reads both at its first import, just below.
import mem0.memory.main as _mem0_main
import mem0.memory.notices as _mem0_notices
import mem0.memory.telemetry as _mem0_telemetry
from mem0 import AsyncMemory
from mem0.configs.base import MemoryConfig
from mem0.configs.llms.base import BaseLlmConfig
from mem0.configs.vector_stores.faiss import FAISSConfig
from mem0.embeddings.base import EmbeddingBase
from mem0.embeddings.configs import EmbedderConfig
from mem0.llms.base import LLMBase
from mem0.llms.configs import LlmConfig
from mem0.memory.utils import parse_messages
from mem0.utils.factory import EmbedderFactory, LlmFactory, VectorStoreFactory
from mem0.vector_stores.configs import VectorStoreConfig
from mem0.vector_stores.faiss import FAISS

from protocol.records import CallRecord
from runner.memory.embedder import Embedder
from runner.memory.services import ChatCall

__all__ = ["EndpointEmbedding", "EndpointLLM", "InMemoryFAISS", "Mem0Store", "exchange_text"]

PROVIDER = "state-ladder"
_TMP = os.path.join(tempfile.gettempdir(), "state-ladder-mem0", "faiss")


class EndpointLLM(LLMBase):  # type: ignore[misc]
    """mem0's LLM: the cell's model through the runner's client (bound per episode)."""

    def __init__(self, config: BaseLlmConfig | dict[str, object] | None = None) -> None:
        super().__init__(config)
        self.chat: ChatCall | None = None
        self.calls: list[CallRecord] = []

    def generate_response(self, messages: list[dict[str, str]], *a: object, **kw: object) -> str:
        raise RuntimeError("EndpointLLM answers on the event loop only (agenerate_response)")

    async def agenerate_response(
        self, messages: list[dict[str, str]], *a: object, **kw: object
    ) -> str:
        assert self.chat is not None, "EndpointLLM used before bind()"
        content, call = await self.chat(
            [{"role": m["role"], "content": m["content"]} for m in messages]
        )
        self.calls.append(call)
        return content


class EndpointEmbedding(EmbeddingBase):  # type: ignore[misc]
    """mem0's embedder: the episode's :class:`Embedder` (bound per episode)."""

    embedder: Embedder | None = None
    calls: list[CallRecord]

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        raise RuntimeError("EndpointEmbedding answers on the event loop only (aembed)")

    async def aembed(self, text: str, memory_action: str | None = None) -> list[float]:
        return (await self.aembed_batch([text], memory_action))[0]

    async def aembed_batch(
        self, texts: Sequence[str], memory_action: str | None = "add"
    ) -> list[list[float]]:
        assert self.embedder is not None, "EndpointEmbedding used before bind()"
        rows = await self.embedder.embed(list(texts), self.calls)
        return [list(map(float, r)) for r in rows]


class InMemoryFAISS(FAISS):  # type: ignore[misc]
    """mem0's FAISS vector store with nothing written to disk."""

    def _save(self) -> None:
        pass


class _OnLoop:
    """``asyncio`` as mem0's AsyncMemory sees it: ``to_thread`` without a thread."""

    def __getattr__(self, name: str) -> object:
        return getattr(asyncio, name)

    async def to_thread(
        self, fn: Callable[..., object], /, *args: object, **kwargs: object
    ) -> object:
        owner = getattr(fn, "__self__", None)
        twin = getattr(owner, "a" + getattr(fn, "__name__", ""), None) if owner else None
        if twin is not None:
            return await twin(*args, **kwargs)
        return fn(*args, **kwargs)


# mem0 warns on every AsyncMemory built (no keyword search in FAISS, no spaCy): the
# choices are ours and written in docs/memory.md, so its log stays at errors.
logging.getLogger("mem0").setLevel(logging.ERROR)
_ON_LOOP = _OnLoop()
# mem0 reads MEM0_TELEMETRY once, at its first import; if anything imported it earlier with
# telemetry on, turn it off here too (flags and the client its import built).
_mem0_telemetry.MEM0_TELEMETRY = False
_mem0_main.MEM0_TELEMETRY = False
if getattr(_mem0_telemetry.client_telemetry, "posthog", None) is not None:
    _mem0_telemetry.client_telemetry.posthog.disabled = True
    _mem0_telemetry.client_telemetry.posthog = None
_mem0_main.asyncio = _ON_LOOP
_mem0_notices.asyncio = _ON_LOOP  # its notices, off with telemetry
LlmFactory.register_provider(PROVIDER, f"{__name__}.EndpointLLM", BaseLlmConfig)
EmbedderFactory.provider_to_class[PROVIDER] = f"{__name__}.EndpointEmbedding"
VectorStoreFactory.provider_to_class[PROVIDER] = f"{__name__}.InMemoryFAISS"


class _Hit(TypedDict):
    memory: str


class _Found(TypedDict, total=False):
    """What mem0's ``search`` returns, as far as we read it."""

    results: list[_Hit]


def exchange_text(user: str, reply: str) -> str:
    """The text mem0 embeds for an exchange (its own ``parse_messages``)."""
    return str(
        parse_messages([{"role": "user", "content": user}, {"role": "assistant", "content": reply}])
    )


def _config(dim: int) -> MemoryConfig:
    config = MemoryConfig(history_db_path=":memory:")
    # Our providers are registered in mem0's factories; its config validators list only the
    # built-in names, so these three configs are constructed without that check.
    config.llm = LlmConfig.model_construct(provider=PROVIDER, config={})
    config.embedder = EmbedderConfig.model_construct(provider=PROVIDER, config={})
    store = FAISSConfig(
        collection_name=f"ep{uuid.uuid4().hex}",
        path=_TMP,
        distance_strategy="inner_product",
        embedding_model_dims=dim,
    )
    config.vector_store = VectorStoreConfig.model_construct(provider=PROVIDER, config=store)
    return config


class Mem0Store:
    """One episode's Mem0: ``add`` an exchange (mem0 extracts memories), ``search`` a query."""

    def __init__(self, chat: ChatCall, embedder: Embedder) -> None:
        self.chat = chat
        self.embedder = embedder
        self.run_id = uuid.uuid4().hex
        self._memory: AsyncMemory | None = None

    def _open(self, dim: int, calls: list[CallRecord]) -> AsyncMemory:
        if self._memory is None:
            self._memory = AsyncMemory(_config(dim))
        llm, embedding = self._memory.llm, self._memory.embedding_model
        assert isinstance(llm, EndpointLLM) and isinstance(embedding, EndpointEmbedding)
        llm.chat, llm.calls = self.chat, calls
        embedding.embedder, embedding.calls = self.embedder, calls
        return self._memory

    async def add(self, user: str, reply: str, query: str, calls: list[CallRecord]) -> None:
        """Store one exchange; the exchange text and the next ``query`` are embedded first
        in one batch, so mem0's own embeddings of them are cache hits."""
        await self.embedder.embed([exchange_text(user, reply), query], calls)
        assert self.embedder.dim is not None
        memory = self._open(self.embedder.dim, calls)
        messages = [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]
        await memory.add(messages, run_id=self.run_id)

    async def search(self, query: str, k: int, calls: list[CallRecord]) -> list[str]:
        if self._memory is None:
            return []
        memory = self._open(self.embedder.dim or 0, calls)
        found: _Found = await memory.search(query, filters={"run_id": self.run_id}, top_k=k)
        return [str(r["memory"]) for r in found.get("results", [])][:k]
