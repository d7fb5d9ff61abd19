"""The limiter's queue order (#40): oldest episode first against first come, first served.

One emulated GPU server (the scripted endpoint with 8 slots, the token latency model and a
prefix cache of 16-token blocks whose LRU capacity holds the transcripts of 16 episodes) and
the real runner with 64 episodes in flight over a cap of 8 requests: raw + checklist (perfect
agent, S = 10), once with the limiter's default (``oldest``) and once with ``fifo``. Figures:

- when the first episode finished, and when a tenth and half of them had, as fractions of
  the run's time (steady progress: an interruption loses the episodes in flight, no more);
- prefilled tokens over the minimum (one unbounded cache): with more episodes in flight
  than the cache holds, first come first served cycles through every episode's prefix and
  evicts each before its next turn; oldest first keeps the few live prefixes warm.

Time is virtual (:mod:`bench._virtual`): the figures measure the schedule, not this machine.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench._common import client_cpu_s, row, scratch
from bench._virtual import in_parallel, run_virtual
from runner.client.limiter import QueueOrder
from runner.execution.connect import open_endpoints
from runner.execution.scheduler import RunState, expected_seeds, pending_tasks, run_grid
from runner.grid.expand import Grid, parse_grid
from serve.config import LatencyConfig, PrefixCacheConfig, ServerConfig
from serve.endpoint.app import start_replicas, stop_server

__all__ = ["run"]

SLOTS = 8  # the server's slots and the client's cap on requests in flight
IN_FLIGHT = 64  # episodes in flight
CACHED_EPISODES = 16  # the prefix cache holds this many episodes' transcripts
CACHE_PER_EPISODE = 8_000
BASE_S, PREFILL_S, DECODE_S = 2e-3, 2e-5, 1e-4
ARMS = ("raw", "checklist")
FULL_SEEDS, QUICK_SEEDS = 192, 64  # x 2 arms: 384 or 128 episodes, 64 in flight
FIRST_TARGET = 0.1  # the first episode finishes within the first tenth of the run


def _grid(url: str, seeds: str) -> Grid:
    return parse_grid(
        {
            "run": {
                "seeds": seeds,
                "graphs": [{"steps": 10, "density": 0.15}],
                "arms": list(ARMS),
                "concurrency": IN_FLIGHT,
            },
            "endpoints": [{"name": "bench", "base_url": url, "max_in_flight": SLOTS}],
            "models": [{"name": "scripted/perfect", "endpoint": "bench"}],
            "decoding": {"attempts": 2, "backoff_s": 0.05, "timeout_s": 120},
        },
        source="bench",
    )


def _server() -> ServerConfig:
    return ServerConfig(
        concurrency=SLOTS,
        latency=LatencyConfig(
            mode="tokens",
            seconds=BASE_S,
            prefill_s_per_token=PREFILL_S,
            decode_s_per_token=DECODE_S,
        ),
        prefix_cache=PrefixCacheConfig(
            enabled=True, block_size=16, capacity_tokens=CACHED_EPISODES * CACHE_PER_EPISODE
        ),
    )


async def _stats(url: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as s, s.get(url.removesuffix("/v1") + "/stats") as r:
        data: dict[str, Any] = await r.json()
        return data


async def _drive(order: QueueOrder, seeds: str, out: Path) -> dict[str, Any]:
    runners, urls = await start_replicas(_server(), 1)  # one replica, its oracle cache
    url = urls[0]
    grid = _grid(url, seeds)
    loop = asyncio.get_running_loop()
    ends: list[float] = []
    try:
        async with open_endpoints(grid) as endpoints:
            for ep in endpoints.values():
                ep.limiter.order = order
            tasks, _ = pending_tasks(grid, out)
            state = RunState(grid=grid, out=out, endpoints=endpoints)
            state.on_episode = lambda _: ends.append(loop.time())
            before = await _stats(url)
            t0 = loop.time()
            await run_grid(state, tasks, _scorer(grid))
            wall = loop.time() - t0
            after = await _stats(url)
    finally:
        await stop_server(runners[0])
    at = sorted((e - t0) / wall for e in ends)
    return {
        "order": order,
        "episodes": len(ends),
        "first_finished_at": round(at[0], 4),
        "tenth_finished_at": round(at[len(at) // 10], 4),
        "half_finished_at": round(at[len(at) // 2], 4),
        "prefilled": after["prefilled_tokens"] - before["prefilled_tokens"],
        "minimum": after["oracle_prefilled_tokens"] - before["oracle_prefilled_tokens"],
        "wall_s": round(wall, 3),
    }


def _scorer(grid: Grid) -> Any:
    from scoring.results.stream import StreamingScorer

    return StreamingScorer(expected_seeds(grid))


def _one(order: QueueOrder, seeds: str) -> dict[str, Any]:
    with scratch(f"queue-{order}") as out:
        c0, w0 = client_cpu_s(), time.perf_counter()
        r = run_virtual(_drive(order, seeds, out))
        r["cpu_s"], r["real_s"] = client_cpu_s() - c0, time.perf_counter() - w0
    r["prefill_over_minimum"] = round(r["prefilled"] / r["minimum"], 4)
    return r


def run(quick: bool = False) -> dict[str, Any]:
    n_seeds = QUICK_SEEDS if quick else FULL_SEEDS
    seeds = f"100-{99 + n_seeds}"
    orders: tuple[QueueOrder, ...] = ("oldest", "fifo")
    # side by side, one process each (virtual clock: the figures do not move; #50)
    runs = dict(zip(orders, in_parallel(_one, [(o, seeds) for o in orders]), strict=True))
    old, fifo = runs["oldest"], runs["fifo"]
    rows = [
        row(
            "oldest first: first episode finished / run time",
            old["first_finished_at"],
            f"<= {FIRST_TARGET}",
            old["first_finished_at"] <= FIRST_TARGET,
        ),
        row("fifo: first episode finished / run time", fifo["first_finished_at"], "info", None),
        row("oldest first: half finished / run time", old["half_finished_at"], "info", None),
        row("fifo: half finished / run time", fifo["half_finished_at"], "info", None),
        row(
            "oldest first: prefilled tokens / minimum",
            old["prefill_over_minimum"],
            "< fifo's",
            old["prefill_over_minimum"] < fifo["prefill_over_minimum"],
        ),
        row("fifo: prefilled tokens / minimum", fifo["prefill_over_minimum"], "info", None),
        row(
            "run time: oldest first / fifo (model time)",
            round(old["wall_s"] / fifo["wall_s"], 4),
            "info",
            None,
        ),
    ]
    return {
        "case": "queue",
        "setup": f"1 server x {SLOTS} slots, cap {SLOTS} requests, {IN_FLIGHT} episodes in "
        f"flight, prefix cache for {CACHED_EPISODES} episodes ({CACHE_PER_EPISODE} tokens "
        f"each); {'+'.join(ARMS)}, S=10, perfect agent, seeds {seeds}",
        "rows": rows,
        "runs": list(runs.values()),
    }
