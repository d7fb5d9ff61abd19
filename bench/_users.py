"""What users would write instead of the runner, driving the same episodes.

Both shapes reuse the runner's own episode loop (``runner.execution.episode_loop.run_episode``: the same
scripted user, arm and receipts), so only the scheduling shape and the HTTP client differ:

* :func:`launcher_job`: the paper's launcher shape, one sequential job per cell, episodes
  one after another, one request in flight;
* :func:`gather_all`: ``asyncio.gather`` over every episode, each agent call under an
  ``asyncio.Semaphore``, through a given agent factory (the plain ``openai.AsyncOpenAI``
  client, its aiohttp transport, or the runner's raw-aiohttp client); one JSON line per
  finished episode appended to a file, as a user's script would.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec

from bench._common import client_cpu_s
from protocol.episode.generate import generate
from protocol.records import CallRecord
from runner.arms import EpisodeContext
from runner.client.endpoint import Endpoint, Reply
from runner.execution.episode_loop import run_episode
from runner.grid.expand import Grid, expand

__all__ = [
    "Agent",
    "UserRun",
    "aiohttp_agent",
    "bare_aiohttp_agent",
    "gather_all",
    "launcher_job",
    "openai_agent",
]

Agent = Callable[[list[dict[str, str]]], Awaitable[Reply]]


class UserRun(msgspec.Struct, kw_only=True):
    wall_s: float
    cpu_s: float
    episodes: int
    requests: int
    infrastructure: int

    @classmethod
    def of(cls, wall_s: float, cpu_s: float, ends: list[str], requests: int) -> UserRun:
        """A run from its timings and each episode's termination reason."""
        return cls(
            wall_s=wall_s,
            cpu_s=cpu_s,
            episodes=len(ends),
            requests=requests,
            infrastructure=sum(e != "completed" for e in ends),
        )


@asynccontextmanager
async def openai_agent(
    url: str, model: str, max_tokens: int, sem: asyncio.Semaphore, *, aiohttp: bool = False
) -> AsyncIterator[tuple[Agent, list[int]]]:
    """An agent on ``openai.AsyncOpenAI`` (default transport, or ``DefaultAioHttpClient``)."""
    import openai

    http = openai.DefaultAioHttpClient() if aiohttp else None
    client = openai.AsyncOpenAI(base_url=url, api_key="bench", http_client=http)
    count = [0]

    async def call(messages: list[dict[str, str]]) -> Reply:
        async with sem:
            resp = await client.chat.completions.create(
                model=model,
                messages=messages,  # type: ignore[arg-type]
                max_tokens=max_tokens,
                temperature=0.0,
            )
        count[0] += 1
        msg = resp.choices[0].message
        usage = resp.usage
        return Reply(
            content=msg.content or "",
            reasoning=getattr(msg, "reasoning_content", None) or "",
            call=CallRecord(
                role="agent",
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                finish_reason=resp.choices[0].finish_reason,
                max_tokens=max_tokens,
            ),
        )

    try:
        yield call, count
    finally:
        await client.close()


@asynccontextmanager
async def aiohttp_agent(
    url: str, model: str, max_tokens: int, cap: int
) -> AsyncIterator[tuple[Agent, list[int]]]:
    """An agent on the runner's own raw-aiohttp client (its limiter is the semaphore)."""
    async with Endpoint([url], max_in_flight=cap, attempts=2, backoff_s=0.05) as ep:
        count = [0]

        async def call(messages: list[dict[str, str]]) -> Reply:
            reply = await ep.chat(model, messages, max_tokens=max_tokens)
            count[0] += 1
            return reply

        yield call, count


@asynccontextmanager
async def bare_aiohttp_agent(
    url: str, model: str, max_tokens: int, cap: int
) -> AsyncIterator[tuple[Agent, list[int]]]:
    """An agent on a bare ``aiohttp.ClientSession``: ``orjson`` body, one POST under an
    ``asyncio.Semaphore``, ``orjson`` reply; no retries, no timing, no limiter. The floor
    any client stands on, for the runner's client CPU to be measured against."""
    import aiohttp
    import orjson

    sem = asyncio.Semaphore(cap)
    connector = aiohttp.TCPConnector(limit=cap + 8)
    chat_url = url.rstrip("/") + "/chat/completions"
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=connector) as session:
        count = [0]

        async def call(messages: list[dict[str, str]]) -> Reply:
            body = orjson.dumps(
                {"model": model, "messages": messages, "temperature": 0.0, "max_tokens": max_tokens}
            )
            async with sem, session.post(chat_url, data=body, headers=headers) as resp:
                data = orjson.loads(await resp.read())
            count[0] += 1
            choice = data["choices"][0]
            usage = data.get("usage") or {}
            return Reply(
                content=choice["message"].get("content") or "",
                reasoning="",
                call=CallRecord(
                    role="agent",
                    prompt_tokens=int(usage.get("prompt_tokens") or 0),
                    completion_tokens=int(usage.get("completion_tokens") or 0),
                    finish_reason=choice.get("finish_reason"),
                    max_tokens=max_tokens,
                ),
            )

        yield call, count


async def _episode(grid: Grid, task: Any, agent: Agent) -> Any:
    ctx = EpisodeContext(episode=generate(task.spec), cell=task.cell, agent=agent)
    return await run_episode(ctx)


async def gather_all(
    grid: Grid,
    agent: Agent,
    count: list[int],
    out: Path,
    on_episode: Callable[[Any], None] | None = None,
) -> UserRun:
    """Every episode of ``grid`` at once under ``asyncio.gather``; ``on_episode`` sees each
    finished episode's record once it is written (e.g. to count them while the loop runs)."""
    encoder = msgspec.json.Encoder()
    with out.open("ab") as log:

        async def one(task: Any) -> str:
            record = await _episode(grid, task, agent)
            log.write(encoder.encode(record) + b"\n")
            log.flush()
            if on_episode is not None:
                on_episode(record)
            return str(record.termination)

        c0, t0 = client_cpu_s(), time.perf_counter()
        ends = await asyncio.gather(*(one(t) for t in expand(grid)))
        wall, cpu = time.perf_counter() - t0, client_cpu_s() - c0
    return UserRun.of(wall, cpu, ends, count[0])


async def launcher_job(grid: Grid, agent: Agent, count: list[int], episodes: int) -> UserRun:
    """One cell's sequential job (the first cell of ``grid``), its first ``episodes``."""
    first = grid.cells()[0]
    tasks = [t for t in expand(grid) if t.cell == first][:episodes]
    c0, t0 = client_cpu_s(), time.perf_counter()
    ends = [str((await _episode(grid, t, agent)).termination) for t in tasks]
    wall, cpu = time.perf_counter() - t0, client_cpu_s() - c0
    return UserRun.of(wall, cpu, ends, count[0])
