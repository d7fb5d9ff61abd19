"""The endpoint client: retries, budgets, reasoning kept apart, limits."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from runner.client.endpoint import CallFailed, Endpoint
from runner.client.limiter import Limiter
from tests.fakes import Script, fake_endpoint, ok, status

MSG = [{"role": "user", "content": "hi"}]


def _endpoint(url: str, **kw: object) -> Endpoint:
    return Endpoint([url], backoff_s=0.001, timeout_s=2, **kw)  # type: ignore[arg-type]


async def test_retries_then_succeeds_and_records_attempts() -> None:
    script = Script(status(500), status(503), status(429, headers={"Retry-After": "0"}), ok("done"))
    async with fake_endpoint(script) as url, _endpoint(url) as ep:
        reply = await ep.chat("m", MSG, max_tokens=400)
    assert reply.content == "done" and reply.call.attempts == 4
    assert reply.call.prompt_tokens == 3 and reply.call.completion_tokens == 1
    assert all(b["temperature"] == 0.0 and b["max_tokens"] == 400 for b in script.bodies)


async def test_six_attempts_then_an_infrastructure_failure() -> None:
    script = Script(*[status(500)] * 6)
    async with fake_endpoint(script) as url, _endpoint(url) as ep:
        with pytest.raises(CallFailed) as info:
            await ep.chat("m", MSG, max_tokens=400)
    assert info.value.termination == "endpoint_error" and info.value.attempts == 6
    assert len(script.bodies) == 6


async def test_other_4xx_fail_at_once() -> None:
    body = '{"error": {"message": "The model `nope` does not exist.", "code": 404}}'
    script = Script(status(404, body))
    async with fake_endpoint(script) as url, _endpoint(url) as ep:
        with pytest.raises(CallFailed, match="does not exist") as info:
            await ep.chat("nope", MSG, max_tokens=400)
    assert info.value.termination == "client_error" and len(script.bodies) == 1


async def test_context_overflow_halves_the_budget_down_to_the_floor() -> None:
    overflow = status(400, "This model's maximum context length is 4096 tokens")
    script = Script(overflow, overflow, ok())
    async with fake_endpoint(script) as url, _endpoint(url) as ep:
        reply = await ep.chat("m", MSG, max_tokens=2500)
    assert [b["max_tokens"] for b in script.bodies] == [2500, 1250, 625]
    assert reply.call.max_tokens == 625
    script = Script(overflow, overflow)
    async with fake_endpoint(script) as url, _endpoint(url) as ep:
        with pytest.raises(CallFailed) as info:
            await ep.chat("m", MSG, max_tokens=700)
    assert info.value.termination == "context_overflow"
    assert [b["max_tokens"] for b in script.bodies] == [700, 512]


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 4096 tokens. However, you requested 5000",
        "Requested tokens (9000) exceed context window of 8192",
        "The input (5000 tokens) is longer than the model's context length (4096 tokens).",
    ],
)
async def test_context_errors_of_every_server_halve_the_budget(message: str) -> None:
    script = Script(status(400, message), ok())
    async with fake_endpoint(script) as url, _endpoint(url) as ep:
        await ep.chat("m", MSG, max_tokens=2000)
    assert [b["max_tokens"] for b in script.bodies] == [2000, 1000]


async def test_empty_thinking_reply_doubles_the_budget_up_to_12000() -> None:
    script = Script(ok("", reasoning="hmm"), ok("", reasoning="hmm"), ok("answer", reasoning="r"))
    async with fake_endpoint(script) as url, _endpoint(url) as ep:
        reply = await ep.chat(
            "m",
            MSG,
            max_tokens=2500,
            thinking=True,
            extra={"chat_template_kwargs": {"enable_thinking": True}},
        )
    assert [b["max_tokens"] for b in script.bodies] == [2500, 5000, 10000]
    assert reply.content == "answer" and reply.reasoning == "r"
    assert script.bodies[0]["chat_template_kwargs"] == {"enable_thinking": True}


async def test_malformed_body_and_dropped_connection_are_retried() -> None:
    async def drop(body: object) -> web.Response:
        raise ConnectionResetError  # aiohttp closes the connection without an answer

    script = Script(lambda b: web.Response(text="{not json"), ok("fine"))
    async with fake_endpoint(script) as url, _endpoint(url) as ep:
        reply = await ep.chat("m", MSG, max_tokens=10)
    assert reply.content == "fine" and reply.call.attempts == 2


async def test_requests_in_flight_never_exceed_the_cap() -> None:
    in_flight = peak = 0

    async def slow(body: object) -> web.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return ok()(body)  # type: ignore[arg-type,return-value]

    script = Script(*[slow] * 60)
    async with fake_endpoint(script) as url, _endpoint(url, max_in_flight=7) as ep:
        await asyncio.gather(*(ep.chat("m", MSG, max_tokens=5) for _ in range(60)))
    assert peak <= 7 and ep.limiter.peak <= 7 and ep.limiter.in_flight == 0


async def test_adaptive_limit_backs_off_and_recovers() -> None:
    lim = Limiter(8, max_limit=16, adaptive=True)
    lim.throttled()
    assert lim.limit == 4
    lim.throttled()
    assert lim.limit == 2
    waiters = []
    for _ in range(2):
        await lim.acquire()
    for _ in range(3):
        waiters.append(asyncio.ensure_future(lim.acquire()))
    await asyncio.sleep(0)
    for _ in range(10):
        lim.success()
    assert lim.limit > 2
    for w in waiters:
        w.cancel()


async def test_cancelled_waiter_does_not_leak_a_slot() -> None:
    lim = Limiter(1)
    await lim.acquire()
    waiter = asyncio.ensure_future(lim.acquire())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    lim.release()
    assert lim.in_flight == 0
    await asyncio.wait_for(lim.acquire(), 1)


async def test_a_call_cancelled_in_flight_returns_its_slot() -> None:
    async def slow(body: object) -> web.Response:
        await asyncio.sleep(1)
        return ok()(body)  # type: ignore[arg-type,return-value]

    script = Script(slow, ok("after"))
    async with fake_endpoint(script) as url, _endpoint(url, max_in_flight=1) as ep:
        call = asyncio.ensure_future(ep.chat("m", MSG, max_tokens=5))
        while not script.bodies:
            await asyncio.sleep(0.01)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert ep.limiter.in_flight == 0 and ep._in_flight == [0]
        reply = await asyncio.wait_for(ep.chat("m", MSG, max_tokens=5), 2)
    assert reply.content == "after"


async def test_embeddings_take_the_chat_calls_retry_loop_and_feed_the_breaker() -> None:
    """One retry loop for every endpoint call: an embeddings call is retried, counted and
    trips the breaker as a chat call does (it used to do neither)."""
    from runner.client.call_stats import BreakerTripped
    from tests.fakes import vectors

    script = Script(status(500), vectors(n=2))
    async with fake_endpoint(script) as url, _endpoint(url) as ep:
        got, record = await ep.embed("e", ["a", "b"])
    assert got == [[0.0] * 3, [1.0] * 3] and record.attempts == 2 and record.prompt_tokens == 5
    assert ep.stats.retries == 1 and ep.stats.failed_attempts == 1 and ep.stats.consecutive == 0
    script = Script(status(500), status(500), status(500))
    async with fake_endpoint(script) as url, _endpoint(url) as ep:
        ep.stats.breaker_after = 2
        with pytest.raises(BreakerTripped, match="2 calls in a row failed"):
            await ep.embed("e", ["a"])
