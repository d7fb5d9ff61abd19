"""Embedders behind one interface: texts in, L2-normalized float32 rows out, with call records.

:class:`EndpointEmbedder` calls the endpoint's ``/v1/embeddings`` (vLLM serves embedding
models; the scripted endpoint serves deterministic ones). Every batch of texts a turn needs
goes in one request; vectors are cached by the SHA-256 of the text for the episode, so a
text is embedded once however often it is stored and searched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from protocol.records import CallRecord

__all__ = ["Embedder", "EmbeddingsEndpoint", "EndpointEmbedder", "Vectors"]

Vectors = npt.NDArray[np.float32]


class EmbeddingsEndpoint(Protocol):
    async def embed(
        self, model: str, inputs: Sequence[str]
    ) -> tuple[list[list[float]], CallRecord]: ...


class Embedder(Protocol):
    dim: int | None  # known after the first call

    async def embed(self, texts: Sequence[str], calls: list[CallRecord]) -> Vectors: ...


def _key(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _normalized(rows: list[list[float]]) -> Vectors:
    m = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return (m / np.where(norms == 0, 1.0, norms)).astype(np.float32)


class EndpointEmbedder:
    """One episode's embedder on an endpoint's ``/v1/embeddings``, cached by text hash."""

    def __init__(self, endpoint: EmbeddingsEndpoint, model: str) -> None:
        self.endpoint = endpoint
        self.model = model
        self.dim: int | None = None
        self._cache: dict[bytes, Vectors] = {}
        self.requests = 0

    async def embed(self, texts: Sequence[str], calls: list[CallRecord]) -> Vectors:
        """Rows for ``texts`` in order; one request for the texts not cached (if any), its
        record appended to ``calls``."""
        keys = [_key(t) for t in texts]
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._cache}
        if todo:
            rows, call = await self.endpoint.embed(self.model, list(todo.values()))
            self.requests += 1
            calls.append(call)
            for k, row in zip(todo, _normalized(rows), strict=True):
                self._cache[k] = row
            self.dim = len(rows[0]) if rows else self.dim
        if not keys:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        return np.stack([self._cache[k] for k in keys])
