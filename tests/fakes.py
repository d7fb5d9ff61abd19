"""A tiny scripted HTTP endpoint for client tests: a real aiohttp server on loopback whose
answers come from a script of callables; it raises when the script runs out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web

Handler = Callable[[dict[str, Any]], web.StreamResponse | Any]


def ok(content: str = "ok", reasoning: str | None = None, pt: int = 3, ct: int = 1) -> Handler:
    def answer(body: dict[str, Any]) -> web.Response:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        return web.json_response(
            {
                "id": "x",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
                "seen_max_tokens": body.get("max_tokens"),
            }
        )

    return answer


def vectors(n: int = 2, dim: int = 3, pt: int = 5) -> Handler:
    """An embeddings answer: ``n`` vectors of ``dim`` (listed in reverse index order)."""

    def answer(body: dict[str, Any]) -> web.Response:
        rows = [{"index": i, "embedding": [float(i)] * dim} for i in reversed(range(n))]
        return web.json_response({"data": rows, "usage": {"prompt_tokens": pt}})

    return answer


def status(code: int, text: str = "", headers: dict[str, str] | None = None) -> Handler:
    def answer(body: dict[str, Any]) -> web.Response:
        return web.Response(status=code, text=text or f"{code}", headers=headers)

    return answer


class Script:
    def __init__(self, *handlers: Handler) -> None:
        self.handlers = list(handlers)
        self.bodies: list[dict[str, Any]] = []

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.bodies.append(body)
        if not self.handlers:
            raise AssertionError("the fake endpoint's script ran out")
        result = self.handlers.pop(0)(body)
        if asyncio.iscoroutine(result):
            result = await result
        return result


@asynccontextmanager
async def fake_endpoint(script: Script) -> AsyncIterator[str]:
    app = web.Application()

    async def handle(request: web.Request) -> web.StreamResponse:
        return await script(request)

    app.router.add_post("/v1/chat/completions", handle)
    app.router.add_post("/v1/embeddings", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()
