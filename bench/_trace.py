"""Where a saturated server's slot-seconds go: event streams on both sides, integrated (#50).

With the runner's endpoint limit equal to the server's cap C, every server slot is paired
with one limiter slot, and one request's cycle through them passes six instants, each
stamped with ``time.perf_counter`` (``CLOCK_MONOTONIC``, the same clock in both processes):

1. ``grant``: the limiter gives the request a slot (client, :class:`TracedLimiter`);
2. ``resume``: the request's coroutine runs again (the same instant when nobody waited);
3. ``arrival``: the server's handler starts on it (server, :func:`trace_server`);
4. ``start``: the request's service starts on its slot's virtual clock (its arrival, or
   the slot's previous end if later; the endpoint computes its answer inside the service
   since the seventh round), ``start + service`` (``due``) where a GPU would be done;
5. ``end``: its service sleep wakes;
6. ``release``: the client, the reply read and decoded, frees the limiter slot.

The number of requests between two instants at time t is the count of the first's events
up to t minus the second's, so the slot-seconds each phase holds over a window are
integrals of counts: no request has to be matched across processes. Over the window the C
limiter slots hold C x W slot-seconds: service (useful), the server's timer overshoot,
the server's answer computed before the slot, the request's send and transit, the limiter's
hand-off, the reply's return (body, transit, read, decode), and the limiter slot free (no
request was ready: every episode busy client-side, or between episodes). They sum to one.
"""

from __future__ import annotations

import asyncio
import bisect
import gc
import itertools
import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

from runner.client.limiter import Limiter
from scoring.analyses.cost import quantile

__all__ = [
    "PHASES",
    "GcPauses",
    "TracedLimiter",
    "busy_share",
    "phase_shares",
    "ramp_s",
    "trace_server",
    "turnarounds",
]

# (label, first instant, second instant): a phase is the time between two instants
PHASES = (
    ("service (useful)", "start", "due"),
    ("server timer overshoot", "due", "end"),
    ("server: request read + answer computed before the slot", "arrival", "start"),
    ("client send + transit to the server's handler", "resume", "arrival"),
    ("limiter hand-off (slot granted -> waiter resumes)", "grant", "resume"),
    ("reply return (body, transit, client read + decode)", "end", "release"),
)


class TracedLimiter(Limiter):
    """A :class:`Limiter` that stamps each grant, resume and release, and the limiter's
    state (slots held, requests waiting) at each change."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.grant: list[float] = []
        self.resume: list[float] = []
        self.release_at: list[float] = []
        self.states: list[tuple[float, int, int]] = []  # (t, in flight, waiting)
        # a waiter's hand-off: (the releasing call's grant, the waiter's resume), paired in
        # order (the loop resumes woken tasks in the order they were woken)
        self.woken: list[float] = []
        self.woken_resumed: list[float] = []
        # each task's requests: (asked for a slot, resumed with it, released it)
        self.cycles: dict[int, list[list[float]]] = {}

    def _take(self) -> None:
        super()._take()
        now = time.perf_counter()
        self.grant.append(now)
        self.states.append((now, self.in_flight, self.waiting))

    def _next(self) -> Any:
        fut = super()._next()
        if fut is not None:
            self.woken.append(time.perf_counter())
        return fut

    def _cycle(self) -> list[list[float]]:
        return self.cycles.setdefault(id(asyncio.current_task()), [])

    def try_acquire(self) -> bool:
        asked = time.perf_counter()
        self._cycle().append([asked, 0.0, 0.0])
        if super().try_acquire():
            self.resume.append(self.grant[-1])
            self._cycle()[-1][1] = self.grant[-1]
            return True
        return False

    async def acquire(self) -> None:
        cycle = self._cycle()
        if not cycle or cycle[-1][1]:  # not asked through try_acquire first
            cycle.append([time.perf_counter(), 0.0, 0.0])
        waits = not (self.in_flight < self.limit and not self.waiting)
        await super().acquire()
        now = time.perf_counter() if waits else self.grant[-1]
        self.resume.append(now)
        cycle[-1][1] = now
        if waits:
            self.woken_resumed.append(now)

    def release(self) -> bool:
        now = time.perf_counter()
        self.release_at.append(now)
        cycle = self._cycle()
        if cycle:
            cycle[-1][2] = now
        self.in_flight -= 1
        self.states.append((now, self.in_flight, self.waiting))
        return self._wake()


def trace_server(server: Any, log: dict[str, list[float]]) -> None:
    """Stamp a :class:`serve.endpoint.server.ServerState`'s requests into ``log``
    (``arrival``, ``start``, ``due``, ``end``): the handler's start, the service's start on
    the slot's virtual clock, the service's end there, the service sleep's wake."""
    for k in ("arrival", "start", "due", "end"):
        log.setdefault(k, [])
    arrival, serve = server.arrival, server.latency.serve
    compute = server.latency._compute
    asked: ContextVar[float] = ContextVar("asked", default=0.0)  # the request's own task

    def stamped_arrival() -> int:
        log["arrival"].append(time.perf_counter())
        return int(arrival())

    async def stamped_serve(seconds: float, arrived: float | None = None) -> None:
        asked.set(seconds)
        await serve(seconds, arrived)

    async def stamped_compute(seconds: float) -> None:
        # ``seconds``: what is left of the slot's virtual service (it started at the
        # request's arrival or the slot's last end), so the service is [due - asked, due]
        t = time.perf_counter()
        log["start"].append(t + seconds - asked.get())
        log["due"].append(t + seconds)
        try:
            await compute(seconds)
        finally:
            log["end"].append(time.perf_counter())

    server.arrival = stamped_arrival
    server.latency.serve = stamped_serve
    server.latency._compute = stamped_compute


