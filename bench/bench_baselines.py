"""Against what users would write instead: same endpoint, same episodes, same cap, one run.

Part 1 (server-bound): the scripted endpoint emulates a batching server (cap C = 64, fixed
service time L). The same grid (raw and checklist, S = 10, the perfect agent) is run by

* the runner (``run_grid``: endpoint limit C, 2 C episodes in flight);
* (b) a plain ``openai.AsyncOpenAI`` client (default transport) with an
  ``asyncio.Semaphore(C)`` and ``asyncio.gather`` over every episode (of a third of the
  grid: it is CPU-bound, so its rate does not depend on the grid's size);
* (a) the paper's launcher shape, one sequential job per cell: one episode after another,
  one request in flight (timed over the first 12 requests of its first episode; a request
  costs L plus a steady few ms, so its rate does not depend on which).

Figures: requests per second over the whole grid, as ratios to the runner's. The paper ran
one such job per cell, several at once; with k cell jobs at once, (a)'s ratio divides by k.

Part 2 (client-bound, zero latency, 64 in flight): CPU per request in this process and
requests per second for the runner, and for ``gather`` + semaphore over four clients: a bare
``aiohttp.ClientSession`` loop (the floor: the runner's CPU per request is set against it,
target <= 1.2), the runner's raw-aiohttp ``Endpoint``, ``AsyncOpenAI`` on its default
transport (httpx2), and ``AsyncOpenAI`` on ``DefaultAioHttpClient`` (both on 4 of the 16
episodes: CPU-bound at 14 ms a request). Medians over repeats, alternating.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from bench._common import SERVER_CORE, grid, median, row, run_loop, scratch
from bench._drive import drive_runner
from bench._endpoint import endpoint_process, server_config
from bench._users import aiohttp_agent, bare_aiohttp_agent, gather_all, launcher_job, openai_agent
from bench._virtual import run_virtual

__all__ = ["run"]

CAP = 64
BIG_CAP = 256  # (a) at C = 256 (#50): the same L, 1.5 C episodes all in flight at once
BIG_TARGET = 100  # x one sequential cell job
MODEL = "scripted/perfect"
BUDGET = 400  # the no-think reply budget the runner sends
RUNNER_X_BARE = 1.2  # the runner's client CPU per request over a bare aiohttp loop's
SCHEDULE_TARGET = 1.05  # part 1's grid on a virtual clock: makespan / the work's bound (#50)
# (a)'s rate from the first requests of its first episode (#50; it ran the whole episode,
# 44 requests, 11 s): one request in flight, each L plus 3 ms of client and server work
# that grows by under 0.1 ms from turn 4 to turn 38 (bench_turn_cost), so the rate of the
# first 12 is the episode's to 0.05%, and the ratio to the runner's with it
JOB_REQUESTS = 12


class _Enough(Exception):
    """The sequential job has answered the requests its rate is read from."""


async def _sequential_rate(g: Any, agent: Any, count: list[int], requests: int) -> float:
    """Requests per second of one sequential cell job (:func:`launcher_job`: one request in
    flight) over its first ``requests`` requests, the job's start included."""

    async def call(messages: list[dict[str, str]]) -> Any:
        reply = await agent(messages)
        if count[0] >= requests:
            raise _Enough
        return reply

    t0 = time.perf_counter()
    with contextlib.suppress(_Enough):
        await launcher_job(g, call, count, 1)
    wall = time.perf_counter() - t0
    if count[0] < requests:
        raise RuntimeError(f"the sequential job ended after {count[0]} requests")
    return requests / wall


def _have_openai_aiohttp() -> bool:
    try:
        import openai

        openai.DefaultAioHttpClient()
    except (ImportError, RuntimeError):
        return False
    return True


