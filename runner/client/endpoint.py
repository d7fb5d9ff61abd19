"""The endpoint client: one shared aiohttp session per endpoint, retries, budgets, timing.

Retries (Appendix B.4: request timeout 900 s with up to six attempts): 429, 5xx, dropped
connections, malformed bodies and timeouts are retried with exponential backoff and full
jitter (a 429's Retry-After is honoured); other 4xx fail the call. Budgets: a thinking reply
with empty content is retried with the reply budget doubled, up to 12,000; a context-length
error halves it, floor 512. ``reasoning_content`` is kept apart from the visible reply.

Hostile replies (docs/security.md): a body is shape-checked once (:func:`runner.client.wire.
read_chat`) and a malformed one is retried like a 5xx; a 429's Retry-After is capped at the
backoff maximum; a redirect is not followed (a client error naming the location). Non-replies
are neither an agent's omission nor an infrastructure error: ``finish_reason:
"content_filter"`` ends the call at once (termination ``content_filter``: the same prompt is
filtered again), an empty reply is retried and, empty on every attempt, ends it as
``empty_reply``; both are counted in the cell line's ``no_reply`` column.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypeVar

import orjson

from protocol.records import CallRecord, Role, Termination
from runner.client.affinity import EPISODE, ReplicaChooser, Routing
from runner.client.body import Transcript
from runner.client.call_stats import CallStats
from runner.client.calls import (
    CallFailed,
    CallState,
    ChatEndpoint,
    Reply,
    read_embeddings,
    reply_of,
)
from runner.client.limiter import Limiter, yield_to_waiter
from runner.client.transport import AiohttpTransport, Request, Transport, TransportError
from runner.client.wire import (
    ChatReply,
    ContextOverflow,
    Fatal,
    Retry,
    chat_body,
    check_status,
    decode_chat,
    reply_cap,
)
from runner.redact import REDACTED, add_secret, redact

__all__ = [
    "BUDGET_CEILING",
    "BUDGET_FLOOR",
    "CallFailed",
    "ChatEndpoint",
    "Endpoint",
    "Reply",
]

BUDGET_CEILING = 12_000
BUDGET_FLOOR = 512
_T = TypeVar("_T")


class Endpoint:
    """One endpoint (a list of replica base URLs sharing one limiter and one transport)."""

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
        transport: Transport | None = None,
        routing: Routing = "affinity",
        replica_slots: int = 0,
    ) -> None:
        if not base_urls:
            raise ValueError("an endpoint needs at least one base URL")
        self.name = name
        self.urls = [u.rstrip("/") + "/chat/completions" for u in base_urls]
        self.base_urls = [u.rstrip("/") for u in base_urls]
        self._in_flight = [0] * len(self.urls)
        self._one = len(self.urls) == 1  # one replica: no choice to make per request
        # Saturation of one replica (runner.client.affinity): its share of the limit unless given.
        slots = replica_slots or -(-max_in_flight // len(self.urls))
        self.chooser = ReplicaChooser(routing=routing, slots=slots)
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
            add_secret(api_key)  # redacted wherever text is stored or printed (#47)
        self._given = transport
        self._transport: Transport | None = transport
        self.requests = 0
        self.completion_tokens = 0
        self.prompt_tokens = 0
        self.stats = CallStats(endpoint=name)  # counters and the breaker (runner.client.call_stats)
        self.cached_tokens = 0
        # the preflight's check that a server answers: a one-token reply may be empty
        self.allow_no_reply = False
        self.cache_reports = 0  # replies whose usage reported cached tokens

    async def __aenter__(self) -> Endpoint:
        self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def open(self) -> Transport:
        if self._transport is None:
            self._transport = AiohttpTransport(
                limit=self.limiter.max_limit + 8, timeout_s=self.timeout_s
            )
        return self._transport

    async def close(self) -> None:
        if self._transport is not None:
            await self._transport.close()
            if self._given is None:  # an owned transport opens afresh on the next call
                self._transport = None

    def _pick(self, affinity: str | None) -> int:
        return 0 if self._one else self.chooser.pick(self._in_flight, affinity)

    async def get(self, path: str, *, root: bool = False) -> tuple[int, bytes]:
        """A plain GET on the first replica (``/models``, ``/health``; ``root``: at the
        server's root past a trailing ``/v1``, llama.cpp's ``/slots``), with the endpoint's
        key, its reply bounded by the transport's default cap."""
        base = self.base_urls[0]
        url = (base.removesuffix("/v1") if root else base) + path
        auth = {k: v for k, v in self._headers.items() if k == "Authorization"}
        resp = await self.open().send(Request("GET", url, headers=auth))
        return resp.status, resp.body

    async def chat(
        self,
        model: str,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int,
        role: Role = "agent",
        thinking: bool = False,
        extra: Mapping[str, object] | None = None,
        temperature: float = 0.0,
        affinity: str | None = None,
        headers: Mapping[str, str] | None = None,
        transcript: Transcript | None = None,
    ) -> Reply:
        """One chat completion with retries; raises :class:`CallFailed`. ``affinity``: the
        episode's key (:func:`runner.client.affinity.affinity_key`; default: the running one).
        With ``self.allow_no_reply`` an empty or filtered reply is returned, not retried.
        ``headers``: sent with this call beside the endpoint's own (the agent's draw key).
        ``transcript``: the conversation's kept encoding, the body built from it (#50)."""
        # the episode's key is read only where there are replicas to choose among (#50)
        key = affinity if affinity or self._one else EPISODE.get()
        call = CallState(budget=max_tokens, affinity=key)
        sent = {**self._headers, **headers} if headers else self._headers
        # The retry loop of :meth:`_retried`, inlined for chat (#50): one coroutine per
        # attempt (:meth:`_chat_attempt`), no closures; a failure, the end of the attempts
        # and the breaker go through the same helpers as every other call's.
        while call.attempt < self.attempts:
            call.attempt += 1
            try:
                got = await self._chat_attempt(
                    model, messages, temperature, extra, call, sent, transcript
                )
            except (Retry, ContextOverflow, Fatal) as failure:
                await self._failed(failure, call)
                continue
            self.limiter.success()
            self.stats.succeeded()
            if self.allow_no_reply:  # a check that the server answers (the preflight)
                break
            if got.finish_reason == "content_filter":
                self.stats.call_failed()
                raise CallFailed(
                    "content_filter",
                    f"{self.name}: the server's content filter stopped the reply",
                    call.attempt,
                )
            if got.content.strip():
                break
            if thinking and call.budget < BUDGET_CEILING:
                call.last = "empty content on a thinking reply"
                call.budget = min(BUDGET_CEILING, call.budget * 2)
                continue
            call.last, call.empty = "empty reply", True
            await self._backoff(call, None)
        else:
            raise self._exhausted(call, "")
        if got.model != model and (warning := self.stats.answered_by(model, got.model)):
            print(warning, file=sys.stderr)  # once per endpoint; the count is in its stats
        return self._reply(got, call, role)

    async def _chat_attempt(
        self,
        model: str,
        messages: Sequence[Mapping[str, str]],
        temperature: float,
        extra: Mapping[str, object] | None,
        call: CallState,
        sent: Mapping[str, str],
        transcript: Transcript | None,
    ) -> ChatReply:
        """One chat request under a limiter slot (as :meth:`_attempt`, in one coroutine: body,
        byte cap, status check, typed decode); the slot goes back whatever happens."""
        encode = chat_body if transcript is None else transcript.body
        body = encode(model, messages, temperature, call.budget, extra)
        cap = reply_cap(call.budget)
        transport = self._transport or self.open()
        t1 = time.perf_counter()
        if not self.limiter.try_acquire():  # a free slot: no wait to time (#50)
            await self.limiter.acquire()
            t0, t1 = t1, time.perf_counter()
            call.waited += t1 - t0
        idx = 0 if self._one else self._pick(call.affinity)
        self._in_flight[idx] += 1
        try:
            try:
                resp = await transport.send(Request("POST", self.urls[idx], body, sent, cap))
            except TransportError as e:
                raise Retry(str(e)) from None
            except TimeoutError:
                raise Retry("request timed out") from None
            if resp.status >= 300:  # check_status passes every 1xx and 2xx
                check_status(resp)
            got = decode_chat(resp.body)
        except Retry as r:
            if r.throttled:
                self.limiter.throttled()  # before the release: wake no one at the old limit
            raise
        finally:  # cancellation included
            call.server += time.perf_counter() - t1
            self._in_flight[idx] -= 1
            handed = self.limiter.release()
        if handed:  # the waiter's request out first, then this reply's processing (#50)
            await yield_to_waiter()
        return got

    async def _retried(
        self, call: CallState, once: Callable[[], Awaitable[_T]], what: str = ""
    ) -> _T:
        """The retry loop of the endpoint's other calls (embeddings; :meth:`chat` inlines it,
        #50): ``once`` is one attempt; a failure feeds the counters and the breaker
        (:meth:`_failed`) and is retried after its backoff, or raised as :class:`CallFailed`
        when retrying cannot fix it (:meth:`_exhausted`)."""
        while call.attempt < self.attempts:
            call.attempt += 1
            try:
                got = await once()
            except (Retry, ContextOverflow, Fatal) as failure:
                await self._failed(failure, call)
                continue
            self.limiter.success()
            self.stats.succeeded()
            return got
        raise self._exhausted(call, what)

    async def _failed(self, failure: Retry | ContextOverflow | Fatal, call: CallState) -> None:
        """A failed attempt: counted (it may trip the breaker), then raised as
        :class:`CallFailed` or waited out before the next attempt (:meth:`_after_failure`)."""
        if not isinstance(failure, ContextOverflow):  # may trip the breaker
            self.stats.failure(self._redact(str(failure)), retry=isinstance(failure, Retry))
        call.empty = False
        await self._after_failure(failure, call)

    def _exhausted(self, call: CallState, what: str) -> CallFailed:
        """The failure of a call whose every attempt failed (or came back empty)."""
        kind: Termination = "timeout" if "timed out" in call.last else "endpoint_error"
        if call.empty:
            kind = "empty_reply"
        self.stats.call_failed()
        last = self._redact(call.last)
        return CallFailed(
            kind, f"{self.name}: {what}{last} (after {call.attempt} attempts)", call.attempt
        )

    async def _attempt(
        self,
        body: bytes,
        call: CallState,
        post: Callable[[int, bytes], Awaitable[_T]],
    ) -> _T:
        """One request (a chat completion, or ``post``'s) under a limiter slot; the slot goes
        back whatever happens."""
        t0 = time.perf_counter()
        await self.limiter.acquire()
        t1 = time.perf_counter()
        call.waited += t1 - t0
        idx = self._pick(call.affinity)
        self._in_flight[idx] += 1
        try:
            return await post(idx, body)
        except Retry as r:
            if r.throttled:
                self.limiter.throttled()  # before the release: wake no one at the old limit
            raise
        finally:  # cancellation included
            call.server += time.perf_counter() - t1
            self._in_flight[idx] -= 1
            self.limiter.release()

    async def _after_failure(self, failure: Exception, call: CallState) -> None:
        """Raise :class:`CallFailed` for a failure retrying cannot fix; otherwise adjust the
        budget (context overflow) or wait out the backoff (transient) before the retry."""
        if isinstance(failure, Fatal):
            # A server may echo the API key in its error message ("Incorrect API key
            # provided: ..."); it must reach no log and no screen.
            raise CallFailed("client_error", self._redact(str(failure)), call.attempt) from None
        call.last = str(failure)
        if isinstance(failure, ContextOverflow):
            if call.budget <= BUDGET_FLOOR:
                raise CallFailed(
                    "context_overflow", self._redact(call.last), call.attempt
                ) from None
            call.budget = max(BUDGET_FLOOR, call.budget // 2)
            return
        await self._backoff(call, failure.delay if isinstance(failure, Retry) else None)

    async def _backoff(self, call: CallState, delay: float | None) -> None:
        """Wait before the next attempt: the server's Retry-After (capped at the backoff
        maximum: a hostile or broken header cannot hang the run) or exponential backoff with
        full jitter; no wait after the last attempt."""
        if delay is None:
            cap = min(self.backoff_max_s, self.backoff_s * 2 ** (call.attempt - 1))
            delay = random.uniform(0, cap)
        if call.attempt < self.attempts:
            await asyncio.sleep(min(delay, self.backoff_max_s))

    def _reply(self, got: ChatReply, call: CallState, role: Role) -> Reply:
        """The reply of a successful response, with its call record; counts its tokens."""
        self.requests += 1
        self.prompt_tokens += got.prompt_tokens
        self.completion_tokens += got.completion_tokens
        if got.cached_tokens is not None:
            self.cached_tokens += got.cached_tokens
            self.cache_reports += 1
        return reply_of(got, call, role)

    async def embed(
        self, model: str, inputs: Sequence[str]
    ) -> tuple[list[list[float]], CallRecord]:
        """``POST /embeddings`` for a batch of texts, through the same retry loop as chat
        calls (its failures feed the breaker too): the vectors in input order and the call's
        record (role ``embedding``); raises :class:`CallFailed`."""
        self.open()
        call = CallState(budget=0)
        body = orjson.dumps({"model": model, "input": list(inputs)})

        async def once() -> tuple[list[list[float]], int]:
            return await self._attempt(body, call, self._post_embeddings)

        vectors, tokens = await self._retried(call, once, what="embeddings: ")
        self.requests += 1
        self.prompt_tokens += tokens
        record = CallRecord(
            role="embedding",
            prompt_tokens=tokens,
            wait_s=round(call.waited, 6),
            server_s=round(call.server, 6),
            attempts=call.attempt,
        )
        return vectors, record

    async def _post_embeddings(self, idx: int, body: bytes) -> tuple[list[list[float]], int]:
        url = self.base_urls[idx] + "/embeddings"
        try:
            resp = await self.open().send(Request("POST", url, body, self._headers))
        except TransportError as e:
            raise Retry(str(e)) from None
        except TimeoutError:
            raise Retry("request timed out") from None
        check_status(resp)
        return read_embeddings(resp.body)

    def _redact(self, text: str) -> str:
        key = self._headers.get("Authorization", "").removeprefix("Bearer ").strip()
        text = text.replace(key, REDACTED) if key else text  # a short key too, in an error
        return redact(text)  # its lowercase, any Bearer value, every registered key
