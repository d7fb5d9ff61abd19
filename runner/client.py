"""The endpoint client: one shared aiohttp session per endpoint, retries, budgets, timing.

Retries (Appendix B.4: request timeout 900 s with up to six attempts): 429, 5xx, dropped
connections, malformed bodies and timeouts are retried with exponential backoff and full
jitter (a 429's Retry-After is honoured); other 4xx fail the call. Budgets: a thinking reply
with empty content is retried with the reply budget doubled, up to 12,000; a context-length
error halves it, floor 512. ``reasoning_content`` is kept apart from the visible reply.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import aiohttp
import msgspec
import orjson

from protocol.records import CallRecord
from runner.limiter import Limiter

__all__ = [
    "BUDGET_CEILING",
    "BUDGET_FLOOR",
    "CallFailed",
    "Endpoint",
    "Reply",
]

BUDGET_CEILING = 12_000
BUDGET_FLOOR = 512
Role = Literal["agent", "matcher", "compiler", "memory"]


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    content: str
    reasoning: str
    call: CallRecord


class CallFailed(Exception):
    """A call that failed for infrastructure reasons; ``termination`` names the reason."""

    def __init__(self, termination: str, message: str, attempts: int) -> None:
        super().__init__(message)
        self.termination = termination
        self.attempts = attempts


class _Retry(Exception):
    def __init__(self, message: str, delay: float | None = None, throttled: bool = False) -> None:
        super().__init__(message)
        self.delay = delay
        self.throttled = throttled


_CONTEXT_WORDS = ("context length", "context_length", "context window", "maximum context")


def _is_context_error(status: int, text: str) -> bool:
    """A prompt too long for the model, in vLLM's, SGLang's or llama.cpp's wording."""
    low = text.lower()
    return status == 400 and any(w in low for w in _CONTEXT_WORDS)


