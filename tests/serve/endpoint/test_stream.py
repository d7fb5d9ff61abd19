"""The scripted endpoint streams as vLLM does: the real openai SDK reads its server-sent
events (content, reasoning, finish reason, usage) and gets the non-streamed text back."""

from __future__ import annotations

from collections.abc import AsyncIterator

import openai
import pytest

from serve import ServerConfig
from serve.config import FaultConfig
from serve.endpoint.app import start_server, stop_server
from serve.endpoint.stream import pieces
from tests.sdk_messages import sdk_messages

MESSAGES = [
    {"role": "system", "content": "You are my project agent."},
    {"role": "user", "content": "Good morning! Please place the main equipment order (WO-1)."},
]


@pytest.fixture
async def client() -> AsyncIterator[openai.AsyncOpenAI]:
    runner, url = await start_server(ServerConfig())
    async with openai.AsyncOpenAI(base_url=url, api_key="none", max_retries=0) as c:
        yield c
    await stop_server(runner)


async def test_the_openai_sdk_streams_the_same_text(client: openai.AsyncOpenAI) -> None:
    plain = await client.chat.completions.create(
        model="scripted/perfect", messages=sdk_messages(MESSAGES)
    )
    stream = await client.chat.completions.create(
        model="scripted/perfect",
        messages=sdk_messages(MESSAGES),
        stream=True,
        stream_options={"include_usage": True},
    )
    parts: list[str] = []
    finish = None
    usage = None
    chunks = 0
    async for chunk in stream:
        chunks += 1
        assert chunk.object == "chat.completion.chunk" and chunk.id.startswith("chatcmpl-")
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            parts.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    assert "".join(parts) == plain.choices[0].message.content
    assert finish == plain.choices[0].finish_reason == "stop"
    assert usage is not None and plain.usage is not None
    assert usage.completion_tokens == plain.usage.completion_tokens
    assert chunks >= 3


async def test_thinking_streams_reasoning_under_both_field_names(
    client: openai.AsyncOpenAI,
) -> None:
    think: dict[str, object] = {"chat_template_kwargs": {"enable_thinking": True}}
    plain = await client.chat.completions.create(
        model="scripted/perfect", messages=sdk_messages(MESSAGES), extra_body=think
    )
    message = plain.choices[0].message.model_dump()
    assert message["reasoning_content"] and message["reasoning"] == message["reasoning_content"]
    stream = await client.chat.completions.create(
        model="scripted/perfect", messages=sdk_messages(MESSAGES), stream=True, extra_body=think
    )
    reasoning: list[str] = []
    also: list[str] = []
    async for chunk in stream:
        for choice in chunk.choices:
            delta = choice.delta.model_dump()
            reasoning.append(delta.get("reasoning_content") or "")
            also.append(delta.get("reasoning") or "")
    assert "".join(reasoning) == "".join(also) == message["reasoning_content"]


async def test_n_above_one_is_refused_saying_so(client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="n=3 is not supported"):
        await client.chat.completions.create(
            model="scripted/perfect", messages=sdk_messages(MESSAGES), n=3
        )


async def test_a_malformed_stream_is_cut_before_its_finish() -> None:
    """The malformed fault tears the stream: one torn event, no finish reason, no [DONE]."""
    runner, url = await start_server(ServerConfig(faults=FaultConfig(rate_malformed=1.0)))
    try:
        async with openai.AsyncOpenAI(base_url=url, api_key="none", max_retries=0) as c:
            stream = await c.chat.completions.create(
                model="scripted/perfect", messages=sdk_messages(MESSAGES), stream=True
            )
            finishes = [ch.finish_reason async for chunk in stream for ch in chunk.choices]
    finally:
        await stop_server(runner)
    assert finishes == [None], "only the role chunk arrived whole"


def test_pieces_join_back() -> None:
    text = "Booked  WO-1:\nref 7  done.  "
    assert "".join(pieces(text, 2)) == text
    assert list(pieces("")) == []
