"""The draw key header (protocol.draws, #46): bounded and checked (the dice it seeds are
paired across cells: tests/runner/execution/test_paired_draws.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest

from protocol.draws import DRAW_HEADER, draw_key
from serve import ServerConfig
from serve.endpoint.app import start_server, stop_server

BODY = {
    "model": "scripted/synthetic?omit=0.5",
    "messages": [
        {"role": "system", "content": "You are my project agent."},
        {"role": "user", "content": "Good morning!"},
    ],
}


@pytest.fixture
async def base_url() -> AsyncIterator[str]:
    runner, url = await start_server(ServerConfig())
    yield url
    await stop_server(runner)


async def _post(url: str, headers: dict[str, str]) -> tuple[int, str]:
    async with (
        aiohttp.ClientSession() as s,
        s.post(f"{url}/chat/completions", json=BODY, headers=headers) as r,
    ):
        return r.status, await r.text()


async def test_a_malformed_key_is_a_400_in_one_line(base_url: str) -> None:
    for bad in ("seed=1", "seed=1;turn=p1;call=0;trial=0;x", "x" * 500):
        status, text = await _post(base_url, {DRAW_HEADER: bad})
        assert status == 400 and DRAW_HEADER in text and "Traceback" not in text


async def test_a_well_formed_key_is_answered(base_url: str) -> None:
    status, _ = await _post(base_url, {DRAW_HEADER: draw_key(100, "p3", 0, 0)})
    assert status == 200
