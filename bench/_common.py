"""What the benchmark cases share: core pinning, the event loop, grids, timing, results."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from runner.grid.expand import Grid, parse_grid

__all__ = [
    "CLIENT_CORE",
    "SERVER_CORE",
    "Sampler",
    "abba",
    "client_cpu_s",
    "client_sys_s",
    "grid",
    "median",
    "paired",
    "pin",
    "ratios_of",
    "row",
    "run_loop",
    "scratch",
]

T = TypeVar("T")


def _cores() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return []


_CORES = _cores()
# Client on one core, endpoint on another, where the machine has two.
CLIENT_CORE: int | None = _CORES[0] if len(_CORES) >= 2 else None
SERVER_CORE: int | None = _CORES[1] if len(_CORES) >= 2 else None


def pin(core: int | None) -> None:
    """Pin this process to ``core`` (no-op where the OS or the machine does not allow it)."""
    if core is None:
        return
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or not allowed
        os.sched_setaffinity(0, {core})


def run_loop(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``main()`` on uvloop (as ``ladder run`` does) with the client pinned."""
    pin(CLIENT_CORE)
    try:
        import uvloop

        return uvloop.run(main())
    except ImportError:  # pragma: no cover
        return asyncio.run(main())


def client_cpu_s() -> float:
    """This process's user + system CPU seconds (the OS's accounting)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def client_sys_s() -> float:
    """This process's system (kernel) CPU seconds: sending and receiving on its sockets."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime


def status_bytes(field: str) -> int:
    """A ``/proc/self/status`` size (VmRSS, VmHWM) in bytes. VmHWM is this process's own
    peak RSS; ``getrusage``'s ru_maxrss is not, since Linux carries it across fork + exec."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def abba(measures: Sequence[Callable[[], T]], rounds: int) -> list[list[T]]:
    """Each of *measures* once per round, in their order in even rounds and reversed in odd
    ones (ABBA): a drift in the machine's speed falls on every measure alike. One list per
    round, its results in the order of *measures* whatever order they ran in."""
    out: list[list[T]] = []
    for i in range(rounds):
        order = range(len(measures)) if i % 2 == 0 else range(len(measures) - 1, -1, -1)
        got = {j: measures[j]() for j in order}
        out.append([got[j] for j in range(len(measures))])
    return out


def paired(ratios: Sequence[float]) -> tuple[float, float, float]:
    """(median, lowest, highest) of per-round ratios: the statistic a row reads from ABBA
    rounds (a ratio within each round, so each pair shares that round's machine)."""
    xs = sorted(ratios)
    return (median(xs), xs[0], xs[-1]) if xs else (float("nan"),) * 3


def ratios_of(
    rounds: Sequence[Sequence[Sequence[float]]], num: int, den: int, at: int
) -> list[float]:
    """Each round's ratio of measure *num* over measure *den*, both read at index *at* of a
    measure's result (say 0 wall, 1 CPU): the per-round ratios :func:`paired` reads, in the
    order the rounds ran."""
    return [r[num][at] / r[den][at] for r in rounds]


def grid(
    url: str,
    *,
    model: str = "scripted/perfect",
    arms: tuple[str, ...] = ("raw", "checklist"),
    steps: int = 10,
    density: float = 0.15,
    seeds: str = "100-131",
    concurrency: int = 128,
    max_in_flight: int = 64,
    briefs: tuple[str, ...] = ("amended",),
    extra_models: tuple[dict[str, Any], ...] = (),
) -> Grid:
    return parse_grid(
        {
            "run": {
                "seeds": seeds,
                "graphs": [{"steps": steps, "density": density}],
                "arms": list(arms),
                "briefs": list(briefs),
                "concurrency": concurrency,
            },
            "endpoints": [{"name": "bench", "base_url": url, "max_in_flight": max_in_flight}],
            "models": [{"name": model, "endpoint": "bench"}, *extra_models],
            "decoding": {"attempts": 2, "backoff_s": 0.05, "timeout_s": 120},
        },
        source="bench",
    )


@contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix=f"ladder-bench-{prefix}-") as d:
        yield Path(d)


def row(
    figure: str, value: float | None, target: str, holds: bool | None, **extra: Any
) -> dict[str, Any]:
    """One line of the table: a figure, its value, its target and whether it holds."""
    return {"figure": figure, "value": value, "target": target, "holds": holds, **extra}


@dataclass
class Sampler:
    """Samples counters every ``every`` seconds while a run goes on."""

    read: Callable[[], tuple[float, ...]]
    every: float = 0.1
    samples: list[tuple[float, tuple[float, ...]]] = field(default_factory=list)

    async def run(self) -> None:
        while True:
            self.samples.append((time.perf_counter(), self.read()))
            await asyncio.sleep(self.every)
