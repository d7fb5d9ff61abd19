"""The benchmarks' virtual clock: timers jump, loopback HTTP still flows."""

from __future__ import annotations

import asyncio

import aiohttp

from bench._virtual import run_virtual
from serve.config import LatencyConfig, ServerConfig
from serve.endpoint.app import start_server, stop_server


def test_timers_advance_the_virtual_clock() -> None:
    async def main() -> float:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await asyncio.gather(asyncio.sleep(3600), asyncio.sleep(10))
        return loop.time() - t0

    assert abs(run_virtual(main()) - 3600) < 1e-6


def test_a_served_request_takes_its_service_time_on_the_virtual_clock() -> None:
    async def main() -> tuple[float, int]:
        loop = asyncio.get_running_loop()
        cfg = ServerConfig(concurrency=1, latency=LatencyConfig(mode="fixed", seconds=30.0))
        runner, url = await start_server(cfg)
        try:
            async with aiohttp.ClientSession() as s:
                body = {
                    "model": "scripted/perfect",
                    "messages": [{"role": "user", "content": "hi"}],
                }
                t0 = loop.time()
                statuses = []
                for _ in range(2):  # one slot: the two requests are served one after another
                    async with s.post(url + "/chat/completions", json=body) as r:
                        statuses.append(r.status)
                return loop.time() - t0, sum(statuses)
        finally:
            await stop_server(runner)

    elapsed, statuses = run_virtual(main())
    assert statuses == 400
    assert 60.0 <= elapsed < 60.5
