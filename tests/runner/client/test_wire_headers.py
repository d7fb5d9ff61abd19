"""What a chat request carries on the wire (#50): the runner's own headers and the ones the
transport needs (``Accept-Encoding`` it can cap), and no ``User-Agent``, now that the header
is dropped without aiohttp's per-request ``skip_auto_headers`` path."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from runner.client.endpoint import Endpoint
from tests.fakes import Script, fake_endpoint, ok

MSG = [{"role": "user", "content": "hi"}]


class _Seen(Script):
    """A script that keeps each request's headers too."""

    def __init__(self, *handlers: Any) -> None:
        super().__init__(*handlers)
        self.headers: list[dict[str, str]] = []

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        self.headers.append({k.lower(): v for k, v in request.headers.items()})
        return await super().__call__(request)


async def test_a_chat_request_sends_its_headers_and_no_user_agent() -> None:
    script = _Seen(ok("one"), ok("two"))
    async with fake_endpoint(script) as url, Endpoint([url], api_key="k-123", attempts=1) as ep:
        await ep.chat("m", MSG, max_tokens=8, headers={"X-State-Ladder-Draw": "seed=1"})
        await ep.chat("m", MSG, max_tokens=8)
    first, second = script.headers
    assert "user-agent" not in first and "user-agent" not in second
    for seen in (first, second):
        assert seen["accept-encoding"] == "gzip, deflate"
        assert seen["content-type"] == "application/json"
        assert seen["authorization"] == "Bearer k-123"
    assert first["x-state-ladder-draw"] == "seed=1"
    assert "x-state-ladder-draw" not in second  # a call's own headers stay with that call


async def test_a_get_sends_the_key_alone() -> None:
    seen: list[dict[str, str]] = []

    async def models(request: web.Request) -> web.Response:
        seen.append({k.lower(): v for k, v in request.headers.items()})
        return web.json_response({"data": []})

    app = web.Application()
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with Endpoint([f"http://127.0.0.1:{port}/v1"], api_key="k-9") as ep:
            status, body = await ep.get("/models")
    finally:
        await runner.cleanup()
    assert status == 200 and body == b'{"data": []}'
    (headers,) = seen
    assert headers["authorization"] == "Bearer k-9"
    assert "user-agent" not in headers and "content-type" not in headers
