"""Driving a grid through the real runner (``runner.execution.scheduler.run_grid``) and timing it;
and the same grid through a bare aiohttp loop (:func:`drive_bare`), sampled alike."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from bench._common import Sampler, client_cpu_s, client_sys_s, scratch
from bench._users import bare_aiohttp_agent, gather_all
from runner.execution.connect import open_endpoints
from runner.execution.scheduler import RunState, expected_seeds, pending_tasks, run_grid
from runner.grid.expand import Grid

__all__ = ["RunResult", "drive_bare", "drive_runner"]


@dataclass
class RunResult:
    wall_s: float
    cpu_s: float  # this (client) process, user + system
    episodes: int
    turns: int  # agent turns (scripted user turns served)
    requests: int  # chat requests answered (agent + helper calls)
    prompt_tokens: int
    completion_tokens: int
    infrastructure: int
    peak_in_flight: int
    samples: list[tuple[float, tuple[float, ...]]] = field(default_factory=list)
    started: float = 0.0
    helpers: Any = None  # the run's runner.gates.helper_models.Helpers, when given


def _scorer(grid: Grid) -> Any:
    try:
        from scoring.results.stream import StreamingScorer
    except ImportError:  # pragma: no cover
        return None
    return StreamingScorer(expected_seeds(grid))


async def _watch(
    state: RunState, stop: Callable[[RunState], bool], scope: anyio.CancelScope
) -> None:
    """Cancel ``scope`` once ``stop`` says so (a figure's window is over: the run's tail
    would only cost time)."""
    while not stop(state):
        await anyio.sleep(0.05)
    scope.cancel()


async def drive_runner(
    grid: Grid,
    out: Path,
    *,
    score: bool = True,
    sample_every: float | None = None,
    helpers: Any = None,
    probe: Callable[[], float] | None = None,
    on_open: Callable[[dict[str, Any]], None] | None = None,
    stop: Callable[[RunState], bool] | None = None,
) -> RunResult:
    """Run ``grid`` into ``out`` as ``ladder run`` does (streaming scorer included unless
    ``score`` is false), with no display; optionally sample counters while it runs
    (``probe``: one more, sampled last, e.g. the endpoint process's CPU seconds); ``on_open``
    sees the open endpoints first; ``stop`` cancels the run once true (checked every 50 ms)."""
    async with open_endpoints(grid) as endpoints:
        if on_open is not None:
            on_open(endpoints)
        tasks, _ = pending_tasks(grid, out)
        state = RunState(grid=grid, out=out, endpoints=endpoints)
        if helpers is not None:  # as ``ladder run``: every compile first, as one batch
            state.helpers = helpers(grid, out, endpoints)
            await state.helpers.precompile(tasks)
        turns = 0

        def on_episode(record: Any) -> None:
            nonlocal turns
            turns += len(record.turns)

        state.on_episode = on_episode
        eps = list(endpoints.values())
        scorer = _scorer(grid) if score else None

        def read() -> tuple[float, ...]:
            return (
                float(sum(e.requests for e in eps)),
                float(sum(e.prompt_tokens for e in eps)),
                float(sum(e.completion_tokens for e in eps)),
                float(state.progress.done),
                client_cpu_s(),
                client_sys_s(),
                *((probe(),) if probe is not None else ()),
            )

        sampler = Sampler(read, every=sample_every or 1.0)
        c0, t0 = client_cpu_s(), time.perf_counter()
        async with anyio.create_task_group() as tg:
            if sample_every:
                tg.start_soon(sampler.run)
            if stop is not None:
                tg.start_soon(_watch, state, stop, tg.cancel_scope)
            await run_grid(state, tasks, scorer)
            tg.cancel_scope.cancel()
        wall, cpu = time.perf_counter() - t0, client_cpu_s() - c0
        sampler.samples.append((time.perf_counter(), read()))
        return RunResult(
            wall_s=wall,
            cpu_s=cpu,
            episodes=state.progress.done,
            turns=turns,
            requests=sum(e.requests for e in eps),
            prompt_tokens=sum(e.prompt_tokens for e in eps),
            completion_tokens=sum(e.completion_tokens for e in eps),
            infrastructure=state.progress.infrastructure,
            peak_in_flight=max(e.limiter.peak for e in eps),
            samples=sampler.samples,
            started=t0,
            helpers=state.helpers,
        )


async def drive_bare(
    grid: Grid,
    url: str,
    cap: int,
    *,
    model: str = "scripted/perfect",
    sample_every: float = 0.1,
    stop: Callable[[int], bool] | None = None,
) -> RunResult:
    """Every episode of ``grid`` at once through a bare aiohttp loop (``gather`` + an
    ``asyncio.Semaphore(cap)``: :func:`bench._users.bare_aiohttp_agent`), its counters
    sampled as :func:`drive_runner` samples the runner's (requests answered, then zero tokens:
    the bare agent does not sum them, then episodes done, client CPU and system seconds);
    ``stop`` (given the episodes done) cancels the loop once true (checked every 50 ms); an
    error out of the loop is raised."""
    max_tokens = 400  # as the other benches' bare loops; the scripted endpoint ignores it
    done = [0, 0, 0]  # episodes, turns, infrastructure

    def on_episode(record: Any) -> None:
        done[0] += 1
        done[1] += len(record.turns)
        done[2] += record.termination != "completed"

    async with bare_aiohttp_agent(url, model, max_tokens, cap) as (agent, count):

        def read() -> tuple[float, ...]:
            return (float(count[0]), 0.0, 0.0, float(done[0]), client_cpu_s(), client_sys_s())

        sampler = Sampler(read, every=sample_every)
        with scratch("bare") as out:
            c0, t0 = client_cpu_s(), time.perf_counter()
            sampling = asyncio.ensure_future(sampler.run())
            running = asyncio.ensure_future(
                gather_all(grid, agent, count, out / "log.jsonl", on_episode)
            )
            while not running.done() and not (stop is not None and stop(done[0])):
                await asyncio.sleep(0.05)
            wall, cpu = time.perf_counter() - t0, client_cpu_s() - c0
            sampler.samples.append((time.perf_counter(), read()))
            for task in (running, sampling):
                task.cancel()
            ran, _ = await asyncio.gather(running, sampling, return_exceptions=True)
    if isinstance(ran, BaseException) and not isinstance(ran, asyncio.CancelledError):
        raise ran
    return RunResult(
        wall_s=wall,
        cpu_s=cpu,
        episodes=done[0],
        turns=done[1],
        requests=count[0],
        prompt_tokens=0,
        completion_tokens=0,
        infrastructure=done[2],
        peak_in_flight=cap,  # the semaphore's: the bare loop counts no peak
        samples=sampler.samples,
        started=t0,
    )
