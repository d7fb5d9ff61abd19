"""An asyncio event loop on a virtual clock, for benchmarks of scheduling, not of CPU.

``loop.time()`` advances only when every task waits on a timer: when no callback is ready
and no socket is readable or writable, the clock jumps to the next timer instead of sleeping.
CPU time costs no virtual time, so a run's virtual makespan measures the schedule alone
(service times, queues, routing, the tail), the same on a loaded laptop as on an idle
server; the wall time is the CPU the run needs. The client and the servers must run in this
one loop (loopback sockets between them: data written is readable at once), so the clock
never jumps past a message in transit.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import selectors
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

__all__ = ["VirtualClockLoop", "in_parallel", "run_virtual"]

T = TypeVar("T")


class _Selector(selectors.DefaultSelector):
    loop: VirtualClockLoop

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        events = super().select(0)
        if events or timeout == 0:
            return events
        if timeout is None:  # no timer at all: only I/O can wake the loop
            return super().select(None)
        self.loop.advance(timeout)
        return []


class VirtualClockLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        selector = _Selector()
        super().__init__(selector)
        selector.loop = self
        self._now = 0.0

    def time(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += max(0.0, seconds)


def run_virtual(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to completion on a fresh :class:`VirtualClockLoop`."""
    loop = VirtualClockLoop()
    try:
        return loop.run_until_complete(main)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def in_parallel(fn: Callable[..., T], calls: Sequence[tuple[Any, ...]]) -> list[T]:
    """``fn(*args)`` for each of ``calls``, each in its own (spawned) process, as many at once
    as this process has cores; results in order. For runs on a virtual clock: running side
    by side moves none of their figures, only their real seconds (#50: the bench's time)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    workers = max(1, min(len(calls), cores))
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = [pool.submit(fn, *args) for args in calls]
        return [f.result() for f in futures]
