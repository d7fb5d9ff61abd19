"""The endpoint client over an in-memory transport (runner.client.transport.MockTransport): the
retry, budget, redaction and slot rules without a socket. The loopback tests in
tests/runner/client/test_client.py exercise the same rules over real HTTP."""

from __future__ import annotations

import orjson
import pytest

from runner.client.endpoint import CallFailed, Endpoint
from runner.client.transport import MockTransport, Request, Response, TransportError

MSG = [{"role": "user", "content": "hi"}]


def _ok(content: str = "fine", reasoning: str = "") -> Response:
    message = {"role": "assistant", "content": content}
    if reasoning:
        message["reasoning_content"] = reasoning
    body = {
        "choices": [{"message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2},
    }
    return Response(200, orjson.dumps(body))


def _scripted(*answers: Response | Exception) -> MockTransport:
    queue = list(answers)

    def handler(request: Request) -> Response:
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return MockTransport(handler)


def _endpoint(transport: MockTransport, **kw: object) -> Endpoint:
    return Endpoint(["http://mock/v1"], transport=transport, backoff_s=0.0, **kw)  # type: ignore[arg-type]


async def test_the_request_body_and_the_reply() -> None:
    t = _scripted(_ok("done", reasoning="thought"))
    ep = _endpoint(t)
    reply = await ep.chat("m", MSG, max_tokens=400, temperature=0.5, extra={"seed": 1})
    (req,) = t.requests
    assert req.method == "POST" and req.url == "http://mock/v1/chat/completions"
    body = orjson.loads(req.body)
    assert body == {"model": "m", "messages": MSG, "temperature": 0.5, "max_tokens": 400, "seed": 1}
    assert (reply.content, reply.reasoning) == ("done", "thought")
    assert (reply.call.prompt_tokens, reply.call.completion_tokens, reply.call.attempts) == (
        7,
        2,
        1,
    )
    assert ep.limiter.in_flight == 0


async def test_transient_failures_are_retried_and_counted() -> None:
    t = _scripted(
        TransportError("connection error: reset"),
        TimeoutError(),
        Response(500),
        Response(429, headers={"Retry-After": "0"}),
        Response(200, b"{not json"),
        _ok(),
    )
    reply = await _endpoint(t).chat("m", MSG, max_tokens=400)
    assert reply.call.attempts == 6 and len(t.requests) == 6


async def test_every_attempt_failing_names_the_last_failure() -> None:
    t = _scripted(*[TimeoutError()] * 3)
    with pytest.raises(CallFailed) as info:
        await _endpoint(t, attempts=3).chat("m", MSG, max_tokens=400)
    assert info.value.termination == "timeout" and info.value.attempts == 3


async def test_a_rejected_key_fails_at_once_redacted() -> None:
    secret = "sk-test-123456"
    body = orjson.dumps({"error": {"message": f"Incorrect API key provided: {secret}"}})
    t = _scripted(Response(401, body))
    with pytest.raises(CallFailed) as info:
        await _endpoint(t, api_key=secret).chat("m", MSG, max_tokens=400)
    assert info.value.termination == "client_error" and secret not in str(info.value)
    assert "[redacted]" in str(info.value) and len(t.requests) == 1
    assert t.requests[0].headers["Authorization"] == f"Bearer {secret}"


async def test_budgets_halve_on_overflow_and_double_on_empty_thinking() -> None:
    overflow = Response(400, b"maximum context length is 4096 tokens")
    t = _scripted(overflow, _ok(""), _ok("visible"))
    reply = await _endpoint(t).chat("m", MSG, max_tokens=2500, thinking=True)
    assert [orjson.loads(r.body)["max_tokens"] for r in t.requests] == [2500, 1250, 2500]
    assert reply.content == "visible" and reply.call.max_tokens == 2500


async def test_a_given_transport_is_kept_across_close() -> None:
    t = _scripted(_ok(), _ok())
    ep = _endpoint(t)
    await ep.chat("m", MSG, max_tokens=10)
    await ep.close()
    assert t.closed
    await ep.chat("m", MSG, max_tokens=10)  # still the same transport
    assert len(t.requests) == 2
