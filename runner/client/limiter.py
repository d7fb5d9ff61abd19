"""Capacity limits on requests in flight: fixed, or adaptive (AIMD), oldest episode first.

The adaptive limit grows by one after ``limit`` consecutive successes while requests queue
for it (the server keeps up), halves on a 429, and never leaves [1, max_limit]. A 429's
Retry-After is honoured by the client before the retry, not here.

Waiting requests are served oldest episode first (#40): each request carries its episode's
start number (:data:`EPISODE_AGE`, set by the scheduler; helper calls inside an episode carry
its number, calls outside any episode the largest), and a freed slot goes to the lowest
number waiting, ties first come first served. With hundreds of episodes over a cap of a few
dozen requests, first come first served advances every episode one turn at a time together,
so none finishes until all are nearly done (an interruption loses them all, and a GPU
server holds every episode's prefix at once); oldest first lets the oldest ``limit``
episodes run to the end while the rest wait, so episodes finish steadily from the start.
``order="fifo"`` keeps the old queue (the bench's comparison).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import sys
from contextvars import ContextVar
from typing import Literal

__all__ = ["EPISODE_AGE", "Limiter", "QueueOrder"]

QueueOrder = Literal["oldest", "fifo"]
# The running episode's start number (lower: older); unset outside an episode.
EPISODE_AGE: ContextVar[int] = ContextVar("EPISODE_AGE", default=sys.maxsize)


class Limiter:
    def __init__(
        self,
        limit: int,
        *,
        max_limit: int | None = None,
        adaptive: bool = False,
        order: QueueOrder = "oldest",
    ) -> None:
        if limit < 1:
            raise ValueError("a concurrency limit must be at least 1")
        self.max_limit = max(limit, max_limit or limit)
        self.adaptive = adaptive
        self.order = order
        self.limit = limit
        self.in_flight = 0
        self.peak = 0
        self.throttles = 0
        self._streak = 0
        self._arrival = itertools.count()
        # (episode age, arrival, future): a heap; under "fifo" the age is always 0
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def try_acquire(self) -> bool:
        """Take a slot at once if one is free and no one waits (no await); else False."""
        if self.in_flight < self.limit and not self._waiters:
            self._take()
            return True
        return False

    async def acquire(self) -> None:
        if self.in_flight < self.limit and not self._waiters:
            self._take()
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        age = EPISODE_AGE.get() if self.order == "oldest" else 0
        entry = (age, next(self._arrival), fut)
        heapq.heappush(self._waiters, entry)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # granted, then cancelled: hand the slot back
            elif entry in self._waiters:
                # A release may already have dropped this cancelled waiter (``_wake`` pops
                # done futures), so it is removed only if still there.
                self._waiters.remove(entry)
                heapq.heapify(self._waiters)
            raise

    def _take(self) -> None:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            fut = heapq.heappop(self._waiters)[2]
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
