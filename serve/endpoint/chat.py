"""``POST /v1/chat/completions``: validate, count, maybe fault, answer, shape, wait, reply."""

from __future__ import annotations

import asyncio

import msgspec
from aiohttp import web

from protocol.draws import DRAW_HEADER, LINEAGE_HEADER, parse_draw, parse_lineage
from serve.agents import Answer, answer
from serve.endpoint import lineage
from serve.endpoint.bodies import completion_body, error_body
from serve.endpoint.conversation import Transcript, read_transcript
from serve.endpoint.models import BadModelParams, ModelNotFound, ModelSpec, parse_model
from serve.endpoint.parse import ChatRequest, RequestError, parse_chat
from serve.endpoint.server import SERVER, ServerState
from serve.endpoint.stream import stream_completion
from serve.endpoint.tokens import truncate
from serve.faults.rates import PREFLIGHT_HEADER, Fault, context_error, draw

__all__ = ["chat_completions", "error_response", "shape"]

_UNLIMITED = 1 << 30


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    return web.Response(
        status=status,
        body=error_body(status, message),
        content_type="application/json",
        headers=headers,
    )


def shape(ans: Answer, req: ChatRequest, fault: Fault | None) -> tuple[str, str | None, str, int]:
    """(content, reasoning, finish_reason, completion tokens) under ``max_tokens``: the
    reasoning spends the budget first, as a thinking model's does."""
    budget = req.max_tokens or _UNLIMITED
    reasoning: str | None = None
    used = 0
    if req.thinking:
        reasoning, used, cut = truncate(ans.reasoning, budget)
        if cut or fault == "empty_thinking":
            return "", reasoning, "length", used
    content, n, cut = truncate(ans.content, budget - used)
    return content, reasoning, "length" if cut else "stop", used + n


async def _early_fault(
    request: web.Request, fault: Fault, server: ServerState
) -> web.StreamResponse:
    faults = server.config.faults
    if fault == "429":
        retry = f"{faults.retry_after_s:g}"
        return error_response(429, "Rate limit exceeded; retry later.", {"Retry-After": retry})
    if fault == "500":
        return error_response(500, "Internal server error (injected).")
    if fault == "503":
        return error_response(503, "Service unavailable (injected).")
    transport = request.transport
    if transport is not None:
        transport.abort()
    raise asyncio.CancelledError  # the drop: no response at all


def _request(body: bytes) -> tuple[ChatRequest, ModelSpec]:
    req = parse_chat(body)
    spec = parse_model(req.model)
    if not spec.chat:
        raise RequestError(400, f"The model `{req.model}` serves embeddings only.")
    return req, spec


_Read = tuple[ChatRequest, ModelSpec, str | None, str | None]


async def _read(request: web.Request) -> _Read | web.Response:
    """The request, its model, its draw key and the perfect agent's lineage (None: it
    remembers nothing; drop_system applied), or the error response that refuses it."""
    try:
        req, spec = _request(await request.read())
    except RequestError as e:
        return error_response(e.status, e.message)
    except ModelNotFound as e:
        return error_response(404, str(e))
    except BadModelParams as e:
        return error_response(400, str(e))
    draw_key = request.headers.get(DRAW_HEADER)
    if draw_key is not None and parse_draw(draw_key) is None:
        return error_response(400, f"malformed {DRAW_HEADER} header (protocol.draws)")
    token = request.headers.get(LINEAGE_HEADER)
    if token is not None and parse_lineage(token) is None:
        return error_response(400, f"malformed {LINEAGE_HEADER} header (protocol.draws)")
    if spec.policy != "perfect" or not spec.params.get("memory", 1):
        token = None  # only the perfect agent remembers (docs/semantics.md)
    if spec.params.get("drop_system"):  # a chat template without a system role
        req = msgspec.structs.replace(
            req, messages=tuple(m for m in req.messages if m[0] != "system")
        )
    return req, spec, draw_key, token


