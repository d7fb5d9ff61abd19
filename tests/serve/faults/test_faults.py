"""Fault injection: each fault type, the context-length error, and determinism."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import aiohttp
import openai
import orjson
import pytest
from openai import NOT_GIVEN, NotGiven, Omit, omit

from serve import FaultConfig, ServerConfig
from serve.endpoint.app import start_server, stop_server
from tests.sdk_messages import sdk_messages

MESSAGES = [{"role": "user", "content": "Thanks, that's helpful so far."}]
THINK: dict[str, object] = {"chat_template_kwargs": {"enable_thinking": True}}


@asynccontextmanager
async def server(config: ServerConfig) -> AsyncIterator[openai.AsyncOpenAI]:
    runner, url = await start_server(config)
    try:
        async with openai.AsyncOpenAI(
            base_url=url, api_key="none", max_retries=0, timeout=2.0
        ) as client:
            yield client
    finally:
        await stop_server(runner)


def faulty(**rates: float) -> ServerConfig:
    return ServerConfig(faults=FaultConfig(**rates))


async def ask(
    client: openai.AsyncOpenAI,
    *,
    timeout: float | NotGiven = NOT_GIVEN,
    max_tokens: int | Omit = omit,
    extra_body: dict[str, object] | None = None,
) -> openai.types.chat.ChatCompletion:
    """One non-streamed request; each keyword left out is left out of the request."""
    return await client.chat.completions.create(
        model="scripted/perfect",
        messages=sdk_messages(MESSAGES),
        timeout=timeout,
        max_tokens=max_tokens,
        extra_body=extra_body,
    )


@pytest.mark.parametrize(
    ("rates", "error", "status"),
    [
        ({"rate_429": 1.0}, openai.RateLimitError, 429),
        ({"rate_500": 1.0}, openai.InternalServerError, 500),
        ({"rate_503": 1.0}, openai.InternalServerError, 503),
    ],
)
async def test_status_faults(rates: dict[str, float], error: type[Exception], status: int) -> None:
    async with server(faulty(**rates, retry_after_s=2.0)) as client:
        with pytest.raises(error) as info:
            await ask(client)
    e = info.value
    assert isinstance(e, openai.APIStatusError) and e.status_code == status
    assert isinstance(e.body, dict) and e.body["code"] == status
    if status == 429:
        assert e.response.headers["Retry-After"] == "2"


async def test_dropped_connection() -> None:
    async with server(faulty(rate_drop=1.0)) as client:
        with pytest.raises(openai.APIConnectionError):
            await ask(client)


async def test_hang_outlasts_the_client_timeout() -> None:
    async with server(faulty(rate_hang=1.0, hang_s=30.0)) as client:
        with pytest.raises(openai.APITimeoutError):
            await ask(client, timeout=0.3)


async def test_malformed_body_is_a_200_that_does_not_parse() -> None:
    runner, url = await start_server(faulty(rate_malformed=1.0))
    try:
        async with aiohttp.ClientSession() as s:
            body = {"model": "scripted/perfect", "messages": MESSAGES}
            async with s.post(f"{url}/chat/completions", json=body) as resp:
                assert resp.status == 200
                raw = await resp.read()
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(raw)
    finally:
        await stop_server(runner)


async def test_empty_content_on_a_thinking_reply_only() -> None:
    async with server(faulty(rate_empty_thinking=1.0)) as client:
        r = await ask(client, extra_body=THINK)
        assert r.choices[0].message.content == ""
        assert (r.choices[0].message.model_extra or {})["reasoning_content"]
        assert r.choices[0].finish_reason == "length"
        plain = await ask(client)
        assert plain.choices[0].message.content


async def test_context_length_error_counts_the_completion_budget() -> None:
    async with server(ServerConfig(max_model_len=40)) as client:
        ok = await ask(client, max_tokens=5)  # about 20 prompt tokens + 5 fit in 40
        assert ok.usage is not None and ok.usage.prompt_tokens + 5 <= 40
        with pytest.raises(openai.BadRequestError) as info:
            await ask(client, max_tokens=400)
    body = info.value.body
    assert isinstance(body, dict)
    assert body["message"].startswith("This model's maximum context length is 40 tokens.")
    assert "in the messages, 400 in the completion" in body["message"]


async def _statuses(config: ServerConfig, n: int) -> list[int]:
    out: list[int] = []
    async with server(config) as client:
        for _ in range(n):
            try:
                await ask(client)
                out.append(200)
            except openai.APIStatusError as e:
                out.append(e.status_code)
    return out


async def test_fault_choice_is_deterministic_per_arrival() -> None:
    config: Callable[[int], ServerConfig] = lambda seed: ServerConfig(  # noqa: E731
        seed=seed, faults=FaultConfig(rate_429=0.3, rate_500=0.2, rate_503=0.1)
    )
    first = await _statuses(config(3), 30)
    assert first == await _statuses(config(3), 30)
    assert first != await _statuses(config(4), 30)
    assert {200, 429, 500, 503} <= set(first)


def test_fault_rates_must_sum_to_at_most_one() -> None:
    with pytest.raises(ValueError, match="sum to at most 1"):
        faulty(rate_429=0.7, rate_500=0.7)
