"""Capacity limits on requests in flight: fixed, or adaptive (AIMD).

The adaptive limit grows by one after ``limit`` consecutive successes while requests queue
for it (the server keeps up), halves on a 429, and never leaves [1, max_limit]. A 429's
Retry-After is honoured by the client before the retry, not here.
"""

from __future__ import annotations

import asyncio
from collections import deque

__all__ = ["Limiter"]


class Limiter:
    def __init__(self, limit: int, *, max_limit: int | None = None, adaptive: bool = False) -> None:
        if limit < 1:
            raise ValueError("a concurrency limit must be at least 1")
        self.max_limit = max(limit, max_limit or limit)
        self.adaptive = adaptive
        self.limit = limit
        self.in_flight = 0
        self.peak = 0
        self.throttles = 0
        self._streak = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    async def acquire(self) -> None:
        if self.in_flight < self.limit and not self._waiters:
            self._take()
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # granted, then cancelled: hand the slot back
            elif fut in self._waiters:
                # A release may already have dropped this cancelled waiter (``_wake`` pops
                # done futures), so it is removed only if still there.
                self._waiters.remove(fut)
            raise

    def _take(self) -> None:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            fut = self._waiters.popleft()
            if not fut.done():
                self._take()
                fut.set_result(None)

    def success(self) -> None:
        if not self.adaptive:
            return
        self._streak += 1
        if self._streak >= self.limit and self._waiters and self.limit < self.max_limit:
            self.limit += 1
            self._streak = 0
            self._wake()

    def throttled(self) -> None:
        self.throttles += 1
        if self.adaptive:
            self.limit = max(1, self.limit // 2)
            self._streak = 0

    async def __aenter__(self) -> Limiter:
        await self.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()
