"""An emulated prefix cache (automatic prefix caching as vLLM does it), one per replica.

A prompt is a token stream: each message is a header (3 marker tokens around its role's
tokens, as :mod:`serve.tokens` counts them: ``PER_MESSAGE`` = 3 framing tokens), its
content's tokens and an end marker; the reply priming is the assistant header, so a reply's
tokens continue the stream exactly as the next turn resends them. The stream is cut into
KV blocks of ``block_size`` tokens; each full block is named by a chain hash (its tokens and
the hash of the block before it), so two prompts share a block only if they share the whole
prefix up to its end. Only full blocks are cached, and at least the prompt's last token is
always computed (vLLM's rule), so a prompt of ``n`` tokens can hit at most
``(n - 1) // block_size`` blocks.

:meth:`PrefixCache.admit` looks a prompt up (its cached tokens: the leading blocks present),
then stores the prompt's and the reply's full blocks, evicting the least recently used
blocks beyond ``capacity_tokens // block_size``. A capacity of 0 means unbounded: the
*oracle*, one cache shared by all replicas, whose prefill is the minimum any routing could
achieve (each distinct prefix block of the run computed once).
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache

from serve.tokens import encoding

__all__ = ["PrefixCache", "stream"]

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


class PrefixCache:
    """Block-hash LRU of one replica (or, unbounded, the oracle of a set of replicas)."""

    def __init__(self, block_size: int = 16, capacity_tokens: int = 0) -> None:
        if block_size < 1 or capacity_tokens < 0:
            raise ValueError("block_size must be >= 1 and capacity_tokens >= 0")
        self.block_size = block_size
        self.capacity_blocks = capacity_tokens // block_size if capacity_tokens else 0
        self._blocks: OrderedDict[int, None] = OrderedDict()
        self.prompt_tokens = 0
        self.cached_tokens = 0
        self.evicted_blocks = 0

    def __len__(self) -> int:
        return len(self._blocks)

    def _hashes(self, tokens: bytes) -> list[int]:
        width = 4 * self.block_size
        h = 0
        out = []
        for i in range(0, len(tokens) - width + 1, width):
            h = hash((h, tokens[i : i + width]))
            out.append(h)
        return out

    def admit(self, tokens: bytes, prompt_tokens: int) -> int:
        """Serve one request whose stream is ``tokens`` (prompt first, ``prompt_tokens``
        long, then the reply): its cached prompt tokens. The blocks are stored after."""
        hashes = self._hashes(tokens)
        hit = 0
        limit = max(0, prompt_tokens - 1) // self.block_size
        for h in hashes[:limit]:
            if h not in self._blocks:
                break
            hit += 1
        for h in hashes:
            if h in self._blocks:
                self._blocks.move_to_end(h)
            else:
                self._blocks[h] = None
        self._evict()
        cached = hit * self.block_size
        self.prompt_tokens += prompt_tokens
        self.cached_tokens += cached
        return cached

    def _evict(self) -> None:
        cap = self.capacity_blocks
        while cap and len(self._blocks) > cap:
            self._blocks.popitem(last=False)
            self.evicted_blocks += 1

    @property
    def prefilled_tokens(self) -> int:
        return self.prompt_tokens - self.cached_tokens