async def _user(g: Any, url: str, client: str, cap: int) -> Any:
    with scratch("user") as out:
        if client == "aiohttp":
            async with aiohttp_agent(url, MODEL, BUDGET, cap) as (agent, count):
                return await gather_all(g, agent, count, out / "log.jsonl")
        if client == "bare-aiohttp":
            async with bare_aiohttp_agent(url, MODEL, BUDGET, cap) as (agent, count):
                return await gather_all(g, agent, count, out / "log.jsonl")
        sem = asyncio.Semaphore(cap)
        async with openai_agent(url, MODEL, BUDGET, sem, aiohttp=client == "openai-aiohttp") as (
            agent,
            count,
        ):
            return await gather_all(g, agent, count, out / "log.jsonl")


def _server_bound(quick: bool) -> dict[str, Any]:
    L = 0.05 if quick else 0.25
    per_arm = 32 if quick else 48
    cfg = server_config(concurrency=CAP, mode="fixed", seconds=L)
    with endpoint_process(cfg, core=SERVER_CORE) as ep:
        g = grid(ep.url, seeds=f"100-{99 + per_arm}", concurrency=2 * CAP, max_in_flight=CAP)
        # (b) on a third of the grid (a quarter under quick): AsyncOpenAI is CPU-bound here
        # (70.6 requests/s on the quiet machine, its 14.2 ms of CPU a request: 4,224
        # requests took 59.8 s = 4,224 x 14.2 ms) far below what its episodes could reach
        # (32 in flight / L = 128 requests/s), so its rate does not depend on the grid's
        # size; a third of the grid saves 40 s of the bench (#50)
        b_arm = per_arm // 4 if quick else per_arm // 3
        g_b = grid(ep.url, seeds=f"100-{99 + b_arm}", concurrency=2 * CAP, max_in_flight=CAP)

        async def main() -> dict[str, Any]:
            with scratch("runner") as out:
                r = await drive_runner(g, out)
            b = await _user(g_b, ep.url, "openai", CAP)
            async with aiohttp_agent(ep.url, MODEL, BUDGET, 1) as (agent, count):
                a_rps = await _sequential_rate(g, agent, count, JOB_REQUESTS)
            return {
                "runner_rps": r.requests / r.wall_s,
                "runner_wall_s": r.wall_s,
                "b_rps": b.requests / b.wall_s,
                "b_wall_s": b.wall_s,
                "a_rps": a_rps,
                "a_requests": JOB_REQUESTS,
                "requests": r.requests,
                "b_requests": b.requests,
                "infrastructure": r.infrastructure + b.infrastructure,
                "cells": len(g.cells()),
                "L_s": L,
                "cap": CAP,
            }

        return run_loop(main)


def _server_bound_big(L: float) -> dict[str, Any]:
    """The runner alone at C = 256 (limit C, 384 episodes in flight: 1.5 C, as part 1's 1.5
    x 64): requests/s over the whole grid, ramp and tail included. The sequential cell job's
    rate at the same L comes from part 1 (one request in flight: it does not depend on C)."""
    per_arm = 3 * BIG_CAP // 4
    cfg = server_config(concurrency=BIG_CAP, mode="fixed", seconds=L)
    with endpoint_process(cfg, core=SERVER_CORE) as ep, scratch("runner") as out:
        g = grid(
            ep.url,
            seeds=f"100-{99 + per_arm}",
            concurrency=2 * per_arm,
            max_in_flight=BIG_CAP,
        )
        r = run_loop(lambda: drive_runner(g, out))
    return {
        "runner_rps": r.requests / r.wall_s,
        "runner_wall_s": r.wall_s,
        "requests": r.requests,
        "episodes": r.episodes,
        "infrastructure": r.infrastructure,
        "L_s": L,
        "cap": BIG_CAP,
    }


