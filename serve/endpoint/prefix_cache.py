"""An emulated prefix cache (automatic prefix caching as vLLM does it), one per replica.

A prompt is a token stream: each message is a header (3 marker tokens around its role's
tokens, as :mod:`serve.endpoint.tokens` counts them: ``PER_MESSAGE`` = 3 framing tokens), its
content's tokens and an end marker; the reply priming is the assistant header, so a reply's
tokens continue the stream exactly as the next turn resends them. The stream is cut into
KV blocks of ``block_size`` tokens; each full block is named by a hash of the whole prefix up
to its end (vLLM chains block hashes to the same effect), so two prompts share a block only
if they share every token before it. The hash is a position-weighted sum of the tokens
modulo 2^64 (weights from splitmix64 of the position), vectorized: a collision needs a
2^-64 coincidence. Only full blocks are cached, and at least the prompt's last token is
always computed (vLLM's rule), so a prompt of ``n`` tokens can hit at most
``(n - 1) // block_size`` blocks.

:meth:`PrefixCache.admit` looks a prompt up (its cached tokens: the leading blocks present),
then stores the prompt's and the reply's full blocks, evicting the least recently used
blocks beyond ``capacity_tokens // block_size`` (of one request's blocks, the last first, as
vLLM's free-block queue orders them). A capacity of 0 means unbounded: the
*oracle*, one cache shared by all replicas, whose prefill is the minimum any routing could
achieve (each distinct prefix block of the run computed once).
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Sequence
from functools import lru_cache
from itertools import repeat, takewhile

import numpy as np

from serve.endpoint.tokens import encoding

__all__ = ["PrefixCache", "block_hashes", "stream"]

_OPEN, _SEP, _END = -1, -2, -3  # marker tokens (ids no tokenizer produces)


@lru_cache(maxsize=1 << 16)
def _ids(text: str) -> bytes:
    return array("i", encoding().encode_ordinary(text)).tobytes() if text else b""


@lru_cache(maxsize=64)
def _header(role: str) -> bytes:
    return array("i", [_OPEN]).tobytes() + _ids(role) + array("i", [_SEP]).tobytes()


_END_B = array("i", [_END]).tobytes()


def stream(messages: Sequence[tuple[str, str]], reply: str = "") -> bytes:
    """The prompt's tokens (4 bytes each), then the reply's: what the KV cache would hold."""
    parts: list[bytes] = []
    for role, content in messages:
        parts += (_header(role), _ids(content), _END_B)
    parts += (_header("assistant"), _ids(reply))
    return b"".join(parts)


_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)
_weights = np.zeros(0, dtype=np.uint64)


def _splitmix(n: int) -> np.ndarray:
    """splitmix64 of positions 0..n-1: the per-position weights, the same in every run."""
    with np.errstate(over="ignore"):
        z = (np.arange(n, dtype=np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def block_hashes(tokens: bytes, block_size: int) -> list[int]:
    """One hash per full block of ``tokens`` (int32 ids): the hash of the prefix to its end."""
    global _weights
    ids = np.frombuffer(tokens, dtype=np.int32)
    n = len(ids) - len(ids) % block_size
    if n == 0:
        return []
    if len(_weights) < n:
        _weights = _splitmix(max(n, 2 * len(_weights)))
    with np.errstate(over="ignore"):
        v = (ids[:n].astype(np.int64) + 8).astype(np.uint64) * _weights[:n]
        sums: list[int] = np.cumsum(v, dtype=np.uint64)[block_size - 1 :: block_size].tolist()
    return sums


class PrefixCache:
    """Block-hash LRU of one replica (or, unbounded, the oracle of a set of replicas)."""

    def __init__(self, block_size: int = 16, capacity_tokens: int = 0) -> None:
        if block_size < 1 or capacity_tokens < 0:
            raise ValueError("block_size must be >= 1 and capacity_tokens >= 0")
        self.block_size = block_size
        self.capacity_blocks = capacity_tokens // block_size if capacity_tokens else 0
        self._used: dict[int, int] = {}  # block hash -> the tick of its last use
        self._order: deque[tuple[int, int]] = deque()  # (tick, hash), oldest first; stale ones
        self._tick = 0
        self.prompt_tokens = 0
        self.cached_tokens = 0
        self.evicted_blocks = 0

    def __len__(self) -> int:
        return len(self._used)

    def admit(self, tokens: bytes | list[int], prompt_tokens: int) -> int:
        """Serve one request whose stream is ``tokens`` (prompt first, ``prompt_tokens``
        long, then the reply; or its :func:`block_hashes`): its cached prompt tokens. The
        request's blocks are stored (most recently used) after the lookup."""
        hashes = block_hashes(tokens, self.block_size) if isinstance(tokens, bytes) else tokens
        limit = max(0, prompt_tokens - 1) // self.block_size  # the last token is computed
        used = self._used
        hit = len(list(takewhile(used.__contains__, hashes[:limit])))
        self._tick += 1
        used.update(zip(hashes, repeat(self._tick)))
        if self.capacity_blocks:  # the unbounded oracle keeps no order
            # Last block first, as vLLM frees a request's blocks: its tail is evicted before
            # the prefix it shares with others.
            self._order.extend(zip(repeat(self._tick), reversed(hashes)))
            self._evict()
        cached = hit * self.block_size
        self.prompt_tokens += prompt_tokens
        self.cached_tokens += cached
        return cached

    def _evict(self) -> None:
        used, order = self._used, self._order
        while len(used) > self.capacity_blocks:
            tick, h = order.popleft()
            if used.get(h) == tick:  # else a later use re-queued it
                del used[h]
                self.evicted_blocks += 1
        if len(order) > 4 * len(used) + 1024:  # drop the stale entries now and then
            live = [(t, h) for t, h in order if used.get(h) == t]
            self._order = deque(live)

    @property
    def prefilled_tokens(self) -> int:
        return self.prompt_tokens - self.cached_tokens