def _recalled(
    req: ChatRequest, spec: ModelSpec, token: str | None, transcript: Transcript
) -> tuple[tuple[tuple[str, str], ...], Transcript]:
    """The messages as the agent reads them and their reading: with a lineage, what the
    perfect agent remembers of its earlier sessions carried in (serve.endpoint.lineage);
    the counted transcript (tokens, digest) is the request's own either way."""
    if token is None:
        return req.messages, transcript
    read = lineage.recall(token, spec.name, req.messages)
    return read, transcript if read is req.messages else read_transcript(read)


async def chat_completions(request: web.Request) -> web.StreamResponse:
    server = request.app[SERVER]
    n = server.arrival()
    loop = asyncio.get_running_loop()
    arrived = loop.time()  # the service's clock starts here, the answer's work inside it
    # One loop trip: every request read in the loop's same pass is stamped before any of them
    # is answered, not after the answers of those ahead of it (#50).
    await asyncio.sleep(0)
    read = await _read(request)
    if isinstance(read, web.Response):
        return read
    req, spec, draw_key, token = read
    transcript = read_transcript(req.messages)  # carried from the conversation's last request
    prompt_tokens = transcript.prompt_tokens
    too_long = context_error(server.config.max_model_len, prompt_tokens, req.max_tokens)
    if too_long is not None:
        return error_response(400, too_long)
    preflight = PREFLIGHT_HEADER in request.headers
    fault = None if preflight else draw(server.config.faults, server.config.seed, n)
    if fault is not None:
        server.count_fault(fault)
    if fault in ("429", "500", "503", "drop"):
        return await _early_fault(request, fault, server)
    if fault == "hang":
        await asyncio.sleep(server.config.faults.hang_s)
        arrived = loop.time()  # a hang's service starts after it, as before
    digest = transcript.digest if req.seed is None else req.digest()
    messages, seen = _recalled(req, spec, token, transcript)
    ans = answer(
        spec.policy,
        spec.params,
        messages,
        digest=digest,
        thinking=req.thinking,
        reading=seen.reading,
        # a sampling seed in the body (a probe's samples) draws dice of its own
        draw=draw_key if draw_key is None or req.seed is None else f"{draw_key}|{req.seed}",
    )
    if token is not None:
        lineage.remember(token, spec.name, messages, ans.content)
    return await _reply(request, n, req, ans, digest, fault, (prompt_tokens, arrived))


async def _reply(
    request: web.Request,
    n: int,
    req: ChatRequest,
    ans: Answer,
    digest: str,
    fault: Fault | None,
    counted: tuple[int, float],
) -> web.StreamResponse:
    """The answer shaped, the prefix cache admitted, a whole reply built (cut in half when the
    fault is ``malformed``), the latency waited from the arrival (``counted``: the prompt's
    tokens, the loop's time at arrival), the completion sent whole or streamed. Built before
    the wait, a whole reply's write is all that is left at its due time (#50)."""
    server = request.app[SERVER]
    prompt_tokens, arrived = counted
    content, reasoning, finish, completion_tokens = shape(ans, req, fault)
    cached = server.admit(req.messages, content, prompt_tokens)
    uncached = prompt_tokens - cached  # the prefill computed: a cached prefix costs nothing
    whole = None
    if not req.stream:
        body = completion_body(
            request_id=f"chatcmpl-{n:06x}{digest[:16]}",
            created=server.created,
            model=req.model,
            content=content,
            reasoning=reasoning,
            finish_reason=finish,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            fingerprint="synthetic" if ans.synthetic else "scripted",
            cached_tokens=cached if server.prefix is not None else None,
        )
        if fault == "malformed":
            body = body[: len(body) // 2]
        whole = web.Response(body=body, content_type="application/json")
    service = server.latency.service_time(n, uncached, completion_tokens)
    await server.latency.serve(service, arrived)
    server.completed += 1
    if whole is not None:
        return whole
    return await stream_completion(
        request,
        head={
            "id": f"chatcmpl-{n:06x}{digest[:16]}",
            "created": server.created,
            "model": req.model,
            "system_fingerprint": "synthetic" if ans.synthetic else "scripted",
        },
        content=content,
        reasoning=reasoning,
        finish_reason=finish,
        usage={
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if req.include_usage
        else None,
        malformed=fault == "malformed",
    )
