"""How an endpoint's requests reach the server: the seam the client tests use.

:class:`AiohttpTransport` is the real one (one shared aiohttp session per endpoint).
:class:`MockTransport` answers in memory from a handler, as httpx's ``MockTransport`` does, so
client tests need no server; the loopback tests that exercise real sockets stay.

A transport returns every HTTP status as a :class:`Response`; it raises
:class:`TransportError` for a connection that failed or dropped and :class:`TimeoutError` for
a request that ran past its timeout (both retried by the client).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import aiohttp

__all__ = [
    "AiohttpTransport",
    "MockTransport",
    "Request",
    "Response",
    "Transport",
    "TransportError",
]


class TransportError(Exception):
    """The connection failed or dropped before a whole response arrived."""


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)


class Transport(Protocol):
    async def send(self, request: Request) -> Response: ...

    async def close(self) -> None: ...


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
                skip_auto_headers=("User-Agent",),
            )
        return self._session

    async def send(self, request: Request) -> Response:
        session = self._open()
        try:
            async with session.request(
                request.method, request.url, data=request.body or None, headers=request.headers
            ) as resp:
                return Response(resp.status, await resp.read(), dict(resp.headers))
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as e:
            raise TransportError(f"connection error: {type(e).__name__}") from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


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
