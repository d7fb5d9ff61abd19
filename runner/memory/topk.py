"""The top-k exchange memory: every finished exchange stored, the k most similar recalled.

A faiss ``IndexFlatIP`` over L2-normalized rows: inner product is cosine similarity, and the
search is faiss's exact scan, not a Python loop. One index per episode (no shared state, no
lock); ties keep the earlier exchange first (faiss returns equal scores in insertion order).
"""

from __future__ import annotations

import faiss

from runner.memory.embedder import Vectors

__all__ = ["ExchangeIndex"]


class ExchangeIndex:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.index = faiss.IndexFlatIP(dim)
        self.texts: list[str] = []

    def __len__(self) -> int:
        return len(self.texts)

    def add(self, rows: Vectors, texts: list[str]) -> None:
        self.index.add(rows.reshape(len(texts), self.dim))
        self.texts.extend(texts)

    def search(self, query: Vectors, k: int) -> list[tuple[float, str]]:
        """The ``k`` stored texts most similar to ``query`` by cosine, best first."""
        n = min(k, len(self.texts))
        if n == 0:
            return []
        scores, ids = self.index.search(query.reshape(1, self.dim), n)
        return [(float(s), self.texts[i]) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]
