"""The perfect agent's memory of its own earlier sessions (issue #48; docs/semantics.md, "The
oracle remembers"): keyed by the runner's lineage header, it carries what the agent did into a
fresh session; a request without the header, ``memory=0`` and every other policy read only
what they are sent; a malformed header is a 400; the store is bounded like the conversation
memo. End to end over the sessions grids: tests/integration/test_sessions_rule.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from protocol import EpisodeSpec, generate
from protocol.draws import LINEAGE_HEADER
from serve import ServerConfig
from serve.endpoint import lineage
from serve.endpoint.app import start_server, stop_server
from serve.endpoint.conversation import MEMO_DEFAULT, MEMO_MIN, bound_memo

EP = generate(EpisodeSpec(seed=101, steps=10, density=0.3, generator=6))
ASK = next(t for t in EP.turns if t.kind == "ask" and t.step and not EP.step(t.step).deps)
assert ASK.work_order is not None
AGAIN = ASK.text.replace(ASK.work_order, "#W0001")  # the same step under a new work order
CODE = EP.step(ASK.step or "").code
TOKEN = "0123456789abcdef" * 2


@pytest.fixture
async def base_url() -> AsyncIterator[str]:
    lineage.clear()
    runner, url = await start_server(ServerConfig())
    yield url
    await stop_server(runner)
    lineage.clear()


async def _reply(url: str, model: str, messages: list[dict[str, str]], token: str | None) -> str:
    headers = {} if token is None else {LINEAGE_HEADER: token}
    body: dict[str, Any] = {"model": model, "messages": messages}
    async with (
        aiohttp.ClientSession() as s,
        s.post(f"{url}/chat/completions", json=body, headers=headers) as r,
    ):
        assert r.status == 200, await r.text()
        data = await r.json()
    return str(data["choices"][0]["message"]["content"])


def _msgs(*turns: str) -> list[dict[str, str]]:
    roles = ("user", "assistant")
    rest = [{"role": roles[i % 2], "content": t} for i, t in enumerate(turns)]
    return [{"role": "system", "content": EP.brief}, *rest]


async def _two_sessions(url: str, model: str, token: str | None) -> str:
    """Session 1 books the step; session 2 opens fresh and asks for it again: the reply."""
    first = await _reply(url, model, _msgs(ASK.text), token)
    assert f"ref {CODE}/{ASK.work_order}" in first
    await _reply(url, model, _msgs(ASK.text, first, "Thanks!"), token)
    return await _reply(url, model, _msgs(AGAIN), token)


async def test_the_perfect_agent_remembers_its_earlier_session(base_url: str) -> None:
    again = await _two_sessions(base_url, "scripted/perfect", TOKEN)
    assert CODE not in again and "already done" in again  # a redo probe declined


@pytest.mark.parametrize(
    ("model", "token"),
    [
        ("scripted/perfect", None),  # no lineage: the amnesiac perfect agent
        ("scripted/perfect?memory=0", TOKEN),
        ("scripted/prerequisites", TOKEN),  # only the perfect agent remembers
        ("scripted/always-book", TOKEN),
    ],
)
async def test_without_memory_a_fresh_session_knows_nothing(
    base_url: str, model: str, token: str | None
) -> None:
    again = await _two_sessions(base_url, model, token)
    assert f"ref {CODE}/#W0001" in again  # booked again: nothing says it was done


async def test_each_lineage_and_model_remembers_its_own(base_url: str) -> None:
    await _two_sessions(base_url, "scripted/perfect", TOKEN)
    other = "fedcba9876543210" * 2
    assert f"ref {CODE}/#W0001" in await _reply(base_url, "scripted/perfect", _msgs(AGAIN), other)
    named = "scripted/perfect?drop_system=0"
    assert f"ref {CODE}/#W0001" in await _reply(base_url, named, _msgs(AGAIN), TOKEN)


async def test_a_resent_first_request_is_not_a_new_session(base_url: str) -> None:
    """A retry of a session's first request (a fault, a thinking retry) resends its messages:
    the agent answers it as the same request, not from a memory of itself."""
    first = await _reply(base_url, "scripted/perfect", _msgs(ASK.text), TOKEN)
    again = await _reply(base_url, "scripted/perfect", _msgs(ASK.text), TOKEN)
    assert again == first and f"ref {CODE}/{ASK.work_order}" in again


async def test_a_malformed_lineage_is_a_400_in_one_line(base_url: str) -> None:
    body = {"model": "scripted/perfect", "messages": _msgs("Hello")}
    for bad in ("short", "X" * 32, "0" * 65, "g" * 32):
        async with (
            aiohttp.ClientSession() as s,
            s.post(f"{base_url}/chat/completions", json=body, headers={LINEAGE_HEADER: bad}) as r,
        ):
            text = await r.text()
            assert r.status == 400 and LINEAGE_HEADER in text and "Traceback" not in text


def test_the_store_is_bounded_with_the_conversation_memo() -> None:
    messages = (("system", EP.brief), ("user", "Hello"))
    try:
        bound_memo(16)
        assert lineage.size()[1] == MEMO_MIN
        for i in range(MEMO_MIN + 5):
            lineage.recall(f"{i:032x}", "scripted/perfect", messages)
        assert lineage.size() == (MEMO_MIN, MEMO_MIN)  # the least recently used went
    finally:
        bound_memo(None)
        lineage.clear()
    assert lineage.size() == (0, MEMO_DEFAULT)
