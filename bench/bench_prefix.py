"""Prefix-cache affinity: prefilled tokens, episodes per hour and the tail, four routings.

Four replicas of the scripted endpoint (in the runner's event loop) each emulate a
batching GPU server with a prefix cache (:mod:`serve.endpoint.prefix_cache`): C slots, the token
latency model charging prefill only for uncached prompt tokens, KV blocks of 16 tokens and
an LRU capacity sized to hold the transcripts of that replica's share of the episodes in
flight (not every episode's). The real runner runs a grid of raw + checklist + enforce
(perfect agent, S = 10, one seed's three arms adjacent) against them four times: routing
``affinity``, ``least-in-flight``, and what deployed load balancers do, ``round-robin`` and
``random`` (seeded). Figures, from the servers' counters, for each routing:

- prefilled tokens over the minimum: the minimum is what one unbounded cache shared by all
  replicas would have prefilled (each distinct prefix block computed once; the replicas'
  shared oracle);
- episodes per hour, in the token model's time;
- makespan over its lower bound: the time the episodes took (compiles done before) over
  the total service time the servers were asked for divided by the total slots.

Time is virtual (:mod:`bench._virtual`): the clock moves only when every coroutine waits on
a timer, so the figures measure the schedule (service, queues, routing, the tail), not this
machine's CPU or its other tenants; the real seconds and CPU seconds of each run are in the
JSON line. The four routings run in parallel processes (one per core): the case takes the
CPU of the four runs divided by the cores.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench._common import client_cpu_s, row, scratch
from bench._virtual import in_parallel, run_virtual
from runner.execution.connect import open_endpoints
from runner.execution.scheduler import RunState, expected_seeds, pending_tasks, run_grid
from runner.grid.expand import Grid, parse_grid
from serve.config import LatencyConfig, PrefixCacheConfig, ServerConfig
from serve.endpoint.app import start_replicas, stop_server

__all__ = ["run"]

REPLICAS = 4
SLOTS = 8  # per replica (vLLM's max_num_seqs)
OVERSUBSCRIBE = 1.25  # episodes in flight per slot
# Slot-seconds per request, per uncached prompt token, per completion token: a decoded token
# costs about five prefilled ones of a batching server's time, so an uncached 2,000-token
# transcript costs about seven 60-token replies.
BASE_S, PREFILL_S, DECODE_S = 2e-3, 2e-5, 1e-4
CACHE_PER_EPISODE = 8_000  # tokens of cache per episode in flight on a replica
PREFILL_TARGET, MAKESPAN_TARGET = 1.05, 1.05  # on >= 400 episodes (#50: prefill was 1.1)
ARMS = ("raw", "checklist", "enforce")
ROUTINGS = ("affinity", "least-in-flight", "round-robin", "random")
FULL_SEEDS, QUICK_SEEDS = 134, 24  # x 3 arms: 402 or 72 episodes per routing
MIN_EPISODES = 400  # the targets need a run (and a tail) of this many episodes


def _grid(urls: tuple[str, ...], routing: str, seeds: str, concurrency: int) -> Grid:
    return parse_grid(
        {
            "run": {
                "seeds": seeds,
                "graphs": [{"steps": 10, "density": 0.15}],
                "arms": list(ARMS),
                "concurrency": concurrency,
            },
            "endpoints": [
                {
                    "name": "bench",
                    "base_urls": list(urls),
                    "max_in_flight": concurrency,
                    "replica_slots": SLOTS,
                    "routing": routing,
                }
            ],
            "models": [{"name": "scripted/perfect", "endpoint": "bench"}],
            "decoding": {"attempts": 2, "backoff_s": 0.05, "timeout_s": 120},
        },
        source="bench",
    )


async def _stats(urls: list[str]) -> list[dict[str, Any]]:
    async with aiohttp.ClientSession() as s:
        out = []
        for u in urls:
            async with s.get(u.removesuffix("/v1") + "/stats") as r:
                out.append(await r.json())
        return out


def _delta(after: list[dict[str, Any]], before: list[dict[str, Any]], key: str) -> float:
    return float(sum(a[key] - b[key] for a, b in zip(after, before, strict=True)))


async def _drive(routing: str, seeds: str, out: Path) -> dict[str, Any]:
    from runner.gates.helper_models import Helpers
    from scoring.results.stream import StreamingScorer

    concurrency = int(REPLICAS * SLOTS * OVERSUBSCRIBE)
    runners, urls = await start_replicas(_server_config(concurrency), REPLICAS)
    grid = _grid(tuple(urls), routing, seeds, concurrency)
    loop = asyncio.get_running_loop()
    try:
        async with open_endpoints(grid) as endpoints:
            tasks, _ = pending_tasks(grid, out)
            state = RunState(grid=grid, out=out, endpoints=endpoints)
            state.helpers = Helpers(grid, out, endpoints)
            await state.helpers.precompile(tasks)
            before = await _stats(urls)
            t0 = loop.time()
            await run_grid(state, tasks, StreamingScorer(expected_seeds(grid)))
            wall = loop.time() - t0
            after = await _stats(urls)
            moves = sum(e.chooser.moves for e in endpoints.values())
    finally:
        for r in runners:
            await stop_server(r)
    return {
        "episodes": state.progress.done,
        "infrastructure": state.progress.infrastructure,
        "wall_s": wall,
        "requests": _delta(after, before, "completed"),
        "prefilled": _delta(after, before, "prefilled_tokens"),
        "minimum": _delta(after, before, "oracle_prefilled_tokens"),
        "prompt": _delta(after, before, "prompt_tokens"),
        "busy_s": _delta(after, before, "busy_s"),
        "evicted_blocks": _delta(after, before, "evicted_blocks"),
        "moves": moves,
    }


def _server_config(concurrency: int) -> ServerConfig:
    capacity = int(concurrency / REPLICAS * CACHE_PER_EPISODE)
    return ServerConfig(
        concurrency=SLOTS,
        latency=LatencyConfig(
            mode="tokens",
            seconds=BASE_S,
            prefill_s_per_token=PREFILL_S,
            decode_s_per_token=DECODE_S,
        ),
        prefix_cache=PrefixCacheConfig(enabled=True, block_size=16, capacity_tokens=capacity),
    )


def _one(routing: str, seeds: str) -> dict[str, Any]:
    concurrency = int(REPLICAS * SLOTS * OVERSUBSCRIBE)
    capacity = _server_config(concurrency).prefix_cache.capacity_tokens
    with scratch(f"prefix-{routing}") as out:
        c0, w0 = client_cpu_s(), time.perf_counter()
        r = run_virtual(_drive(routing, seeds, out))
        r["cpu_s"], r["real_s"] = client_cpu_s() - c0, time.perf_counter() - w0
    bound = r["busy_s"] / (REPLICAS * SLOTS)
    return {
        "routing": routing,
        **{k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()},
        "prefill_over_minimum": round(r["prefilled"] / r["minimum"], 4),
        "episodes_per_hour": round(r["episodes"] / r["wall_s"] * 3600),
        "makespan_bound_s": round(bound, 3),
        "makespan_over_bound": round(r["wall_s"] / bound, 4),
        "cache_tokens_per_replica": capacity,
        "episodes_in_flight": concurrency,
    }


def _routings(seeds: str) -> dict[str, dict[str, Any]]:
    """Each routing in its own process (:func:`bench._virtual.in_parallel`): the figures are
    on each run's virtual clock, so running them side by side moves none of them."""
    return dict(zip(ROUTINGS, in_parallel(_one, [(r, seeds) for r in ROUTINGS]), strict=True))