class Endpoint:
    """One endpoint (a list of replica base URLs sharing one limiter and one session)."""

    def __init__(
        self,
        base_urls: Sequence[str],
        *,
        api_key: str | None = None,
        max_in_flight: int = 64,
        adaptive: bool = False,
        start_in_flight: int | None = None,
        timeout_s: float = 900.0,
        attempts: int = 6,
        backoff_s: float = 1.0,
        backoff_max_s: float = 60.0,
        name: str = "endpoint",
    ) -> None:
        if not base_urls:
            raise ValueError("an endpoint needs at least one base URL")
        self.name = name
        self.urls = [u.rstrip("/") + "/chat/completions" for u in base_urls]
        self.base_urls = [u.rstrip("/") for u in base_urls]
        self._in_flight = [0] * len(self.urls)
        self.limiter = Limiter(
            start_in_flight or max_in_flight if adaptive else max_in_flight,
            max_limit=max_in_flight,
            adaptive=adaptive,
        )
        self.timeout_s = timeout_s
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._session: aiohttp.ClientSession | None = None
        self.requests = 0
        self.completion_tokens = 0
        self.prompt_tokens = 0

    async def __aenter__(self) -> Endpoint:
        self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def open(self) -> None:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=self.limiter.max_limit + 8, limit_per_host=0, ttl_dns_cache=300
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=self.timeout_s),
                skip_auto_headers=("User-Agent",),
            )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _pick(self) -> int:
        if len(self.urls) == 1:
            return 0
        return min(range(len(self.urls)), key=self._in_flight.__getitem__)

    async def get(self, path: str) -> tuple[int, bytes]:
        """A plain GET on the first replica (``/models``, ``/health``)."""
        self.open()
        assert self._session is not None
        async with self._session.get(self.base_urls[0] + path) as resp:
            return resp.status, await resp.read()

    async def chat(
        self,
        model: str,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int,
        role: Role = "agent",
        thinking: bool = False,
        extra: Mapping[str, Any] | None = None,
        temperature: float = 0.0,
    ) -> Reply:
        """One chat completion with retries; raises :class:`CallFailed`."""
        self.open()
        budget = max_tokens
        waited = server = 0.0
        attempt = 0
        last = ""
        while attempt < self.attempts:
            attempt += 1
            body: dict[str, Any] = {
                "model": model,
                "messages": messages,
                "temperature": temperature,
                "max_tokens": budget,
            }
            if extra:
                body.update(extra)
            t0 = time.perf_counter()
            await self.limiter.acquire()
            t1 = time.perf_counter()
            waited += t1 - t0
            idx = self._pick()
            self._in_flight[idx] += 1
            failure: Exception | None = None
            try:
                data = await self._post(idx, body)
            except _Retry as r:
                failure = r
                if r.throttled:
                    self.limiter.throttled()  # before the release: wake no one at the old limit
            except (_ContextOverflow, _Fatal) as e:
                failure = e
            finally:  # the slot goes back whatever happened, cancellation included
                server += time.perf_counter() - t1
                self._in_flight[idx] -= 1
                self.limiter.release()
            if isinstance(failure, _Fatal):
                # Reliability fix: a server may echo the API key in its error message
                # ("Incorrect API key provided: ..."); it must reach no log and no screen.
                raise CallFailed("client_error", self._redact(str(failure)), attempt) from None
            if isinstance(failure, _ContextOverflow):
                last = str(failure)
                if budget <= BUDGET_FLOOR:
                    raise CallFailed("context_overflow", last, attempt) from None
                budget = max(BUDGET_FLOOR, budget // 2)
                continue
            if isinstance(failure, _Retry):
                last = str(failure)
                delay = failure.delay
                if delay is None:
                    delay = random.uniform(
                        0, min(self.backoff_max_s, self.backoff_s * 2 ** (attempt - 1))
                    )
                if attempt < self.attempts:
                    await asyncio.sleep(delay)
                continue
            self.limiter.success()
            choice = data["choices"][0]
            message = choice.get("message") or {}
            content = message.get("content") or ""
            reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
            usage = data.get("usage") or {}
            pt, ct = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
            self.requests += 1
            self.prompt_tokens += pt
            self.completion_tokens += ct
            if thinking and not content.strip() and budget < BUDGET_CEILING:
                last = "empty content on a thinking reply"
                budget = min(BUDGET_CEILING, budget * 2)
                continue
            return Reply(
                content=content,
                reasoning=reasoning,
                call=CallRecord(
                    role=role,
                    prompt_tokens=pt,
                    completion_tokens=ct,
                    wait_s=round(waited, 6),
                    server_s=round(server, 6),
                    attempts=attempt,
                    finish_reason=choice.get("finish_reason"),
                    max_tokens=budget,
                ),
            )
        kind = "timeout" if "timed out" in last else "endpoint_error"
        raise CallFailed(kind, f"{self.name}: {last} (after {attempt} attempts)", attempt)

    async def embed(
        self, model: str, inputs: Sequence[str]
    ) -> tuple[list[list[float]], CallRecord]:
        """``POST /embeddings`` for a batch of texts, retried as chat calls are; the vectors in
        input order and the call's record (role ``embedding``)."""
        self.open()
        assert self._session is not None
        body = orjson.dumps({"model": model, "input": list(inputs)})
        waited = server = 0.0
        last = ""
        for attempt in range(1, self.attempts + 1):
            t0 = time.perf_counter()
            await self.limiter.acquire()
            t1 = time.perf_counter()
            waited += t1 - t0
            try:
                data = await self._post_embeddings(body)
            except _Retry as r:
                last = str(r)
                if r.throttled:
                    self.limiter.throttled()
                data = None
            finally:
                server += time.perf_counter() - t1
                self.limiter.release()
            if data is not None:
                rows = sorted(data["data"], key=lambda d: int(d.get("index", 0)))
                tokens = int((data.get("usage") or {}).get("prompt_tokens") or 0)
                self.requests += 1
                self.prompt_tokens += tokens
                call = CallRecord(
                    role="embedding",
                    prompt_tokens=tokens,
                    wait_s=round(waited, 6),
                    server_s=round(server, 6),
                    attempts=attempt,
                )
                return [list(map(float, d["embedding"])) for d in rows], call
            if attempt < self.attempts:
                await asyncio.sleep(
                    random.uniform(0, min(self.backoff_max_s, self.backoff_s * 2 ** (attempt - 1)))
                )
        raise CallFailed("endpoint_error", f"{self.name}: embeddings: {last}", self.attempts)

    async def _post_embeddings(self, body: bytes) -> dict[str, Any]:
        assert self._session is not None
        url = self.base_urls[self._pick()] + "/embeddings"
        try:
            async with self._session.post(url, data=body, headers=self._headers) as resp:
                raw = await resp.read()
                if resp.status == 429:
                    raise _Retry("429 Too Many Requests", throttled=True)
                if resp.status >= 500 or resp.status in (408, 409):
                    raise _Retry(f"HTTP {resp.status}")
                if resp.status >= 400:
                    text = raw.decode(errors="replace")[:300]
                    raise CallFailed("client_error", self._redact(_error_message(text)), 1)
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as e:
            raise _Retry(f"connection error: {type(e).__name__}") from None
        except TimeoutError:
            raise _Retry("request timed out") from None
        try:
            data = orjson.loads(raw)
            if not isinstance(data, dict) or not isinstance(data.get("data"), list):
                raise ValueError("no data")
        except (orjson.JSONDecodeError, ValueError):
            raise _Retry("malformed embeddings body") from None
        return data

    def _redact(self, text: str) -> str:
        key = self._headers.get("Authorization", "").removeprefix("Bearer ").strip()
        return text.replace(key, "[redacted]") if key else text

    async def _post(self, idx: int, body: dict[str, Any]) -> dict[str, Any]:
        assert self._session is not None
        try:
            async with self._session.post(
                self.urls[idx], data=orjson.dumps(body), headers=self._headers
            ) as resp:
                raw = await resp.read()
                status = resp.status
                if status == 429:
                    after = resp.headers.get("Retry-After")
                    delay = float(after) if after and after.replace(".", "", 1).isdigit() else None
                    raise _Retry("429 Too Many Requests", delay, throttled=True)
                if status >= 500 or status in (408, 409):
                    # Reliability fix: 408 / 409 (a proxy's timeout, a conflict) are transient;
                    # they are retried like 5xx, as the openai client does.
                    raise _Retry(f"HTTP {status}")
                if status >= 400:
                    text = raw.decode(errors="replace")[:300]
                    if _is_context_error(status, text):
                        raise _ContextOverflow(f"HTTP {status}: context length exceeded")
                    raise _Fatal(f"HTTP {status}: {_error_message(text)}")
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as e:
            raise _Retry(f"connection error: {type(e).__name__}") from None
        except TimeoutError:
            raise _Retry("request timed out") from None
        try:
            data = orjson.loads(raw)
            if not isinstance(data, dict):
                raise ValueError("not an object")
            choices = data.get("choices")
            # Reliability fix: a choice that is not an object used to crash the whole run.
            if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
                raise ValueError("no choices")
        except (orjson.JSONDecodeError, ValueError):
            raise _Retry("malformed response body") from None
        return data


class _ContextOverflow(Exception):
    pass


class _Fatal(Exception):
    pass


def _error_message(text: str) -> str:
    try:
        data = orjson.loads(text)
        msg = data.get("error", {}).get("message") if isinstance(data, dict) else None
        if isinstance(msg, str):
            return msg
    except orjson.JSONDecodeError:
        pass
    return text.strip().splitlines()[0] if text.strip() else "(empty body)"
