"""Configuration of the scripted endpoint: bind address, latency model, concurrency, faults."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["FaultConfig", "LatencyConfig", "LatencyMode", "PrefixCacheConfig", "ServerConfig"]

LatencyMode = Literal["none", "fixed", "lognormal", "tokens"]


class LatencyConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Per-request service time (see :mod:`serve.faults.latency`).

    ``none``: answer at once. ``fixed``: ``seconds``. ``lognormal``: median ``seconds``,
    shape ``sigma``. ``tokens``: ``seconds`` + ``prefill_s_per_token`` x prompt tokens +
    ``decode_s_per_token`` x completion tokens.
    """

    mode: LatencyMode = "none"
    seconds: float = 0.0
    sigma: float = 0.5
    prefill_s_per_token: float = 0.0
    decode_s_per_token: float = 0.0


class FaultConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Fault rates per chat request (see :mod:`serve.faults.rates`); they must sum to at most 1."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_503: float = 0.0
    rate_drop: float = 0.0
    rate_hang: float = 0.0
    rate_malformed: float = 0.0
    rate_empty_thinking: float = 0.0
    retry_after_s: float = 1.0  # the Retry-After header of a 429
    hang_s: float = 600.0  # a hang sleeps this long, then answers normally

    def total(self) -> float:
        return (
            self.rate_429
            + self.rate_500
            + self.rate_503
            + self.rate_drop
            + self.rate_hang
            + self.rate_malformed
            + self.rate_empty_thinking
        )


class PrefixCacheConfig(msgspec.Struct, frozen=True, kw_only=True):
    """The emulated prefix cache of each replica (see :mod:`serve.endpoint.prefix_cache`): KV blocks
    of ``block_size`` tokens, ``capacity_tokens`` of them at most (0: unbounded), LRU."""

    enabled: bool = False
    block_size: int = 16  # vLLM's default block size
    capacity_tokens: int = 0


class ServerConfig(msgspec.Struct, frozen=True, kw_only=True):
    host: str = "127.0.0.1"  # loopback unless told otherwise
    port: int = 0  # 0: an ephemeral port
    concurrency: int = 0  # requests "computing" at once; 0: no cap
    max_model_len: int = 0  # context length in tokens; 0: no limit
    seed: int = 0  # seeds the fault and latency draws
    latency: LatencyConfig = LatencyConfig()
    faults: FaultConfig = FaultConfig()
    prefix_cache: PrefixCacheConfig = PrefixCacheConfig()
    shutdown_timeout_s: float = 1.0  # how long stop waits for handlers in flight

    def __post_init__(self) -> None:
        if self.concurrency < 0 or self.max_model_len < 0:
            raise ValueError("concurrency and max_model_len must be >= 0")
        if self.prefix_cache.block_size < 1 or self.prefix_cache.capacity_tokens < 0:
            raise ValueError("prefix cache: block_size must be >= 1 and capacity_tokens >= 0")
        if not 0.0 <= self.faults.total() <= 1.0 + 1e-9:
            raise ValueError("fault rates must each be >= 0 and sum to at most 1")
