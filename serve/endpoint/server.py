"""What one running scripted server holds: its config, latency model and counters."""

from __future__ import annotations

import time
from collections.abc import Sequence

from aiohttp import web

from serve.config import ServerConfig
from serve.endpoint.prefix_cache import PrefixCache, block_hashes, stream
from serve.faults.latency import LatencyModel

__all__ = ["SERVER", "ServerState"]


class ServerState:
    def __init__(self, config: ServerConfig, oracle: PrefixCache | None = None) -> None:
        self.config = config
        pc = config.prefix_cache
        self.prefix = PrefixCache(pc.block_size, pc.capacity_tokens) if pc.enabled else None
        self.oracle = oracle  # one unbounded cache shared by a set of replicas (the minimum)
        self.oracle_prefilled = 0
        self.latency = LatencyModel(config.latency, config.concurrency, config.seed)
        self.created = int(time.time())
        self.arrivals = 0
        self.faults: dict[str, int] = {}
        self.completed = 0

    def arrival(self) -> int:
        """This request's arrival number (0, 1, ...): the seed of its fault and latency draws."""
        n = self.arrivals
        self.arrivals += 1
        return n

    def admit(self, messages: Sequence[tuple[str, str]], reply: str, prompt_tokens: int) -> int:
        """The request's cached prompt tokens (0 without a prefix cache); stores its blocks."""
        if self.prefix is None and self.oracle is None:
            return 0
        cache = self.prefix if self.prefix is not None else self.oracle  # an empty one is falsy
        assert cache is not None
        hashes = block_hashes(stream(messages, reply), cache.block_size)
        if self.oracle is not None:
            self.oracle_prefilled += prompt_tokens - self.oracle.admit(hashes, prompt_tokens)
        return self.prefix.admit(hashes, prompt_tokens) if self.prefix is not None else 0

    def count_fault(self, fault: str) -> None:
        self.faults[fault] = self.faults.get(fault, 0) + 1

    def stats(self) -> dict[str, object]:
        return {
            "arrivals": self.arrivals,
            "completed": self.completed,
            "faults": dict(self.faults),
            "in_flight": self.latency.in_flight,
            "max_in_flight": self.latency.max_in_flight,
            "concurrency": self.config.concurrency,
            "busy_s": round(self.latency.busy_s, 6),
            **self._cache_stats(),
        }

    def _cache_stats(self) -> dict[str, object]:
        if self.prefix is None:
            return {}
        return {
            "prompt_tokens": self.prefix.prompt_tokens,
            "cached_tokens": self.prefix.cached_tokens,
            "prefilled_tokens": self.prefix.prefilled_tokens,
            "cache_blocks": len(self.prefix),
            "evicted_blocks": self.prefix.evicted_blocks,
            "oracle_prefilled_tokens": self.oracle_prefilled if self.oracle is not None else None,
        }


SERVER = web.AppKey("server", ServerState)