def _client_bound(quick: bool) -> dict[str, Any]:
    seeds = "100-107"
    repeats = 1 if quick else 2  # alternating; keeps just bench within 12 minutes
    # The runner against the bare loop on a grid big enough that the runner's set-up (log
    # files, scorer, compile batch) is spread over thousands of requests, as in a real run.
    big_seeds = "100-163"  # 128 episodes, 5,632 requests (the client_cpu grid)
    clients = ["bare-aiohttp", "aiohttp", "openai"] + (
        ["openai-aiohttp"] if not quick and _have_openai_aiohttp() else []
    )
    cpu: dict[str, list[float]] = {c: [] for c in ["runner", *clients]}
    rps: dict[str, list[float]] = {c: [] for c in cpu}
    big_cpu: dict[str, list[float]] = {"runner": [], "bare-aiohttp": []}
    with endpoint_process(server_config(), core=SERVER_CORE) as ep:
        g = grid(ep.url, seeds=seeds, concurrency=CAP, max_in_flight=CAP)
        big = grid(ep.url, seeds=big_seeds, concurrency=CAP, max_in_flight=CAP)
        # AsyncOpenAI on a quarter of it: 14 ms of CPU a request (35x the runner's, 40x the
        # endpoint's), so 4 episodes keep it CPU-bound at zero latency and its CPU per
        # request and requests/s are those of 16, whose 704 requests took 10 s a run (#50:
        # -30 s of the bench; its client is built outside the timing)
        g_openai = grid(ep.url, seeds="100-101", concurrency=CAP, max_in_flight=CAP)
        # warm-up (imports, pydantic models): one seed is enough for that
        warm = grid(ep.url, seeds="100", concurrency=CAP, max_in_flight=CAP)

        async def main() -> None:
            await _user(warm, ep.url, "openai", CAP)
            for _ in range(repeats):
                with scratch("runner") as out:
                    r = await drive_runner(g, out)
                cpu["runner"].append(1000 * r.cpu_s / r.requests)
                rps["runner"].append(r.requests / r.wall_s)
                for c in clients:
                    u = await _user(g_openai if c.startswith("openai") else g, ep.url, c, CAP)
                    cpu[c].append(1000 * u.cpu_s / u.requests)
                    rps[c].append(u.requests / u.wall_s)
                with scratch("runner") as out:
                    r = await drive_runner(big, out)
                big_cpu["runner"].append(1000 * r.cpu_s / r.requests)
                u = await _user(big, ep.url, "bare-aiohttp", CAP)
                big_cpu["bare-aiohttp"].append(1000 * u.cpu_s / u.requests)

        run_loop(main)
    return {
        "cpu_ms_per_request": {c: round(median(v), 4) for c, v in cpu.items()},
        "requests_per_s": {c: round(median(v), 1) for c, v in rps.items()},
        "clients": clients,
        "runner_x_bare": [
            round(a / b, 3) for a, b in zip(big_cpu["runner"], big_cpu["bare-aiohttp"], strict=True)
        ],
        "big_grid_seeds": big_seeds,
        "quick": quick,
    }


