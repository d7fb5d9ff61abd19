"""A hostile OpenAI-compatible endpoint on loopback, for the untrusted-wire tests (#36).

A raw asyncio TCP server (not aiohttp's: it must be able to send what no HTTP library would),
one mode per case of docs/security.md, chosen by the first path segment:
``http://127.0.0.1:PORT/<mode>/v1``. Every mode answers every request the same way, so a
client's retries meet the same hostility. :data:`MODES` names them; :data:`REPLY_MODES` are
the well-formed HTTP replies whose JSON is hostile, :data:`HTTP_MODES` break HTTP itself.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

__all__ = ["HTTP_MODES", "MODES", "REPLY_MODES", "hostile_endpoint"]


def _choice(message: Any, finish: Any = "stop", **extra: Any) -> dict[str, Any]:
    return {"index": 0, "message": message, "finish_reason": finish, **extra}


def _body(choice: dict[str, Any], usage: Any = None) -> bytes:
    usage = {"prompt_tokens": 4000, "completion_tokens": 1} if usage is None else usage
    return json.dumps({"id": "x", "choices": [choice], "usage": usage}).encode()


def _msg(content: Any, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": content, **extra}


OK = "I will look into it."

# mode -> the JSON body of a 200 reply
REPLY_MODES: dict[str, bytes] = {
    "content_parts": _body(_choice(_msg([{"type": "text", "text": "I will "}, "look into it."]))),
    "content_number": _body(_choice(_msg(42))),
    "content_object": _body(_choice(_msg({"text": OK}))),
    "message_string": _body(_choice(OK)),
    "text_choice": _body({"index": 0, "text": OK, "finish_reason": "stop"}),
    "usage_list": _body(_choice(_msg(OK)), usage=[1, 2]),
    "usage_strings": _body(_choice(_msg(OK)), usage={"prompt_tokens": "3"}),
    "usage_negative": _body(_choice(_msg(OK)), usage={"prompt_tokens": -5}),
    "usage_absurd": _body(_choice(_msg(OK)), usage={"completion_tokens": 10**30}),
    "finish_object": _body(_choice(_msg(OK), finish={"type": "stop"})),
    "reasoning_number": _body(_choice(_msg(OK, reasoning_content=7))),
    "content_null": _body(_choice(_msg(None))),
    "content_empty": _body(_choice(_msg("   "))),
    "content_filter": _body(_choice(_msg(""), finish="content_filter")),
    "escapes": _body(_choice(_msg("\x1b]0;pwned\x07\x1b[2J\x1b[31mRED\x1b[0m " + OK))),
    "deep_json": _body(_choice(_msg('{"steps": ' + "[" * 20_000))),
    "action_flood": _body(_choice(_msg('ACTION {"tool": ' * 10_000))),
}


def _http(status: str, body: bytes, headers: list[tuple[str, str]] | None = None) -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in headers or [("Content-Type", "application/json")]]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


_GOOD = REPLY_MODES["content_parts"]

# mode -> the raw bytes sent back (None: streamed by a writer below)
HTTP_MODES: dict[str, bytes | None] = {
    "long_header": _http("200 OK", _GOOD, [("X-Long", "a" * 9000)]),
    "many_headers": _http("200 OK", _GOOD, [(f"X-H{i}", "v") for i in range(40_000)]),
    "bad_status_line": b"HTTP/1.1 two hundred OK\r\n\r\n" + _GOOD,
    "bad_content_length": (
        b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\nConnection: close\r\n\r\n" + _GOOD
    ),
    "bad_chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    "redirect_file": _http("302 Found", b"", [("Location", "file:///etc/passwd")]),
    "redirect_loop": _http("301 Moved", b"", [("Location", "/redirect_loop/v1/chat/completions")]),
    "retry_after_huge": _http("429 Too Many", b"{}", [("Retry-After", "999999")]),
    "retry_after_nines": _http("429 Too Many", b"{}", [("Retry-After", "9" * 400)]),
    "error_escapes": _http(
        "400 Bad Request",
        json.dumps({"error": {"message": "\x1b]0;pwned\x07\x1b[2Jbad model"}}).encode(),
    ),
    "error_string": _http("400 Bad Request", b'{"error": "no such model"}'),
    "error_list": _http("404 Not Found", b'{"error": ["x"]}'),
    "gzip_bomb": None,
    "flood": None,
}

MODES: tuple[str, ...] = (*REPLY_MODES, *HTTP_MODES)
_BOMB = gzip.compress(b"\0" * (64 << 20), compresslevel=9)  # 64 MiB of zeros, ~64 KiB sent


async def _flood(writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
    chunk = b'{"choices": [' + b" " * (1 << 16)
    for _ in range(4096):  # 256 MiB at most, then close: a cap must cut it far sooner
        writer.write(chunk)
        await writer.drain()


async def _bomb(writer: asyncio.StreamWriter) -> None:
    writer.write(
        _http("200 OK", _BOMB, [("Content-Encoding", "gzip"), ("Content-Type", "text/json")])
    )
    await writer.drain()


_WRITERS: dict[str, Callable[[asyncio.StreamWriter], Any]] = {"flood": _flood, "gzip_bomb": _bomb}


async def _read_request(reader: asyncio.StreamReader) -> str:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    if length:
        await reader.readexactly(length)
    return lines[0].split(" ")[1]


def _answer(mode: str, path: str) -> bytes | None:
    if path.endswith("/models"):
        return _http("200 OK", b'{"data": [{"id": "m"}]}')
    if mode in REPLY_MODES:
        return _http("200 OK", REPLY_MODES[mode])
    return HTTP_MODES.get(mode, _http("404 Not Found", b"{}"))


@asynccontextmanager
async def hostile_endpoint() -> AsyncIterator[Callable[[str], str]]:
    """Serve on loopback; yields ``url(mode)``, the base URL of one mode."""
    seen: list[str] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            path = await _read_request(reader)
            seen.append(path)
            mode = path.strip("/").split("/")[0]
            raw = _answer(mode, path)
            if raw is None:
                await _WRITERS[mode](writer)
            else:
                writer.write(raw)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, IndexError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield lambda mode: f"http://127.0.0.1:{port}/{mode}/v1"
    finally:
        server.close()
        await server.wait_closed()
