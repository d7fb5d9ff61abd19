"""The service's clock starts at the request's arrival (#50, seventh round): the endpoint's
own work on a request (parsing, the scripted answer) is inside its service time, requests
read in one pass of the loop are stamped before any is answered, and a whole reply is built
before the wait. Real loopback server; the order of events is asserted, never a duration."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import orjson
import pytest

from serve import LatencyConfig, ServerConfig
from serve.agents import answer
from serve.endpoint import chat
from serve.endpoint.app import start_server, stop_server
from serve.endpoint.bodies import completion_body
from serve.endpoint.server import SERVER
from serve.faults.latency import LatencyModel

BODY = orjson.dumps(
    {"model": "scripted/perfect", "messages": [{"role": "user", "content": "Got it, thanks."}]}
)


async def test_the_service_counts_from_the_arrival() -> None:
    model = LatencyModel(LatencyConfig(mode="fixed", seconds=0.3), concurrency=2)
    left: list[float] = []

    async def record(seconds: float) -> None:
        left.append(seconds)

    model._compute = record  # type: ignore[method-assign]
    now = asyncio.get_running_loop().time()
    await model.serve(0.3, now - 0.2)  # arrived 0.2 s ago: about 0.1 s of service left
    await model.serve(0.3)  # no arrival given: now, the whole 0.3 s
    assert left[0] <= 0.1 + 1e-9
    assert 0.2 < left[1] <= 0.3  # the whole service but for the instants between two clock reads
    uncapped = LatencyModel(LatencyConfig(mode="fixed", seconds=0.3), concurrency=0)
    uncapped._compute = record  # type: ignore[method-assign]
    await uncapped.serve(0.3, asyncio.get_running_loop().time() - 0.25)
    assert left[2] <= 0.05 + 1e-9


def _events(monkeypatch: pytest.MonkeyPatch, server: Any) -> list[tuple[str, float | None]]:
    """Patch the endpoint to log, in order: each handler's arrival, each answer computed,
    each whole reply built, each service wait (with the arrival time it was given)."""
    log: list[tuple[str, float | None]] = []
    arrival, serve = server.arrival, server.latency.serve

    def logged_arrival() -> int:
        log.append(("arrival", None))
        return int(arrival())

    async def logged_serve(seconds: float, arrived: float | None = None) -> None:
        log.append(("serve", arrived))
        await serve(seconds, arrived)

    def wrap(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        def logged(*a: Any, **k: Any) -> Any:
            log.append((name, asyncio.get_running_loop().time()))
            return f(*a, **k)

        return logged

    server.arrival = logged_arrival
    server.latency.serve = logged_serve
    monkeypatch.setattr(chat, "answer", wrap("answer", answer))
    monkeypatch.setattr(chat, "completion_body", wrap("body", completion_body))
    return log


async def _post_all(url: str, n: int, between: Callable[[], Awaitable[None]] | None = None) -> None:
    """``n`` requests at once over ``n`` connections opened beforehand (one request each,
    then ``between``), so the burst's requests reach the server together."""
    async with aiohttp.ClientSession(
        headers={"Content-Type": "application/json"},
        connector=aiohttp.TCPConnector(limit=n),
    ) as session:

        async def one() -> None:
            async with session.post(f"{url}/chat/completions", data=BODY) as resp:
                assert resp.status == 200
                await resp.read()

        await asyncio.gather(*(one() for _ in range(n)))  # the connections, kept alive
        if between is not None:
            await between()
        await asyncio.gather(*(one() for _ in range(n)))


async def test_the_arrival_is_taken_before_the_answer_and_the_reply_built_before_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = ServerConfig(concurrency=4, latency=LatencyConfig(mode="fixed", seconds=0.05))
    runner, url = await start_server(config)
    try:
        log = _events(monkeypatch, runner.app[SERVER])
        await _post_all(url, 1)
    finally:
        await stop_server(runner)
    names = [name for name, _ in log]
    assert names == ["arrival", "answer", "body", "serve"] * 2
    for k in (0, 4):
        answered, given = log[k + 1][1], log[k + 3][1]
        assert given is not None and answered is not None
        assert given <= answered  # the service's clock was running while it answered


async def test_requests_read_together_are_all_stamped_before_any_is_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = ServerConfig(concurrency=8, latency=LatencyConfig(mode="fixed", seconds=0.05))
    runner, url = await start_server(config)
    log: list[tuple[str, float | None]] = []
    try:
        log = _events(monkeypatch, runner.app[SERVER])

        async def forget() -> None:
            log.clear()

        await _post_all(url, 6, forget)
    finally:
        await stop_server(runner)
    names = [name for name, _ in log]
    assert names.count("arrival") == 6 and names.count("answer") == 6
    # Without the handler's one loop trip each request is answered as soon as it arrives
    # (arrival, answer, arrival, answer, ...); with it, the requests the server read in one
    # pass (a same-loop client writes its burst before the server reads) are stamped first.
    first_answer = names.index("answer")
    assert first_answer >= 2, names
