"""``stream: true``: the completion as server-sent events, as vLLM streams it.

Chunks (``object: chat.completion.chunk``): the role first, then the reasoning (under
``reasoning_content`` and ``reasoning``) and the content a few words at a time, then the
finish reason; with ``stream_options.include_usage`` a last chunk with empty choices and the
usage; then ``data: [DONE]``. The text is the one a non-streamed request gets.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson
from aiohttp import web

__all__ = ["pieces", "stream_completion"]

_WORDS = re.compile(r"\S+\s*|\s+")


def pieces(text: str, words: int = 8) -> Iterator[str]:
    """``text`` in pieces of a few words; joined they give ``text`` back exactly."""
    parts = _WORDS.findall(text)
    for i in range(0, len(parts), words):
        yield "".join(parts[i : i + words])


def _chunk(head: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return b"data: " + orjson.dumps({**head, "choices": [choice]}) + b"\n\n"


async def stream_completion(
    request: web.Request,
    *,
    head: dict[str, Any],
    content: str,
    reasoning: str | None,
    finish_reason: str,
    usage: dict[str, int] | None,
    malformed: bool = False,
) -> web.StreamResponse:
    """Write the whole event stream; ``malformed`` cuts it after a torn event."""
    resp = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await resp.prepare(request)
    head = {**head, "object": "chat.completion.chunk"}
    await resp.write(_chunk(head, {"role": "assistant", "content": ""}))
    if malformed:
        await resp.write(_chunk(head, {"content": content})[:20])
        await resp.write_eof()
        return resp
    for piece in pieces(reasoning or ""):
        await resp.write(_chunk(head, {"reasoning_content": piece, "reasoning": piece}))
    for piece in pieces(content):
        await resp.write(_chunk(head, {"content": piece}))
    await resp.write(_chunk(head, {}, finish_reason))
    if usage is not None:
        await resp.write(
            b"data: " + orjson.dumps({**head, "choices": [], "usage": usage}) + b"\n\n"
        )
    await resp.write(b"data: [DONE]\n\n")
    await resp.write_eof()
    return resp
