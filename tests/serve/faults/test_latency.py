"""The latency model: service times and the concurrency cap's ideal throughput."""

from __future__ import annotations

import asyncio
import math
import statistics
import time

import aiohttp
import orjson

from serve import LatencyConfig, ServerConfig
from serve.endpoint.app import start_server, stop_server
from serve.faults.latency import LatencyModel

BODY = orjson.dumps(
    {"model": "scripted/perfect", "messages": [{"role": "user", "content": "Got it, thanks."}]}
)


async def test_ideal_throughput_within_ten_percent() -> None:
    cap, seconds, k = 8, 0.1, 4
    config = ServerConfig(concurrency=cap, latency=LatencyConfig(mode="fixed", seconds=seconds))
    runner, url = await start_server(config)
    total = 15 * cap  # 15 full waves: 1.5 s at the ideal 80 requests per second
    sent = 0
    finished: list[float] = []
    try:
        async with aiohttp.ClientSession(
            headers={"Content-Type": "application/json"},
            connector=aiohttp.TCPConnector(limit=cap * k),
        ) as session:

            async def worker() -> None:
                nonlocal sent
                while sent < total:
                    sent += 1
                    async with session.post(f"{url}/chat/completions", data=BODY) as resp:
                        assert resp.status == 200
                        await resp.read()
                    finished.append(time.perf_counter())

            await asyncio.gather(*(worker() for _ in range(cap * k)))
            async with session.get(url.removesuffix("/v1") + "/stats") as resp:
                stats = orjson.loads(await resp.read())
    finally:
        await stop_server(runner)
    ideal = cap / seconds
    # Steady state: from the end of the first wave to the last completion (connection
    # set-up and the first queue fill are not the model's throughput).
    measured = (total - cap) / (finished[-1] - finished[cap - 1])
    assert abs(measured - ideal) / ideal < 0.10, (measured, ideal)
    assert stats["max_in_flight"] == cap


def test_service_times() -> None:
    fixed = LatencyModel(LatencyConfig(mode="fixed", seconds=0.2), concurrency=4)
    assert fixed.service_time(0, 100, 10) == 0.2
    assert fixed.ideal_throughput(0.2) == 20.0
    tokens = LatencyModel(
        LatencyConfig(
            mode="tokens", seconds=0.01, prefill_s_per_token=1e-4, decode_s_per_token=0.02
        ),
        concurrency=1,
    )
    assert math.isclose(tokens.service_time(0, 1000, 50), 0.01 + 0.1 + 1.0)
    logn = LatencyModel(LatencyConfig(mode="lognormal", seconds=0.5, sigma=0.4), 1, seed=9)
    draws = [logn.service_time(n, 0, 0) for n in range(2001)]
    assert draws == [logn.service_time(n, 0, 0) for n in range(2001)]
    assert abs(statistics.median(draws) - 0.5) < 0.05
    assert LatencyModel(LatencyConfig(), 0).service_time(0, 10, 10) == 0.0
