"""How an endpoint's requests reach the server: the seam the client tests use.

:class:`AiohttpTransport` is the real one (one shared aiohttp session per endpoint).
:class:`MockTransport` answers in memory from a handler, as httpx's ``MockTransport`` does, so
client tests need no server; the loopback tests that exercise real sockets stay.

A transport returns every HTTP status as a :class:`Response`; it raises
:class:`TransportError` for a connection that failed or dropped, for a reply it could not
parse as HTTP (aiohttp's whole ``ClientError`` family: a bad status line, an oversize header,
a broken chunk, a bad ``Content-Length``) and for a body over the request's byte cap, and
:class:`TimeoutError` for a request that ran past its timeout (both retried by the client).
Redirects are never followed: a 3xx comes back as a :class:`Response` (the client refuses
it, naming the location).

Bounds (docs/security.md): the body is read in chunks and cut off past ``Request.max_bytes``,
both as sent and after decompression: the transport asks for ``gzip``/``deflate`` only and
decompresses itself with an output cap, so a small compressed bomb cannot expand past the
cap.
"""

from __future__ import annotations

import zlib
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import aiohttp
from aiohttp import hdrs, http_exceptions

__all__ = [
    "AiohttpTransport",
    "MockTransport",
    "Request",
    "Response",
    "Transport",
    "TransportError",
    "read_capped",
]

# A body cap for requests that do not name one (GET /models, /health): 4 MiB.
DEFAULT_MAX_BYTES = 4 << 20
_CHUNK = 1 << 16


class TransportError(Exception):
    """The connection failed or dropped before a whole response arrived."""


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    max_bytes: int = DEFAULT_MAX_BYTES  # the reply's cap, as sent and decompressed


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)


class Transport(Protocol):
    async def send(self, request: Request) -> Response: ...

    async def close(self) -> None: ...


class _Request(aiohttp.ClientRequest):
    """aiohttp's request, sending no ``User-Agent`` (the runner names no client to a server).
    aiohttp's own way, ``skip_auto_headers``, takes a slow path on every request (a sorted
    copy of the skipped names, a copy of the headers, about six calls, #50); this removes the
    one header aiohttp adds after its usual fast path instead."""

    def update_auto_headers(self, skip_auto_headers: Iterable[str] | None) -> None:
        super().update_auto_headers(skip_auto_headers)
        self.headers.popall(hdrs.USER_AGENT, None)


# Asked for on every request (the transport decompresses itself, with a cap): a session
# default, so a request's own headers are passed to aiohttp as they are (no merged copy).
_SESSION_HEADERS = {"Accept-Encoding": "gzip, deflate"}


class AiohttpTransport:
    """One aiohttp session (opened on first use), ``limit`` connections at most."""

    def __init__(self, *, limit: int, timeout_s: float) -> None:
        self.limit = limit
        self.timeout_s = timeout_s
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=self.limit, limit_per_host=0, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=self.timeout_s),
                headers=_SESSION_HEADERS,
                request_class=_Request,
            )
        return self._session

    async def send(self, request: Request) -> Response:
        session = self._session or self._open()
        try:
            async with session.request(
                request.method,
                request.url,
                data=request.body or None,
                headers=request.headers,
                allow_redirects=False,
                auto_decompress=False,
            ) as resp:
                encoding = resp.headers.get("Content-Encoding", "identity")
                if encoding == "identity":  # the usual reply: no inflater to set up
                    body = await _read_identity(resp.content, request.max_bytes)
                else:
                    body = await read_capped(resp.content, encoding, request.max_bytes)
                return Response(resp.status, body, resp.headers)  # read-only, no copy
        except (aiohttp.ClientError, http_exceptions.HttpProcessingError, ValueError) as e:
            # ValueError: what aiohttp raises for a URL or a header value it cannot use.
            raise TransportError(f"connection error: {type(e).__name__}") from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


async def read_capped(stream: aiohttp.StreamReader, encoding: str, cap: int) -> bytes:
    """The body of ``stream`` decoded from ``encoding`` (identity, gzip or deflate), at most
    ``cap`` bytes as sent and as decoded; :class:`TransportError` past either, or for an
    encoding it did not ask for or cannot decode."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        inflate = None
    elif encoding in ("gzip", "x-gzip", "deflate"):
        inflate = zlib.decompressobj(47 if encoding != "deflate" else 15)
    else:
        raise TransportError(f"unsupported Content-Encoding {encoding[:40]!r}")
    if inflate is None:
        return await _read_identity(stream, cap)
    out = bytearray()
    sent = 0
    try:
        while chunk := await stream.read(_CHUNK):
            sent += len(chunk)
            if sent > cap:
                raise TransportError(f"reply over {cap} bytes")
            room = cap + 1 - len(out)
            out += inflate.decompress(chunk, room)
            if len(out) > cap or inflate.unconsumed_tail:
                raise TransportError(f"reply over {cap} bytes decompressed")
        out += inflate.flush(cap + 1 - len(out))
        if len(out) > cap:
            raise TransportError(f"reply over {cap} bytes decompressed")
    except zlib.error:
        raise TransportError(f"broken {encoding} body") from None
    return bytes(out)


async def _read_identity(stream: aiohttp.StreamReader, cap: int) -> bytes:
    """An identity body, at most ``cap`` bytes: read in chunks, kept as they came (one
    chunk, the usual reply, is returned as it is: no copy) and joined once (#50)."""
    chunks: list[bytes] = []
    sent = 0
    while chunk := await stream.read(_CHUNK):
        sent += len(chunk)
        if sent > cap:
            raise TransportError(f"reply over {cap} bytes")
        chunks.append(chunk)
        if stream.at_eof():  # the whole body is in: no further read to learn it
            break
    return b"".join(chunks)


Handler = Callable[[Request], Awaitable[Response] | Response]


class MockTransport:
    """Answers each request with ``handler(request)`` (sync or async); records them all."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[Request] = []
        self.closed = False

    async def send(self, request: Request) -> Response:
        self.requests.append(request)
        out = self.handler(request)
        return out if isinstance(out, Response) else await out

    async def close(self) -> None:
        self.closed = True