def run(quick: bool = False) -> dict[str, Any]:
    n_seeds = QUICK_SEEDS if quick else FULL_SEEDS
    seeds = f"100-{99 + n_seeds}"
    runs = _routings(seeds)
    a = runs["affinity"]
    rows = [
        row(
            "affinity: prefilled tokens / minimum",
            a["prefill_over_minimum"],
            f"<= {PREFILL_TARGET}",
            a["prefill_over_minimum"] <= PREFILL_TARGET if a["episodes"] >= MIN_EPISODES else None,
        ),
        *(
            row(f"{r}: prefilled tokens / minimum", runs[r]["prefill_over_minimum"], "info", None)
            for r in ROUTINGS[1:]
        ),
        row(
            f"affinity: makespan / lower bound ({a['episodes']} episodes)",
            a["makespan_over_bound"],
            f"<= {MAKESPAN_TARGET}",
            a["makespan_over_bound"] <= MAKESPAN_TARGET if a["episodes"] >= MIN_EPISODES else None,
        ),
        *(
            row(f"{r}: makespan / lower bound", runs[r]["makespan_over_bound"], "info", None)
            for r in ROUTINGS[1:]
        ),
        row("episodes/hour (model time): affinity", a["episodes_per_hour"], "info", None),
        *(
            row(f"episodes/hour: {r}", runs[r]["episodes_per_hour"], "info", None)
            for r in ROUTINGS[1:]
        ),
        *(
            row(
                f"episodes/hour: affinity / {r}",
                round(a["episodes_per_hour"] / runs[r]["episodes_per_hour"], 3),
                "> 1",
                a["episodes_per_hour"] > runs[r]["episodes_per_hour"],
            )
            for r in ROUTINGS[1:]
        ),
        row(
            "machine calibration: real s of CPU per 100 episodes (virtual clock: not a figure)",
            round(
                100
                * sum(x["cpu_s"] for x in runs.values())
                / sum(x["episodes"] for x in runs.values()),
                2,
            ),
            "info",
            None,
        ),
    ]
    return {
        "case": "prefix",
        "setup": f"{REPLICAS} replicas x {SLOTS} slots, prefix cache 16-token blocks, "
        f"{runs['affinity']['cache_tokens_per_replica']} tokens each; token model: "
        f"{BASE_S:g} s + {PREFILL_S:g} s/uncached prompt token + {DECODE_S:g} s/completion "
        f"token; {'+'.join(ARMS)}, S=10, perfect agent, seeds {seeds}, "
        f"{runs['affinity']['episodes_in_flight']} episodes in flight",
        "rows": rows,
        "runs": list(runs.values()),
    }