def _integral(events: Sequence[float], t0: float, t1: float) -> float:
    """The integral over [t0, t1] of the count of ``events`` (sorted) up to t."""
    n0 = bisect.bisect_right(events, t0)
    n1 = bisect.bisect_right(events, t1)
    return n0 * (t1 - t0) + sum(t1 - e for e in events[n0:n1])


def _free(states: Sequence[tuple[float, int, int]], cap: int, t0: float, t1: float) -> float:
    """Limiter slot-seconds free over [t0, t1] (C minus the slots held)."""
    free, held, last = 0.0, 0, t0
    for t, in_flight, _ in states:
        if t > t1:
            break
        if t > t0:
            free += (cap - held) * (t - last)
            last = t
        held = in_flight
    return free + (cap - held) * (t1 - last)


def phase_shares(
    client: TracedLimiter,
    server: dict[str, list[float]],
    cap: int,
    t0: float,
    t1: float,
) -> dict[str, float]:
    """Each phase's share of the window's C x W limiter slot-seconds; the shares sum to 1
    (the ``service`` share is the case's figure, :func:`busy_share`, up to the float sums)."""
    streams: dict[str, list[float]] = {
        "grant": client.grant,
        "resume": client.resume,
        "release": client.release_at,
        **{k: sorted(v) for k, v in server.items() if not k.startswith("gc_")},
    }
    for k in ("grant", "resume", "release"):
        streams[k] = sorted(streams[k])
    total = cap * (t1 - t0)
    area: Callable[[str], float] = lambda k: _integral(streams[k], t0, t1)  # noqa: E731
    shares = {label: (area(a) - area(b)) / total for label, a, b in PHASES}
    shares["limiter slot free (no request ready)"] = _free(client.states, cap, t0, t1) / total
    return {k: round(v, 5) for k, v in shares.items()}


def busy_share(server: dict[str, list[float]], cap: int, t0: float, t1: float) -> float:
    """The server's utilization over [t0, t1]: each request's service interval
    [``start``, ``due``] clipped to the window, summed, over C x (t1 - t0) (the saturation
    figure, #50: no request is counted whole or not at all, so the window has no edges to
    cut; ``start`` and ``due`` are stamped together, so their lists pair by index)."""
    busy = sum(
        max(0.0, min(d, t1) - max(s, t0))
        for s, d in zip(server["start"], server["due"], strict=True)
    )
    return busy / (cap * (t1 - t0))