def run(quick: bool = False) -> dict[str, Any]:
    s = _server_bound(quick)
    per_arm = 32 if quick else 48
    sched = _schedule(s["L_s"], per_arm)
    big = None if quick else _server_bound_big(s["L_s"])
    c = _client_bound(quick)
    a = s["runner_rps"] / s["a_rps"]
    b = s["runner_rps"] / s["b_rps"]
    cpu, rps = c["cpu_ms_per_request"], c["requests_per_s"]
    x_bare = median(c["runner_x_bare"])
    rows = [
        row(
            f"(a) runner / one sequential cell job, C={CAP} L={s['L_s']}s",
            round(a, 1),
            ">= 50",
            a >= 50,
        ),
        _schedule_row(sched, 2 * per_arm),
        _big_row(big, s["a_rps"]),
        row(
            f"(a) runner / all {s['cells']} cell jobs at once",
            round(a / s["cells"], 1),
            "info",
            None,
        ),
        row(
            f"(b) runner / AsyncOpenAI+Semaphore, C={CAP} L={s['L_s']}s (wall)",
            round(b, 3),
            "> 1",
            b > 1,
        ),
        row(
            "(b) zero latency: runner / AsyncOpenAI requests/s",
            round(rps["runner"] / rps["openai"], 2),
            "> 1",
            rps["runner"] > rps["openai"],
        ),
        row(
            f"zero latency: runner / bare aiohttp loop CPU per request (seeds {c['big_grid_seeds']})",
            x_bare,
            f"<= {RUNNER_X_BARE}",
            x_bare <= RUNNER_X_BARE,
        ),
        row(
            "(b) zero latency: AsyncOpenAI / runner CPU per request",
            round(cpu["openai"] / cpu["runner"], 2),
            "info",
            None,
        ),
    ]
    if "openai-aiohttp" in cpu:
        ratio = cpu["openai-aiohttp"] / cpu["aiohttp"]
        faster = "raw aiohttp" if ratio > 1 else "openai+aiohttp"
        rows.append(
            row(
                f"openai DefaultAioHttpClient / raw aiohttp CPU per request ({faster} faster)",
                round(ratio, 2),
                "info",
                None,
            )
        )
        rows.append(
            row(
                "openai DefaultAioHttpClient / openai default transport CPU per request",
                round(cpu["openai-aiohttp"] / cpu["openai"], 2),
                "info",
                None,
            )
        )
    else:
        why = "not run (--quick)" if c["quick"] else "not installed"
        rows.append(row("openai DefaultAioHttpClient", None, why, None))
    return {
        "case": "baselines",
        "rows": rows,
        "server_bound": s,
        "server_bound_c256": big,
        "schedule_c64": sched,
        "client_bound": c,
    }


async def _schedule_run(L: float, per_arm: int) -> tuple[float, int]:
    from runner.execution.connect import open_endpoints
    from runner.execution.scheduler import RunState, pending_tasks, run_grid, streaming_scorer
    from serve.config import LatencyConfig, ServerConfig
    from serve.endpoint.app import start_server, stop_server

    config = ServerConfig(concurrency=CAP, latency=LatencyConfig(mode="fixed", seconds=L))
    server, url = await start_server(config)
    g = grid(url, seeds=f"100-{99 + per_arm}", concurrency=2 * CAP, max_in_flight=CAP)
    loop = asyncio.get_running_loop()
    try:
        with scratch("schedule") as out:
            async with open_endpoints(g) as endpoints:
                tasks, _ = pending_tasks(g, out)
                t0 = loop.time()
                state = RunState(grid=g, out=out, endpoints=endpoints)
                await run_grid(state, tasks, streaming_scorer(g))
                return loop.time() - t0, sum(e.requests for e in endpoints.values())
    finally:
        await stop_server(server)


def _schedule(L: float, per_arm: int) -> dict[str, Any]:
    """Part 1's runner grid on a virtual clock (:mod:`bench._virtual`: client and server in
    one loop, CPU costs no time): the schedule's makespan over the work's bound (requests x
    L / C), which no load moves (#50: the run's tail, :mod:`runner.client.limiter`)."""
    makespan, requests = run_virtual(_schedule_run(L, per_arm))
    bound = requests * L / CAP
    return {"makespan_s": round(makespan, 3), "bound_s": round(bound, 3), "requests": requests}


def _schedule_row(sched: dict[str, Any], episodes: int) -> dict[str, Any]:
    ratio = round(sched["makespan_s"] / sched["bound_s"], 4)
    return row(
        f"(a) C={CAP} on a virtual clock: makespan / work bound ({episodes} episodes)",
        ratio,
        f"<= {SCHEDULE_TARGET}",
        ratio <= SCHEDULE_TARGET,
    )


def _big_row(big: dict[str, Any] | None, a_rps: float) -> dict[str, Any]:
    if big is None:
        return row(
            f"(a) runner / one sequential cell job, C={BIG_CAP}", None, "not run (--quick)", None
        )
    ratio = big["runner_rps"] / a_rps
    return row(
        f"(a) runner / one sequential cell job, C={BIG_CAP} L={big['L_s']}s "
        f"({big['episodes']} episodes)",
        round(ratio, 1),
        f">= {BIG_TARGET}",
        ratio >= BIG_TARGET,
    )
