"""Deterministic embeddings: a hashed bag of words, L2-normalized.

Words are lowercase runs of letters and digits; each adds +1 or -1 (by a hash bit) to the
coordinate its BLAKE2b hash picks. Same text, same vector, on every machine; texts sharing
words have a positive cosine. An empty text is the zero vector.
"""

from __future__ import annotations

import hashlib
import math
import re
from functools import lru_cache

__all__ = ["DEFAULT_DIM", "embed"]

DEFAULT_DIM = 256
_WORD = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=1 << 16)
def _slot(word: str) -> int:
    return int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")


def embed(text: str, dim: int = DEFAULT_DIM) -> list[float]:
    vec = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        h = _slot(word)
        vec[h % dim] += 1.0 if (h >> 63) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec] if norm else vec
