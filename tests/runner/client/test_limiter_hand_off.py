"""The limiter's hand-off (#50): a release that gives its slot to a waiter says so, and the
chat call that released it yields until the waiter's prepared request is on the wire, so in
a burst of replies the waiters' requests go out before any reply is processed."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from aiohttp import client_reqrep, web

from runner.client.endpoint import Endpoint
from runner.client.limiter import Limiter, yield_to_waiter
from tests.fakes import Script, fake_endpoint, ok

MSG = [{"role": "user", "content": "hi"}]


async def test_a_release_says_whether_it_handed_the_slot_to_a_waiter() -> None:
    limiter = Limiter(1)
    await limiter.acquire()
    assert limiter.release() is False  # nobody waits
    await limiter.acquire()
    waiter = asyncio.ensure_future(limiter.acquire())
    await asyncio.sleep(0)
    assert limiter.waiting == 1
    assert limiter.release() is True  # the waiter holds it now
    await waiter
    assert limiter.in_flight == 1 and limiter.waiting == 0
    assert limiter.release() is False and limiter.in_flight == 0


async def test_the_woken_waiters_request_is_written_before_the_releasing_call_returns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A real loopback server holds the first request until the second waits for the one
    slot; when the first reply comes in, the second request's body is written (aiohttp's
    body writer: a task of its own before Python 3.12) before the first call returns to its
    episode. Without the hand-off's yields the first call returns first."""
    order: list[str] = []
    write_bytes = client_reqrep.ClientRequest.write_bytes

    async def stamped(self: client_reqrep.ClientRequest, *args: Any, **kw: Any) -> Any:
        order.append("wire")
        return await write_bytes(self, *args, **kw)

    monkeypatch.setattr(client_reqrep.ClientRequest, "write_bytes", stamped)
    gate = asyncio.Event()

    async def held(body: dict[str, Any]) -> web.Response:
        await gate.wait()
        return ok("a")(body)  # type: ignore[return-value]

    script = Script(held, ok("b"))
    async with (
        fake_endpoint(script) as url,
        Endpoint([url], backoff_s=0.001, timeout_s=5, max_in_flight=1) as ep,
    ):

        async def call() -> None:
            reply = await ep.chat("m", MSG, max_tokens=5)
            order.append(f"{reply.content} back")

        first = asyncio.ensure_future(call())
        while not script.bodies:
            await asyncio.sleep(0.001)
        second = asyncio.ensure_future(call())
        while not ep.limiter.waiting:
            await asyncio.sleep(0.001)
        gate.set()
        await asyncio.gather(first, second)
    assert order == ["wire", "wire", "a back", "b back"]


async def test_in_a_burst_every_woken_waiters_request_is_written_before_any_reply_is_processed() -> (
    None
):
    """Four replies come in at once (one loop iteration), each release wakes a waiter whose
    request is written by a task of its own (aiohttp's body writer before Python 3.12;
    from 3.12 it starts eagerly, written at the waiter's resume): every write comes before
    any of the four replies' processing."""
    limiter = Limiter(4)
    order: list[str] = []
    replies = [asyncio.get_running_loop().create_future() for _ in range(4)]

    async def held(i: int) -> None:  # a request in flight, then its reply
        assert limiter.try_acquire()
        await replies[i]
        if limiter.release():
            await yield_to_waiter()
        order.append("processed")

    async def write() -> None:
        order.append("wire")

    async def waiter() -> None:
        await limiter.acquire()
        if sys.version_info >= (3, 12):
            order.append("wire")
        else:
            asyncio.ensure_future(write())  # noqa: RUF006 (it runs before the test ends)

    holders = [asyncio.ensure_future(held(i)) for i in range(4)]
    await asyncio.sleep(0)
    waiters = [asyncio.ensure_future(waiter()) for _ in range(4)]
    await asyncio.sleep(0)
    assert limiter.waiting == 4
    for reply in replies:
        reply.set_result(None)
    await asyncio.gather(*holders, *waiters)
    await asyncio.sleep(0)
    assert order == ["wire"] * 4 + ["processed"] * 4
