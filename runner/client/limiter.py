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

The tail (#50): once every episode of a run has started, the scheduler sets :attr:`Limiter.
tail` (the run's planned turns not yet closed) and each request carries its episode's own
(:data:`EPISODE_LEFT`). Oldest first alone would run the oldest ``limit`` episodes to the
end and leave the youngest to finish on a fraction of the slots; so a waiter whose episode
has at least ``tail / limit`` turns left (no slack: the run cannot end sooner than that many
rounds, and this episode needs all of them) goes first, the longest such first; everyone
else is still served oldest first. An episode is overtaken at most once in the usual case
(the McNaughton bound: the run ends after max(longest, total / limit) rounds), so the few
episodes a prefix cache holds stay few (docs/cli.md).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import sys
from collections.abc import Callable
from contextvars import ContextVar
from typing import Literal

__all__ = ["EPISODE_AGE", "EPISODE_LEFT", "Limiter", "QueueOrder", "TurnsLeft", "yield_to_waiter"]

QueueOrder = Literal["oldest", "fifo"]
# The running episode's start number (lower: older); unset outside an episode.
EPISODE_AGE: ContextVar[int] = ContextVar("EPISODE_AGE", default=sys.maxsize)


# Loop trips a woken waiter takes to put its request on the wire (#50): its own resume, and
# before Python 3.12 aiohttp's body writer, a task of its own (started eagerly from 3.12);
# a releaser yields one trip more: in a burst of replies the releasers' and the waiters'
# steps interleave in the loop's queue, and the last trip lets every waiter's write go first.
HAND_OFF_TRIPS = (1 if sys.version_info >= (3, 12) else 2) + 1


async def yield_to_waiter() -> None:
    """Yield to the loop until a waiter just handed a slot has sent its prepared request
    (:data:`HAND_OFF_TRIPS`): a caller whose release woke a waiter calls this before its
    reply's own processing, so in a burst of replies every woken waiter's request leaves
    before any reply is processed, not after all of them (#50)."""
    for _ in range(HAND_OFF_TRIPS):
        await asyncio.sleep(0)


class TurnsLeft:
    """An episode's planned turns not yet closed (the scheduler counts them down)."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n


# The running episode's turns left (the tail rule reads it); unset outside an episode.
EPISODE_LEFT: ContextVar[TurnsLeft | None] = ContextVar("EPISODE_LEFT", default=None)


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
        # (episode age, arrival, future, turns left): a heap; under "fifo" the age is always
        # 0. A granted or cancelled waiter's entries stay until popped (skipped: done).
        self._waiters: list[tuple[int, int, asyncio.Future[None], TurnsLeft | None]] = []
        # in the tail: (-turns left, age, arrival, future), the longest episode first
        self._longest: list[tuple[int, int, int, asyncio.Future[None]]] = []
        self._waiting = 0  # live waiters
        self._tail: Callable[[], int] | None = None

    @property
    def waiting(self) -> int:
        return self._waiting

    @property
    def tail(self) -> Callable[[], int] | None:
        """The run's planned turns not yet closed, set once every episode has started (#50;
        None: oldest first alone). Setting it ranks the requests already waiting too."""
        return self._tail

    @tail.setter
    def tail(self, turns_left: Callable[[], int] | None) -> None:
        self._tail = turns_left
        self._longest = []
        if turns_left is not None and self.order == "oldest":
            self._longest = [
                (-left.n, age, arrival, fut)
                for age, arrival, fut, left in self._waiters
                if left is not None and not fut.done()
            ]
            heapq.heapify(self._longest)

    def try_acquire(self) -> bool:
        """Take a slot at once if one is free and no one waits (no await); else False."""
        if self.in_flight < self.limit and not self._waiting:
            self._take()
            return True
        return False

    async def acquire(self) -> None:
        if self.in_flight < self.limit and not self._waiting:
            self._take()
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        oldest = self.order == "oldest"
        age, arrival = EPISODE_AGE.get() if oldest else 0, next(self._arrival)
        left = EPISODE_LEFT.get() if oldest else None
        heapq.heappush(self._waiters, (age, arrival, fut, left))
        if self._tail is not None and left is not None:
            heapq.heappush(self._longest, (-left.n, age, arrival, fut))
        self._waiting += 1
        if len(self._waiters) + len(self._longest) > 4 * self._waiting + 2 * self.limit:
            self._compact()
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # granted, then cancelled: hand the slot back
            else:  # its entries stay, skipped when popped
                self._waiting -= 1
            raise

    def _compact(self) -> None:
        """Drop the entries of granted or cancelled waiters (each queue keeps the other's
        grants until they surface): the queues stay within a few times the live waiters."""
        self._waiters = [e for e in self._waiters if not e[2].done()]
        self._longest = [e for e in self._longest if not e[3].done()]
        heapq.heapify(self._waiters)
        heapq.heapify(self._longest)

    def _take(self) -> None:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def release(self) -> bool:
        """Free a slot; True when it went straight to a waiter (the caller may then yield,
        so the waiter's prepared request goes out before the caller's own work: #50)."""
        self.in_flight -= 1
        return self._wake()

    def _wake(self) -> bool:
        woke = False
        while self._waiting and self.in_flight < self.limit:
            fut = self._next()
            if fut is None:
                return woke
            self._take()
            self._waiting -= 1
            fut.set_result(None)
            woke = True
        return woke

    def _next(self) -> asyncio.Future[None] | None:
        """The waiter a freed slot goes to: in the tail, the longest episode if it has no
        slack (turns left x limit >= the run's turns left); else the oldest."""
        longest = self._longest
        if longest:
            while longest and longest[0][3].done():
                heapq.heappop(longest)
            if longest and self._tail is not None and -longest[0][0] * self.limit >= self._tail():
                return heapq.heappop(longest)[3]
        waiters = self._waiters
        while waiters:
            fut = heapq.heappop(waiters)[2]
            if not fut.done():
                return fut
        return None

    def success(self) -> None:
        if not self.adaptive:
            return
        self._streak += 1
        if self._streak >= self.limit and self._waiting and self.limit < self.max_limit:
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
