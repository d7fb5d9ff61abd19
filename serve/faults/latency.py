"""The latency model: a service time per request and a concurrency cap with a queue.

A request holds one slot of an ``asyncio.Semaphore`` of size ``concurrency`` while it sleeps
its service time, like a batching GPU server with ``concurrency`` sequences. With a fixed
service time ``t`` and at least ``concurrency`` requests waiting, the ideal throughput is
``concurrency / t`` requests per second. Each slot keeps a virtual clock: a request starts
when it arrived (the handler's start, passed as ``arrived``: the endpoint's own work on it,
parsing and computing the scripted answer, overlaps its service as a GPU's would; #50) or
when the slot's previous request ended, if later, and sleeps until that start plus its
service time, so neither the endpoint's own CPU nor event-loop lag adds up request after
request or wave after wave, as a GPU computes on regardless of the Python loop. The service time's randomness (lognormal) comes
from ``random.Random(f"latency|{seed}|{n}")``, ``n`` being the request's arrival number.
"""

from __future__ import annotations

import asyncio
import heapq
import math
import random

from serve.config import LatencyConfig

__all__ = ["LatencyModel"]


class LatencyModel:
    def __init__(self, config: LatencyConfig, concurrency: int, seed: int = 0) -> None:
        self.config = config
        self.concurrency = concurrency
        self.seed = seed
        self._slots = asyncio.Semaphore(concurrency) if concurrency > 0 else None
        self._free_at = [0.0] * max(0, concurrency)  # a heap: when each slot is next free
        self.in_flight = 0
        self.max_in_flight = 0
        self.busy_s = 0.0  # service seconds requested so far (the work done, queueing aside)

    def service_time(self, n: int, prompt_tokens: int, completion_tokens: int) -> float:
        c = self.config
        if c.mode == "fixed":
            return c.seconds
        if c.mode == "lognormal":
            if c.seconds <= 0:
                return 0.0
            rng = random.Random(f"latency|{self.seed}|{n}")
            return rng.lognormvariate(math.log(c.seconds), c.sigma)
        if c.mode == "tokens":
            return (
                c.seconds
                + c.prefill_s_per_token * prompt_tokens
                + c.decode_s_per_token * completion_tokens
            )
        return 0.0

    def ideal_throughput(self, seconds: float) -> float:
        """Requests per second at a fixed service time, with the cap saturated."""
        if seconds <= 0 or self.concurrency <= 0:
            return math.inf
        return self.concurrency / seconds

    async def serve(self, seconds: float, arrived: float | None = None) -> None:
        """Hold a slot (waiting in the queue for one) for ``seconds`` of its virtual clock,
        from ``arrived`` (the loop's time when the request arrived; default now) or the
        slot's previous end, whichever is later."""
        self.busy_s += max(0.0, seconds)
        loop = asyncio.get_running_loop()
        arrival = loop.time() if arrived is None else arrived
        if self._slots is None:
            await self._compute(arrival + seconds - loop.time())
            return
        async with self._slots:
            end = max(arrival, heapq.heappop(self._free_at)) + seconds
            try:
                await self._compute(end - loop.time())
            finally:
                heapq.heappush(self._free_at, end)

    async def _compute(self, seconds: float) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if seconds > 0:
                await asyncio.sleep(seconds)
        finally:
            self.in_flight -= 1