def ramp_s(server: dict[str, list[float]], level: int, started: float) -> float | None:
    """Seconds from the run's start until ``level`` server slots first compute at once (the
    start-up ramp, with ``level`` the window's mean busy slots: the window's warm-up must
    cover it); None if they never do."""
    events = sorted([(t, 1) for t in server["start"]] + [(t, -1) for t in server["due"]])
    busy = 0
    for t, step in events:
        busy += step
        if busy >= level:
            return t - started
    return None


def _quantiles_ms(xs: list[float]) -> tuple[float, float]:
    """(median, p99) of ``xs`` in milliseconds (0, 0 when empty), by the quantile the run's
    latency figures use (:func:`scoring.analyses.cost.quantile`)."""
    return 1000 * quantile(xs, 0.5), 1000 * quantile(xs, 0.99)


def turnarounds(client: TracedLimiter, t0: float, t1: float) -> dict[str, float]:
    """Per request in [t0, t1], in ms (median and p99): the limiter's hand-off (a freed slot
    given to a waiter -> the waiter's coroutine runs, where it sends its prepared request)
    and the client's turnaround (an episode's slot released, its reply in -> the same
    episode's next request asks for a slot: the reply's processing, the next turn, the next
    body built)."""
    hand_off = [
        r - w for w, r in zip(client.woken, client.woken_resumed, strict=False) if t0 <= w <= t1
    ]
    turn = [
        b[0] - a[2]
        for cycle in client.cycles.values()
        for a, b in itertools.pairwise(cycle)
        if a[2] and t0 <= a[2] <= t1
    ]
    h50, h99 = _quantiles_ms(hand_off)
    c50, c99 = _quantiles_ms(turn)
    return {
        "hand_off_ms_median": round(h50, 3),
        "hand_off_ms_p99": round(h99, 3),
        "hand_offs": len(hand_off),
        "turnaround_ms_median": round(c50, 3),
        "turnaround_ms_p99": round(c99, 3),
        "turnarounds": len(turn),
    }


class GcPauses:
    """The cyclic collector's pauses in this process, stamped by ``gc.callbacks`` while
    entered: (start, end, generation, thread CPU seconds): the CPU is what no load moves."""

    def __init__(self) -> None:
        self.pauses: list[tuple[float, float, int, float]] = []
        self._start = self._cpu = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start, self._cpu = time.perf_counter(), time.thread_time()
        else:
            cpu = time.thread_time() - self._cpu
            self.pauses.append((self._start, time.perf_counter(), info["generation"], cpu))

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)

    def columns(self) -> dict[str, list[float]]:
        """The pauses as four lists (``gc_start``, ``gc_end``, ``gc_generation``,
        ``gc_cpu``): a child's, sent to the parent as JSON (:meth:`from_columns`)."""
        names = ("gc_start", "gc_end", "gc_generation", "gc_cpu")
        return {name: [float(p[i]) for p in self.pauses] for i, name in enumerate(names)}

    @classmethod
    def from_columns(cls, log: dict[str, list[float]]) -> GcPauses:
        got = cls()
        names = ("gc_start", "gc_end", "gc_generation", "gc_cpu")
        columns = [log.get(name, []) for name in names]
        got.pauses = [(s, e, int(g), c) for s, e, g, c in zip(*columns, strict=True)]
        return got

    def share(self, t0: float, t1: float) -> dict[str, Any]:
        """The share of [t0, t1] spent in collections, in all and of generation 2; the
        longest pause in ms; the collections of each generation and their CPU in ms."""
        inside = [(max(s, t0), min(e, t1), g, c) for s, e, g, c in self.pauses if e > t0 and s < t1]
        total = sum(e - s for s, e, _, _ in inside)
        old = sum(e - s for s, e, g, _ in inside if g == 2)
        longest = max((e - s for s, e, _, _ in inside), default=0.0)
        return {
            "gc_share": round(total / (t1 - t0), 5),
            "gc2_share": round(old / (t1 - t0), 5),
            "gc_longest_ms": round(1000 * longest, 2),
            "gc_pauses": len(inside),
            "gc_by_generation": [sum(g == k for _, _, g, _ in inside) for k in range(3)],
            "gc_cpu_ms": round(1000 * sum(c for _, _, _, c in inside), 2),
        }
