"""The bench trace stamps a request's service where the endpoint's latency model puts it
(#50, seventh round): on the slot's virtual clock, from the request's arrival, so a service
that began before the sleep (the answer computed inside it) is counted from its start and
exactly ``asked`` long."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from bench._trace import trace_server
from serve import LatencyConfig
from serve.faults.latency import LatencyModel


async def test_the_service_is_stamped_from_the_arrival_on_the_virtual_clock() -> None:
    model = LatencyModel(LatencyConfig(mode="fixed", seconds=0.05), concurrency=2)
    server = SimpleNamespace(arrival=lambda: 0, latency=model)
    log: dict[str, list[float]] = {}
    trace_server(server, log)
    loop = asyncio.get_running_loop()
    await server.latency.serve(0.05, loop.time() - 0.04)  # arrived 40 ms ago
    await server.latency.serve(0.05)  # arrived now
    assert len(log["start"]) == len(log["due"]) == len(log["end"]) == 2
    for start, due in zip(log["start"], log["due"], strict=True):
        assert abs((due - start) - 0.05) < 1e-9  # the whole service, however much was left
    # the first began 40 ms before its sleep: its service is stamped from then, so its due
    # is when its sleep woke (not 40 ms after), and it starts well before the second
    assert log["end"][0] > log["due"][0] - 0.005
    assert log["start"][0] < log["start"][1] - 0.03
